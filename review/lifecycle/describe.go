package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/mergeguard/mergeguard/review"
)

// This file is /mergeguard describe (docs/architecture.md, The life of a
// pull request): a pull request run with review.Options.Describe writes
// the walkthrough of a review of its head into the pull request's
// description. When a review of that head already succeeded, its
// walkthrough is written at once and nothing is reviewed (the run ends
// skipped, with no check run of its own: it reviewed nothing). Otherwise
// the run reviews as any requested run does and, once its review is
// posted, writes the walkthrough of that review.

// Describer writes into the pull request's description on GitHub.
type Describer interface {
	Head(ctx context.Context, number int) (review.PullHead, error)
	// Describe writes d between MergeGuard's markers; changed is false
	// when the description already said it. An error GitHub would refuse
	// as too long wraps ErrDescriptionTooLong.
	Describe(ctx context.Context, number int, d review.Description) (changed bool, err error)
}

// Reviews are the pull request's recorded reviews.
type Reviews interface {
	// ReviewOfHead is the last run that reviewed head and succeeded:
	// review.ErrNotFound when there is none.
	ReviewOfHead(ctx context.Context, repo string, number int, head string) (review.ReviewedHead, error)
}

// Describing is the use case of /mergeguard describe, with the roles it
// needs.
type Describing struct {
	GitHub  Describer
	Reviews Reviews
	// PublicURL is where people reach MergeGuard's web UI; "" leaves the
	// link to the review out.
	PublicURL string
	// Retry reports whether writing the description may succeed when the
	// run is tried again (the failure is transient and attempts remain).
	Retry func(error) bool
}

// Described is how a describe from an earlier review ended.
type Described struct {
	// Done is false when there is no succeeded review of the head, or the
	// pull request's head moved since the run was queued: the run then
	// reviews (and finds the head moved) as any run does.
	Done bool
	// Skipped is why the run ends skipped, Notice what the pull request
	// is told ("" for nothing).
	Skipped, Notice string
	// Problem is the failure to write the description the pull request
	// is told about; nil when it was written.
	Problem error
}

// NoReviewToDescribe is told on the pull request when a describe run ended
// skipped without a review to take a walkthrough from.
const NoReviewToDescribe = "MergeGuard wrote no description: it did not review this head."

// FromReview writes the description of a describe run queued for head
// from the succeeded review of that head. An error is a failure worth
// retrying: the run is tried again. Any other failure ends the run skipped
// (a failed run would count as the pull request's last review, and make
// the next one full) and is told on the pull request.
func (d Describing) FromReview(ctx context.Context, pr PullRequest, head string) (Described, error) {
	if head == "" {
		return Described{}, nil
	}
	prev, err := d.Reviews.ReviewOfHead(ctx, pr.Repository, pr.Number, head)
	switch {
	case errors.Is(err, review.ErrNotFound):
		return Described{}, nil
	case err != nil:
		return Described{}, err
	case prev.Verdict == nil || prev.Verdict.Walkthrough == nil:
		return Described{}, nil
	}
	now, err := d.GitHub.Head(ctx, pr.Number)
	if err != nil {
		return Described{}, fmt.Errorf("read the head before describing: %w", err)
	}
	if now.SHA != head {
		return Described{}, nil
	}
	desc := review.Description{Walkthrough: prev.Verdict.Walkthrough, HeadSHA: prev.HeadSHA, DetailsURL: RunPage(d.PublicURL, prev.RunID)}
	if _, err := d.GitHub.Describe(ctx, pr.Number, desc); err != nil {
		if d.Retry != nil && d.Retry(err) {
			return Described{Done: true}, NotDescribedError{err}
		}
		return Described{Done: true, Problem: err, Skipped: "the description could not be written: " + err.Error(),
			Notice: "MergeGuard could not write the walkthrough into this pull request's description: " + notWritten(err) +
				" Comment `/mergeguard describe` to try again."}, nil
	}
	return Described{Done: true, Skipped: fmt.Sprintf("described the pull request from the walkthrough of run %s, which reviewed this head; nothing reviewed again", prev.RunID)}, nil
}

// AfterReview writes the walkthrough w of the review run runID just
// posted of head. The review is posted and recorded whatever happens
// here, so a failure is told on the pull request (notice) rather than
// failing the run; problem is that failure.
func (d Describing) AfterReview(ctx context.Context, pr PullRequest, runID, head string, w *review.Walkthrough) (notice string, problem error) {
	if w == nil {
		return "MergeGuard reviewed this pull request but wrote no description: the review has no walkthrough.", nil
	}
	desc := review.Description{Walkthrough: w, HeadSHA: head, DetailsURL: RunPage(d.PublicURL, runID)}
	if _, err := d.GitHub.Describe(ctx, pr.Number, desc); err != nil {
		return "MergeGuard posted its review but could not write the walkthrough into this pull request's description: " +
			notWritten(err) + " Comment `/mergeguard describe` to try again.", fmt.Errorf("review posted; the description was not written: %w", err)
	}
	return "", nil
}

// NotDescribedError is a description that could not be written, returned
// for the run to be tried again.
type NotDescribedError struct{ Err error }

func (e NotDescribedError) Error() string { return "write the description: " + e.Err.Error() }
func (e NotDescribedError) Unwrap() error { return e.Err }

// Reason is what the pull request is told about the description not
// written.
func (e NotDescribedError) Reason() string { return notWritten(e.Err) }

// notWritten is what the pull request is told about a description not
// written: GitHub's refusal of a description too long is the author's to
// fix; anything else is in the logs.
func notWritten(err error) string {
	var long review.DescriptionTooLongError
	if errors.As(err, &long) {
		return long.Error() + "."
	}
	if errors.Is(err, review.ErrDescriptionTooLong) {
		return review.ErrDescriptionTooLong.Error() + "."
	}
	return "the cause is in MergeGuard's logs."
}

// RunPage is a run's page in MergeGuard's web UI under publicURL, "" when
// there is none.
func RunPage(publicURL, runID string) string {
	if publicURL == "" {
		return ""
	}
	return strings.TrimRight(publicURL, "/") + "/reviews/" + runID
}

// JoinNotice adds a paragraph to a notice.
func JoinNotice(notice, more string) string {
	if notice == "" {
		return more
	}
	if more == "" {
		return notice
	}
	return notice + "\n\n" + more
}
