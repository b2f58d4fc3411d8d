package lifecycle

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/task"
)

func TestFullReason(t *testing.T) {
	t.Parallel()
	done := review.LastReview{Found: true, Succeeded: true, KeptLedger: true, HeadSHA: "h1", BaseSHA: "b1"}
	with := func(f func(*review.LastReview)) review.LastReview { l := done; f(&l); return l }
	tests := map[string]struct {
		last  review.LastReview
		head  Head
		asked bool
		want  string
	}{
		"never reviewed":           {last: review.LastReview{}, head: Head{"h2", "b1"}, want: ReasonFirst},
		"never reviewed, asked":    {last: review.LastReview{}, head: Head{"h2", "b1"}, asked: true, want: ReasonFirst},
		"asked":                    {last: done, head: Head{"h2", "b1"}, asked: true, want: ReasonAsked},
		"last failed":              {last: with(func(l *review.LastReview) { l.Succeeded = false }), head: Head{"h2", "b1"}, want: ReasonFailed},
		"last kept no ledger":      {last: with(func(l *review.LastReview) { l.KeptLedger = false }), head: Head{"h2", "b1"}, want: ReasonNoLedger},
		"same head":                {last: done, head: Head{"h1", "b1"}, want: ReasonSameHead},
		"base moved":               {last: done, head: Head{"h2", "b2"}, want: ReasonBaseMoved},
		"new commits are compared": {last: done, head: Head{"h2", "b1"}, want: ""},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if got := FullReason(tc.last, tc.head, tc.asked); got != tc.want {
				t.Errorf("FullReason = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestCompared(t *testing.T) {
	t.Parallel()
	last := review.LastReview{Found: true, Succeeded: true, KeptLedger: true, HeadSHA: "h1", BaseSHA: "b1", ConfigDigest: "d"}
	tests := map[string]struct {
		cmp        review.Comparison
		err        error
		wantSince  *task.Since
		wantReason string
	}{
		"ahead": {cmp: review.Comparison{Status: review.CompareAhead, AheadBy: 2, Diff: "diff"},
			wantSince: &task.Since{SHA: "h1", Commits: 2, Diff: "diff", ConfigDigest: "d"}},
		"identical":       {cmp: review.Comparison{Status: review.CompareIdentical}, wantReason: ReasonSameHead},
		"diverged":        {cmp: review.Comparison{Status: review.CompareDiverged}, wantReason: ReasonRewritten},
		"behind":          {cmp: review.Comparison{Status: review.CompareBehind}, wantReason: ReasonRewritten},
		"old head gone":   {err: review.ErrNotFound, wantReason: ReasonRewritten},
		"compare refused": {err: errors.New("422"), wantReason: ReasonCompareErr},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			since, reason := Compared(last, tc.cmp, tc.err)
			if diff := cmp.Diff(tc.wantSince, since); diff != "" {
				t.Errorf("since (-want +got):\n%s", diff)
			}
			if reason != tc.wantReason {
				t.Errorf("reason = %q, want %q", reason, tc.wantReason)
			}
		})
	}
}
