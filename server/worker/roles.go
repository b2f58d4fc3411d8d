package worker

import (
	"context"
	"errors"
	"fmt"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/lifecycle"
	"github.com/mergeguard/mergeguard/review/text"
	"github.com/mergeguard/mergeguard/server/store"
)

// This file adapts the store to the role interfaces of review/lifecycle;
// *github.Repo implements its GitHub roles as it is.

// ledger is the store as the lifecycle's ledger and feedback roles: the
// store's not found is review.ErrNotFound.
type ledger struct{ Store }

func (l ledger) FindingOfThread(ctx context.Context, repo string, number int, commentID int64) (review.LedgerEntry, error) {
	e, err := l.Store.FindingOfThread(ctx, repo, number, commentID)
	if errors.Is(err, store.ErrNotFound) {
		return e, fmt.Errorf("finding of thread %d: %w", commentID, review.ErrNotFound)
	}
	return e, err
}

// runLog is the store's record of the run a job works on.
type runLog struct {
	st  Store
	job *job
}

func (p *Pool) runLog(j *job) runLog { return runLog{st: p.deps.Store, job: j} }

// ClaimPost claims the run's post, while the database is out of reach
// too (withDB); a run cancelled meanwhile is lifecycle.ErrCancelled.
func (r runLog) ClaimPost(ctx context.Context) (alreadyStarted bool, err error) {
	err = withDB(ctx, func() (err error) {
		alreadyStarted, err = r.st.ClaimPost(ctx, r.job.run.ID, r.job.workerID)
		return err
	})
	if errors.Is(err, store.ErrCancelled) {
		return false, fmt.Errorf("%w: %w", lifecycle.ErrCancelled, err)
	}
	return alreadyStarted, err
}

// SetHead records on the run the revision its review reads.
func (r runLog) SetHead(ctx context.Context, head review.PullHead) error {
	run := r.job.run
	if err := r.st.SetRunHead(ctx, run.ID, r.job.workerID, head); err != nil {
		return err
	}
	run.HeadSHA, run.BaseSHA, run.Branch = head.SHA, head.BaseSHA, head.Branch
	return nil
}

// pullOf names the pull request of a run.
func pullOf(run *store.Run) lifecycle.PullRequest {
	return lifecycle.PullRequest{Repository: run.Repository, Number: run.PRNumber}
}

// logProblems logs the best-effort steps of a use case that failed.
func logProblems(j *job, problems []error) {
	for _, err := range problems {
		j.log.Warn().Err(err).Msg("a best-effort step failed; the run went on")
	}
}

func (l ledger) ReviewOfHead(ctx context.Context, repo string, number int, head string) (lifecycle.Reviewed, error) {
	run, err := l.Store.ReviewOfHead(ctx, repo, number, head)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return lifecycle.Reviewed{}, fmt.Errorf("review of head %s: %w", text.ShortSHA(head), review.ErrNotFound)
	case err != nil:
		return lifecycle.Reviewed{}, err
	}
	return lifecycle.Reviewed{RunID: run.ID, HeadSHA: run.HeadSHA, CheckRunID: run.CheckRunID, Verdict: run.Result}, nil
}

func (l ledger) ApplyThread(ctx context.Context, repo string, number int, t lifecycle.ThreadChange) (bool, error) {
	return l.Store.ApplyThread(ctx, repo, number, store.ThreadChange{ThreadID: t.ThreadID, CommentID: t.CommentID, Resolved: t.Resolved, By: t.By})
}

func (l ledger) LastReview(ctx context.Context, repo string, number int, except string) (lifecycle.LastReview, error) {
	last, err := l.Store.LastReview(ctx, repo, number, except)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return lifecycle.LastReview{}, nil
	case err != nil:
		return lifecycle.LastReview{}, err
	}
	return lifecycle.LastReview{Found: true, Succeeded: last.Status == store.StatusSucceeded, KeptLedger: last.ReviewKind != "",
		HeadSHA: last.HeadSHA, BaseSHA: last.BaseSHA, ConfigDigest: last.ConfigDigest}, nil
}
