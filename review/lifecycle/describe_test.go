package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mergeguard/mergeguard/review"
)

// TestDescribeFromReview: a describe run of a head reviewed before writes
// that review's walkthrough and reviews nothing; without such a review, or
// when the head moved, the run reviews; a failure to write is retried
// while it may pass, else told on the pull request, GitHub's refusal of a
// description too long in its own words.
func TestDescribeFromReview(t *testing.T) {
	t.Parallel()
	w := &review.Walkthrough{Summary: "Adds users."}
	prev := review.ReviewedHead{RunID: "r0", HeadSHA: "h1", Verdict: &review.Verdict{Walkthrough: w}}
	at := fakeGitHub{HeadValue: review.PullHead{SHA: "h1"}, DescribeValue: true}
	broken := errors.New("broken")
	long := errors.New("the pull request's description is too long to add MergeGuard's walkthrough to (GitHub takes at most 65536 characters)")
	retry := func(err error) bool { return errors.Is(err, broken) }
	with := func(f func(*fakeGitHub)) fakeGitHub { g := at; f(&g); return g }
	tests := map[string]struct {
		head      string
		gh        fakeGitHub
		st        fakeStore
		want      Described
		wantErr   error
		described []review.Description
	}{
		"queued without a head: reviews": {gh: at, st: fakeStore{ReviewOfHeadValue: prev}},
		"never reviewed: reviews": {head: "h1", gh: at,
			st: fakeStore{ReviewOfHeadError: fmt.Errorf("review of head: %w", review.ErrNotFound)}},
		"the review has no walkthrough: reviews": {head: "h1", gh: at,
			st: fakeStore{ReviewOfHeadValue: review.ReviewedHead{RunID: "r0", HeadSHA: "h1", Verdict: &review.Verdict{}}}},
		"the head moved: reviews (and finds it moved)": {head: "h1", st: fakeStore{ReviewOfHeadValue: prev},
			gh: with(func(g *fakeGitHub) { g.HeadValue.SHA = "h2" })},
		"the store fails: tried again": {head: "h1", gh: at, st: fakeStore{ReviewOfHeadError: broken}, wantErr: broken},
		"the head cannot be read: tried again": {head: "h1", st: fakeStore{ReviewOfHeadValue: prev},
			gh: with(func(g *fakeGitHub) { g.HeadError = broken }), wantErr: broken},
		"written from the review: skipped, nothing reviewed": {head: "h1", gh: at, st: fakeStore{ReviewOfHeadValue: prev},
			want:      Described{Done: true, Skipped: "described the pull request from the walkthrough of run r0, which reviewed this head; nothing reviewed again"},
			described: []review.Description{{Walkthrough: w, HeadSHA: "h1", DetailsURL: "https://mg.example/reviews/r0"}}},
		"a failure that may pass: tried again": {head: "h1", st: fakeStore{ReviewOfHeadValue: prev},
			gh: with(func(g *fakeGitHub) { g.DescribeError = broken }), want: Described{Done: true}, wantErr: broken},
		"too long: the author is told GitHub's reason": {head: "h1", st: fakeStore{ReviewOfHeadValue: prev},
			gh: with(func(g *fakeGitHub) { g.DescribeError = review.DescriptionTooLongError{Err: long} }),
			want: Described{Done: true, Problem: review.DescriptionTooLongError{Err: long}, Skipped: "the description could not be written: " + long.Error(),
				Notice: "MergeGuard could not write the walkthrough into this pull request's description: " + long.Error() + ". Comment `/mergeguard describe` to try again."}},
		"another failure for good: the logs have the cause": {head: "h1", st: fakeStore{ReviewOfHeadValue: prev},
			gh: with(func(g *fakeGitHub) { g.DescribeError = errors.New("gone") }),
			want: Described{Done: true, Problem: errors.New("gone"), Skipped: "the description could not be written: gone",
				Notice: "MergeGuard could not write the walkthrough into this pull request's description: the cause is in MergeGuard's logs. Comment `/mergeguard describe` to try again."}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			uc := Describing{GitHub: &tt.gh, Reviews: &tt.st, PublicURL: "https://mg.example/", Retry: retry}
			got, err := uc.FromReview(context.Background(), PullRequest{Repository: "o/r", Number: 7}, tt.head)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("FromReview error = %v, want %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got, cmp.Comparer(sameError)); diff != "" {
				t.Errorf("described (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.described, tt.gh.Described); diff != "" {
				t.Errorf("descriptions written (-want +got):\n%s", diff)
			}
		})
	}
}

// TestNotDescribedErrorReason: a describe retried to the end tells the pull
// request why, as a describe that gave up at once does.
func TestNotDescribedErrorReason(t *testing.T) {
	t.Parallel()
	long := errors.New("the description is too long")
	for _, tt := range []struct {
		err  NotDescribedError
		want string
	}{
		{NotDescribedError{review.DescriptionTooLongError{Err: long}}, "the description is too long."},
		{NotDescribedError{fmt.Errorf("describe: %w", review.ErrDescriptionTooLong)}, "description too long."},
		{NotDescribedError{errors.New("502")}, "the cause is in MergeGuard's logs."},
	} {
		if got := tt.err.Reason(); got != tt.want {
			t.Errorf("Reason of %v = %q, want %q", tt.err, got, tt.want)
		}
	}
}

// TestDescribeAfterReview: the walkthrough of a review just posted is
// written; a failure, or no walkthrough, is told on the pull request
// beside the posted review.
func TestDescribeAfterReview(t *testing.T) {
	t.Parallel()
	w := &review.Walkthrough{Summary: "Adds users."}
	tests := map[string]struct {
		w         *review.Walkthrough
		gh        fakeGitHub
		notice    string
		problem   bool
		described []review.Description
	}{
		"written":        {w: w, described: []review.Description{{Walkthrough: w, HeadSHA: "h1", DetailsURL: "https://mg.example/reviews/r1"}}},
		"no walkthrough": {notice: "MergeGuard reviewed this pull request but wrote no description: the review has no walkthrough."},
		"too long": {w: w, gh: fakeGitHub{DescribeError: review.DescriptionTooLongError{Err: errors.New("too long for GitHub")}}, problem: true,
			notice: "MergeGuard posted its review but could not write the walkthrough into this pull request's description: too long for GitHub. Comment `/mergeguard describe` to try again."},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			uc := Describing{GitHub: &tt.gh, PublicURL: "https://mg.example"}
			notice, problem := uc.AfterReview(context.Background(), PullRequest{Repository: "o/r", Number: 7}, "r1", "h1", tt.w)
			if notice != tt.notice || (problem != nil) != tt.problem {
				t.Errorf("AfterReview = %q, %v; want %q, a problem %v", notice, problem, tt.notice, tt.problem)
			}
			if diff := cmp.Diff(tt.described, tt.gh.Described); diff != "" {
				t.Errorf("descriptions written (-want +got):\n%s", diff)
			}
		})
	}
}

// sameError compares errors by their text.
func sameError(a, b error) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Error() == b.Error()
}
