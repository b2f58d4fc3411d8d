package worker

import (
	"context"
	"errors"
	"fmt"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/lifecycle"
	"github.com/mergeguard/mergeguard/server/store"
)

// runLog is the store's record of the run a job works on, as the
// lifecycle's RunLog; the store and *github.Repo play the other roles as
// they are.
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

// SetCheck records on the run the check run it reports to.
func (r runLog) SetCheck(ctx context.Context, checkRunID int64) error {
	run := r.job.run
	if err := r.st.SetRunCheck(ctx, run.ID, r.job.workerID, checkRunID); err != nil {
		return err
	}
	run.CheckRunID = checkRunID
	return nil
}

// pullOf names the pull request of a run.
func pullOf(run *store.Run) lifecycle.PullRequest {
	return lifecycle.PullRequest{Repository: run.Repository, Number: run.PRNumber}
}

// logProblems logs the best-effort steps of a use case that failed and
// counts those of posting.
func (p *Pool) logProblems(j *job, problems []error) {
	for _, err := range problems {
		if se, ok := errors.AsType[lifecycle.StepError](err); ok {
			p.deps.Metrics.PostFailure(se.Step)
		}
		j.log.Warn().Err(err).Msg("a best-effort step failed; the run went on")
	}
}
