package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mergeguard/mergeguard/github"
	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/server/store"
)

// This file is /mergeguard describe: a pull request run with
// review.Options.Describe writes the walkthrough of a review of its head
// into the pull request's description. When a review of that head already
// succeeded, its walkthrough is written at once and nothing is reviewed
// (the run ends skipped, with no check run of its own: it reviewed
// nothing). Otherwise the run reviews as any requested run does and, once
// its review is posted, writes the walkthrough of that review.

// describeAsked reports whether a run was asked to describe its pull
// request; options that do not decode are reported by the review.
func describeAsked(run *store.Run) bool {
	var o review.Options
	return len(run.Options) > 0 && json.Unmarshal(run.Options, &o) == nil && o.Describe
}

// describeError is a description that could not be written; its reason
// is told on the pull request.
type describeError struct {
	err error
}

func (e describeError) Error() string { return "write the description: " + e.err.Error() }
func (e describeError) Unwrap() error { return e.err }

// reason is what the pull request is told about a description not
// written: GitHub's refusal of a description too long is the author's to
// fix; anything else is in the logs.
func (e describeError) reason() string {
	if errors.Is(e.err, github.ErrDescriptionTooLong) {
		return github.ErrDescriptionTooLong.Error() + "."
	}
	return "the cause is in MergeGuard's logs."
}

// describeFromReview writes the description of a describe run from the
// succeeded review of its head. done is false when there is none, or the
// pull request's head moved since the run was queued: the run then
// reviews (and finds the head moved) as any run does.
func (p *Pool) describeFromReview(ctx context.Context, j *job, repo Repo) (out outcome, done bool, err error) {
	run := j.run
	if run.HeadSHA == "" {
		return outcome{}, false, nil
	}
	prev, err := p.deps.Store.ReviewOfHead(ctx, run.Repository, run.PRNumber, run.HeadSHA)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return outcome{}, false, nil
	case err != nil:
		return outcome{}, false, err
	case prev.Result == nil || prev.Result.Walkthrough == nil:
		return outcome{}, false, nil
	}
	head, err := repo.Head(ctx, run.PRNumber)
	if err != nil {
		return outcome{}, false, fmt.Errorf("read the head before describing: %w", err)
	}
	if head.SHA != run.HeadSHA {
		return outcome{}, false, nil
	}
	j.noCheck = true // nothing is reviewed: the head's check stays the review's
	desc := github.Description{Walkthrough: prev.Result.Walkthrough, HeadSHA: prev.HeadSHA, DetailsURL: p.detailsURL(prev.ID)}
	changed, err := repo.Describe(ctx, run.PRNumber, desc)
	if err != nil {
		// A failed run would count as the pull request's last review
		// (a full review next time): only a failure worth retrying is
		// returned, while attempts remain; otherwise the run ends
		// skipped and the pull request is told.
		if _, ok := transient(err); ok && run.Attempts < run.MaxAttempts {
			return outcome{}, true, describeError{err}
		}
		j.log.Warn().Err(err).Msg("the description was not written")
		out = skipped("the description could not be written: " + err.Error())
		out.notice = fmt.Sprintf("MergeGuard could not write the walkthrough into this pull request's description: %s "+
			"Comment `/mergeguard describe` to try again.", describeError{err}.reason())
		return out, true, nil
	}
	j.log.Info().Str("review_run", prev.ID).Bool("changed", changed).Msg("described the pull request from an earlier review")
	return skipped(fmt.Sprintf("described the pull request from the walkthrough of run %s, which reviewed this head; nothing reviewed again", prev.ID)), true, nil
}

// describeAfterReview writes the walkthrough of the review a describe run
// just posted. The review is posted and recorded whatever happens here, so
// a failure is told on the pull request rather than failing the run.
func (p *Pool) describeAfterReview(ctx context.Context, j *job, repo Repo, w *review.Walkthrough, out *outcome) {
	run := j.run
	if w == nil {
		out.notice = joinNotice(out.notice, "MergeGuard reviewed this pull request but wrote no description: the review has no walkthrough.")
		return
	}
	desc := github.Description{Walkthrough: w, HeadSHA: run.HeadSHA, DetailsURL: p.detailsURL(run.ID)}
	changed, err := repo.Describe(ctx, run.PRNumber, desc)
	if err != nil {
		de := describeError{err}
		j.log.Warn().Err(err).Msg("review posted; the description was not written")
		out.notice = joinNotice(out.notice, "MergeGuard posted its review but could not write the walkthrough into this pull request's description: "+
			de.reason()+" Comment `/mergeguard describe` to try again.")
		return
	}
	j.log.Info().Bool("changed", changed).Msg("described the pull request")
}

// describeNotice is told on the pull request when a describe run ended
// skipped without a review to take a walkthrough from.
const describeNotice = "MergeGuard wrote no description: it did not review this head."

// joinNotice adds a paragraph to a notice.
func joinNotice(notice, more string) string {
	if notice == "" {
		return more
	}
	return notice + "\n\n" + more
}
