package worker

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mergeguard/mergeguard/github"
	"github.com/mergeguard/mergeguard/internal/retry"
	"github.com/mergeguard/mergeguard/review/lifecycle"
	"github.com/mergeguard/mergeguard/server/store"
)

// record stores how a job ended. cause is why the job's context was
// cancelled, if it was.
//
//   - A job that finished (succeeded, skipped, superseded) is recorded so,
//     even when a cancellation arrived after the review was posted.
//   - A job whose lease was lost is left alone: the worker that took the
//     run over records it.
//   - A job cancelled for a newer head is recorded superseded.
//   - A job still running when the shutdown grace period ended is queued
//     again at once, its attempt counted: a run that never stops in time
//     (a poison input) must not come back forever.
//   - A job over the run timeout is recorded failed with that reason.
//   - A transient failure is retried with backoff while attempts remain.
//   - Anything else is recorded failed and the pull request is told.
func (p *Pool) record(ctx context.Context, j *job, out outcome, err error, cause error) {
	if err == nil {
		p.finish(ctx, j, out)
		return
	}
	switch {
	case errors.Is(cause, store.ErrLeaseLost):
		j.log.Warn().Err(cause).Msg("lost the run's lease; another worker takes it over")
		return
	case errors.Is(cause, errSuperseded):
		p.finish(ctx, j, superseded("a newer head was pushed or the pull request was closed"))
		return
	case errors.Is(cause, errShutdown):
		p.retry(ctx, j, 0, errShutdown)
		return
	case errors.Is(cause, errRunTimeout):
		err = fmt.Errorf("%w (%s)", errRunTimeout, p.cfg.RunTimeout)
	}
	var crash panicError
	if errors.As(err, &crash) {
		j.log.Error().Str("panic", fmt.Sprint(crash.value)).Bytes("stack", crash.stack).Msg("review job panicked")
	} else if asked, ok := transient(err); ok && j.run.Attempts < j.run.MaxAttempts {
		p.retry(ctx, j, runDelay(p.cfg.Retry, j.run.Attempts, asked), err)
		return
	} else {
		j.log.Error().Err(err).Int("attempt", j.run.Attempts).Msg("review failed")
	}
	p.finish(ctx, j, outcome{result: store.Result{Status: store.StatusFailed, Error: err.Error()},
		end: lifecycle.End{Ending: lifecycle.EndedFailed, Notice: lifecycle.FailureNotice(j.run.ID, j.run.Attempts, err)}})
}

// retry queues the run again after delay, its attempt counted, and wakes
// the idle workers when it is due; the store records it failed when its
// attempts are used up.
func (p *Pool) retry(ctx context.Context, j *job, delay time.Duration, err error) {
	if rerr := withDB(ctx, func() error { return p.deps.Store.RetryRun(ctx, j.run.ID, j.workerID, delay, err.Error()) }); rerr != nil {
		j.log.Error().Err(rerr).AnErr("run_error", err).Msg("retry run; it is taken again when its lease expires")
		return
	}
	// The run is due after delay: wake this replica's idle workers then,
	// not at their next poll (up to the poll interval later).
	time.AfterFunc(delay, p.wake.Notify)
	p.deps.Metrics.JobRetried()
	j.log.Warn().Err(err).Dur("retry_in", delay).Int("attempt", j.run.Attempts).Msg("run queued again")
}

// finish records a run's end (with the review it posted), then tells the
// pull request how it ended.
func (p *Pool) finish(ctx context.Context, j *job, out outcome) {
	run, log := j.run, j.log
	if err := withDB(ctx, func() error { return p.deps.Store.FinishRun(ctx, run.ID, j.workerID, out.result) }); err != nil {
		log.Error().Err(err).Str("status", string(out.result.Status)).Msg("record the run's end")
		return
	}
	p.deps.Metrics.ReviewFinished(string(out.result.Status), out.result.Model, time.Since(j.claimedAt), out.result.Verdict)
	e := log.Info().Str("status", string(out.result.Status))
	if out.result.Reason != "" {
		e = e.Str("reason", out.result.Reason)
	}
	e.Msg("run finished")
	p.close(ctx, j, out.end)
}

// close tells a pull request run's pull request how the run ended
// (lifecycle.Closing); best effort, the run being recorded.
func (p *Pool) close(ctx context.Context, j *job, end lifecycle.End) {
	run := j.run
	if run.Mode != store.ModePR || p.deps.GitHub == nil {
		return
	}
	repo, err := p.repo(j)
	if err != nil {
		j.log.Error().Err(err).Msg("tell the pull request how the run ended")
		return
	}
	uc := lifecycle.Closing{Checking: p.checking(repo), Comments: repo}
	p.logProblems(j, uc.Close(ctx, pullOf(run), lifecycle.Run{ID: run.ID, HeadSHA: run.HeadSHA, CheckRunID: run.CheckRunID}, end))
}

// runDelay is how long a run waits before attempt+1, given the attempt
// that just failed (1-based) and the wait the failing service asked for
// (0 if none): the backoff, jittered by ±20%, or the wait asked if longer.
func runDelay(b retry.Backoff, attempt int, asked time.Duration) time.Duration {
	return max(b.Jittered(attempt, 0.2), asked)
}

// retryable reports whether a GitHub failure may pass when the run is
// tried again.
func retryable(err error) bool {
	_, ok := github.Transient(err)
	return ok
}

// transient reports whether err is worth retrying, and how long the failing
// service asked to wait (0 when it did not say): the model unavailable, the
// database out of reach, or GitHub failing for a passing reason.
func transient(err error) (asked time.Duration, ok bool) {
	if lifecycle.ModelUnavailable(err) || store.Transient(err) {
		return 0, true
	}
	return github.Transient(err)
}
