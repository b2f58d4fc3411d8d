package lifecycle

import (
	"context"

	"github.com/mergeguard/mergeguard/review"
)

// Unrecorded plays the store's roles for a review that keeps no record,
// the CLI's `review --pr --post`: no ledger and no learnings, a pull
// request never reviewed before (each review is full), a run whose post
// is claimed at once. Posting once per head is then the publisher's: it
// finds the review carrying the run's marker.
type Unrecorded struct{}

// Ledger is empty.
func (Unrecorded) Ledger(context.Context, string, int) ([]review.LedgerEntry, error) { return nil, nil }

// ApplyThread changes nothing.
func (Unrecorded) ApplyThread(context.Context, string, int, review.ThreadChange) (bool, error) {
	return false, nil
}

// DismissFinding dismisses nothing.
func (Unrecorded) DismissFinding(context.Context, string, int, string, string, string) (bool, error) {
	return false, nil
}

// RecordAgreement records nothing.
func (Unrecorded) RecordAgreement(context.Context, string, int, string, string) error { return nil }

// LastReview is none: the pull request was never reviewed.
func (Unrecorded) LastReview(context.Context, string, int, string) (review.LastReview, error) {
	return review.LastReview{}, nil
}

// Learnings are none.
func (Unrecorded) Learnings(context.Context, string, review.LearningStatus) ([]review.Learning, error) {
	return nil, nil
}

// ClaimPost claims at once.
func (Unrecorded) ClaimPost(context.Context) (bool, error) { return false, nil }

// SetHead records nothing.
func (Unrecorded) SetHead(context.Context, review.PullHead) error { return nil }

// SetCheck records nothing.
func (Unrecorded) SetCheck(context.Context, int64) error { return nil }
