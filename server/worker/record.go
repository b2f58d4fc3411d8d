package worker

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mergeguard/mergeguard/github"
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
//   - A job stopped by shutdown is handed back to the queue at once, its
//     attempt not counted.
//   - A transient failure is retried with backoff while attempts remain.
//   - Anything else is recorded failed and the pull request is told.
func (p *Pool) record(ctx context.Context, j *job, out outcome, err error, cause error) {
	run, log := j.run, j.log
	if err == nil {
		p.finish(ctx, j, out)
		return
	}
	var crash panicError
	switch {
	case errors.Is(cause, store.ErrLeaseLost):
		log.Warn().Err(cause).Msg("lost the run's lease; another worker takes it over")
		return
	case errors.Is(cause, errSuperseded):
		p.finish(ctx, j, superseded("a newer head was pushed or the pull request was closed"))
		return
	case errors.Is(cause, errShutdown):
		if err := withDB(ctx, func() error { return p.deps.Store.ReleaseRun(ctx, run.ID, j.workerID) }); err != nil {
			log.Error().Err(err).Msg("hand back the run at shutdown; it is taken again when its lease expires")
			return
		}
		log.Info().Msg("shutting down: handed the run back to the queue")
		return
	case errors.As(err, &crash):
		log.Error().Str("panic", fmt.Sprint(crash.value)).Bytes("stack", crash.stack).Msg("review job panicked")
	default:
		if asked, ok := transient(err); ok && run.Attempts < run.MaxAttempts {
			delay := p.cfg.Retry.delay(run.Attempts, asked)
			if rerr := withDB(ctx, func() error { return p.deps.Store.RetryRun(ctx, run.ID, j.workerID, delay, err.Error()) }); rerr != nil {
				log.Error().Err(rerr).AnErr("run_error", err).Msg("retry run")
				return
			}
			p.deps.Metrics.JobRetried()
			log.Warn().Err(err).Dur("retry_in", delay).Int("attempt", run.Attempts).Msg("transient failure; run queued again")
			return
		}
		log.Error().Err(err).Int("attempt", run.Attempts).Msg("review failed")
	}
	failed := outcome{
		result: store.Result{Status: store.StatusFailed, Error: err.Error()},
		notice: failureNotice(run, err),
	}
	p.finish(ctx, j, failed)
}

// finish records a run's end (with the review it posted), then tells the
// pull request what it needs to know.
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
	if out.notice != "" && run.Mode == store.ModePR {
		p.comment(ctx, j, out.notice)
	}
}

// comment posts a notice on the run's pull request. It is best effort: a
// failure is logged, the run is already recorded.
func (p *Pool) comment(ctx context.Context, j *job, body string) {
	run := j.run
	if p.deps.GitHub == nil {
		return
	}
	owner, name, _ := strings.Cut(run.Repository, "/")
	client, err := p.deps.GitHub.NewInstallationClient(run.InstallationID)
	if err == nil {
		_, err = github.Comment(ctx, client, owner, name, run.PRNumber, body)
	}
	if err != nil {
		p.deps.Metrics.PostFailure("comment")
		j.log.Error().Err(err).Msg("tell the pull request how the run ended")
	}
}

// failureNotice is the comment a failed run leaves on its pull request: the
// error itself when the author can fix it (a broken .mergeguard.yml), else a
// pointer to the run (internal errors are for the operators' logs).
func failureNotice(run *store.Run, err error) string {
	var ue userError
	if errors.Is(err, errLLMUnavailable) {
		return fmt.Sprintf("MergeGuard could not complete the review of this pull request (run `%s`): "+
			"the language model kept failing (rate limits or server errors) over %d attempts. "+
			"Comment `/mergeguard rerun` to try again later.", run.ID, run.Attempts)
	}
	if errors.As(err, &ue) {
		return "MergeGuard could not review this pull request:\n\n```\n" + ue.Error() +
			"\n```\n\nFix the file on the base branch, then comment `/mergeguard rerun`."
	}
	return fmt.Sprintf("MergeGuard could not complete the review of this pull request (run `%s`, attempt %d). "+
		"The cause is in MergeGuard's logs; comment `/mergeguard rerun` to try again.", run.ID, run.Attempts)
}
