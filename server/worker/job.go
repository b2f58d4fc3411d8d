package worker

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/mergeguard/mergeguard/github"
	"github.com/mergeguard/mergeguard/server/store"
)

// finishTimeout bounds recording a run's end (and the failure comment) once
// its job context may be gone.
const finishTimeout = 30 * time.Second

// panicError is a job that panicked; it is a bug, never retried.
type panicError struct {
	value any
	stack []byte
}

func (e panicError) Error() string { return fmt.Sprintf("panic: %v", e.value) }

// work runs one claimed run to its recorded end.
func (p *Pool) work(jobs context.Context, workerID string, run *store.Run, claimedAt time.Time) {
	log := p.runLogger(run, workerID)
	j := &job{run: run, workerID: workerID, log: &log, claimedAt: claimedAt}
	ctx := log.WithContext(jobs)

	timed, cancelTimeout := context.WithTimeoutCause(ctx, p.cfg.RunTimeout, errRunTimeout)
	defer cancelTimeout()
	jobCtx, stop := context.WithCancelCause(timed)
	keeperDone := make(chan struct{})
	go func() {
		defer close(keeperDone)
		p.keepLease(jobCtx, stop, run.ID, workerID, claimedAt.Add(p.cfg.Lease))
	}()

	log.Info().Int("attempt", run.Attempts).Msg("run started")
	out, err := p.execute(jobCtx, j)
	cause := context.Cause(jobCtx)
	stop(nil)
	<-keeperDone

	// Recording must happen even when jobs was cancelled at shutdown.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), finishTimeout)
	defer cancel()
	p.record(rctx, j, out, err, cause)
}

// runLogger is the logger of one run: every line names the run, the worker
// and, for a pull request, the installation, repository, number, head SHA
// and the delivery that asked for it.
func (p *Pool) runLogger(run *store.Run, workerID string) zerolog.Logger {
	lc := p.log.With().Str("run_id", run.ID).Str("worker", workerID).
		Str("mode", string(run.Mode)).Str("trigger", string(run.Trigger))
	if run.Mode == store.ModePR {
		owner, name, _ := strings.Cut(run.Repository, "/")
		lc = lc.Int64(github.LogKeyInstallationID, run.InstallationID).
			Str(github.LogKeyRepositoryOwner, owner).
			Str(github.LogKeyRepositoryName, name).
			Int(github.LogKeyPRNum, run.PRNumber)
	}
	if run.HeadSHA != "" {
		lc = lc.Str("head_sha", run.HeadSHA)
	}
	if run.DeliveryID != "" {
		lc = lc.Str(github.LogKeyDeliveryID, run.DeliveryID)
	}
	return lc.Logger()
}

// execute runs the job, turning a panic into an error.
func (p *Pool) execute(ctx context.Context, j *job) (out outcome, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = panicError{value: v, stack: debug.Stack()}
		}
	}()
	return p.review(ctx, j)
}

// keepLease renews the run's lease every Lease/3 until ctx ends. It stops the
// job with errSuperseded when the store reports a cancel request, and with
// store.ErrLeaseLost when the lease is gone or could not be renewed before it
// expired (a worker cut off from the database must not post).
func (p *Pool) keepLease(ctx context.Context, stop context.CancelCauseFunc, runID, workerID string, validUntil time.Time) {
	t := time.NewTicker(p.cfg.Lease / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		asked := time.Now()
		cancelRequested, err := p.deps.Store.RenewLease(ctx, runID, workerID, p.cfg.Lease)
		switch {
		case errors.Is(err, store.ErrLeaseLost):
			stop(err)
			return
		case err != nil:
			if ctx.Err() != nil {
				return
			}
			if time.Now().Add(p.cfg.Lease / 3).After(validUntil) {
				stop(fmt.Errorf("%w: %w", store.ErrLeaseLost, err))
				return
			}
			zerolog.Ctx(ctx).Warn().Err(err).Msg("renew lease; retrying")
			continue
		case cancelRequested:
			stop(errSuperseded)
			return
		}
		validUntil = asked.Add(p.cfg.Lease)
	}
}
