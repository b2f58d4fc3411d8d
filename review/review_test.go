package review_test

import (
	"testing"

	"github.com/mergeguard/mergeguard/review"
)

func TestVerificationStatusRank(t *testing.T) {
	// Best first; false positives and unknown statuses rank last, together.
	order := []review.VerificationStatus{review.Verified, review.Likely, review.Unverified, review.FalsePositive}
	for i := 1; i < len(order); i++ {
		if a, b := order[i-1].Rank(), order[i].Rank(); a <= b {
			t.Errorf("%s ranks %d, not above %s (%d)", order[i-1], a, order[i], b)
		}
	}
	if got, want := review.VerificationStatus("maybe").Rank(), review.FalsePositive.Rank(); got != want {
		t.Errorf("unknown status ranks %d, want %d as false_positive", got, want)
	}
}
