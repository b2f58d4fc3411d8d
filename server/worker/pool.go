// Package worker runs MergeGuard's durable review jobs. A job is a queued
// review run in Postgres; workers in any replica claim runs with a lease,
// renew it while they work, review the change through the pipeline, post
// the review once and record how the run ended. Every run ends recorded —
// succeeded, skipped with its reason, superseded by a newer head, or failed
// with its error and a comment on the pull request — unless its worker lost
// the lease, in which case the worker that took it over records it.
package worker

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/internal/retry"
	"github.com/mergeguard/mergeguard/review/lifecycle"
	"github.com/mergeguard/mergeguard/server/metrics"
	"github.com/mergeguard/mergeguard/server/store"
)

// Causes that stop a running job, besides store.ErrLeaseLost (the lease
// expired or another worker took the run); read with context.Cause.
var (
	// errSuperseded: the store asked to cancel the run (a newer head was
	// pushed or the pull request was closed).
	errSuperseded = errors.New("run superseded")
	// errShutdown: the process is stopping and the grace period is over.
	errShutdown = errors.New("the worker shut down before the run finished")
	// errRunTimeout: the run took longer than Config.RunTimeout.
	errRunTimeout = lifecycle.ErrTimedOut
)

// Config tunes a Pool.
type Config struct {
	// ID names this replica; worker ids are ID/0, ID/1, ...
	ID string
	// Workers is how many runs the pool works on at once.
	Workers int
	// Lease is how long a claimed run stays reserved without renewal; it is
	// renewed every Lease/3.
	Lease time.Duration
	// PollInterval is how often an idle worker looks for runs when no
	// notification woke it.
	PollInterval time.Duration
	// ShutdownGrace is how long running jobs may go on after Run's context
	// ends; jobs still running then are queued again, their attempt
	// counted.
	ShutdownGrace time.Duration
	// RunTimeout bounds one attempt of a run, wall clock; a run still
	// working then is recorded failed.
	RunTimeout time.Duration
	// DefaultRepo is the repository configuration that a .mergeguard.yml
	// is read over, and the configuration of diff runs.
	DefaultRepo config.Repo
	// Retry is the backoff of failed runs: a run whose failure is
	// transient (GitHub 5xx or rate limit, network trouble, the database
	// out of reach, every LLM call of the review failing with a rate
	// limit, server error or timeout after the LLM client's own retries)
	// is queued again after Base·2^(attempt-1), at most Max, jittered by
	// ±20% so the retries of one outage spread out, or later when the
	// failing service asked for a longer wait. A run that fails for good,
	// or has used its attempts (the run's max_attempts), is recorded
	// failed.
	Retry retry.Backoff
	// Budgets cap what reviews may spend, as configured (config/ holds
	// their defaults; zero values mean unlimited).
	Budgets config.Budgets
	// Experiments are the arms of a model comparison (llm.experiments):
	// each pull request's runs are its arm's (experiment.Choose).
	Experiments []config.Experiment
	// Memory bounds the memory of dismissals a review reads
	// (memory.dismissals); a zero Dismissals reads none.
	Memory config.Memory
}

// Pool is a set of workers sharing one store.
type Pool struct {
	cfg  Config
	deps Deps
	log  *zerolog.Logger
	wake *broadcast
	// reapAt is when the pool's workers next reap dead workers' runs
	// (Unix nanoseconds): at most once per poll interval, not before
	// every claim.
	reapAt atomic.Int64
}

// New returns a pool; it does nothing until Run.
func New(deps Deps, cfg Config) (*Pool, error) {
	if err := deps.check(); err != nil {
		return nil, fmt.Errorf("worker: %w", err)
	}
	if cfg.Workers < 1 || cfg.Lease <= 0 || cfg.PollInterval <= 0 || cfg.RunTimeout <= 0 || cfg.ID == "" {
		return nil, errors.New("worker: ID, Workers, Lease, PollInterval and RunTimeout must be set")
	}
	if deps.Metrics == nil {
		deps.Metrics = metrics.New() // recorded nowhere
	}
	return &Pool{cfg: cfg, deps: deps, log: deps.Logger, wake: newBroadcast()}, nil
}

// Run works on queued runs until ctx ends. Then it stops claiming, lets the
// running jobs finish within the grace period, hands back those that do not
// (queued again at once), and returns.
func (p *Pool) Run(ctx context.Context) {
	// Jobs outlive ctx by the grace period.
	jobs, stopJobs := context.WithCancelCause(context.WithoutCancel(ctx))
	defer stopJobs(nil)
	stop := context.AfterFunc(ctx, func() {
		time.AfterFunc(p.cfg.ShutdownGrace, func() { stopJobs(errShutdown) })
	})
	defer stop()

	var wg sync.WaitGroup
	wg.Go(func() { p.listen(ctx) })
	for i := range p.cfg.Workers {
		id := fmt.Sprintf("%s/%d", p.cfg.ID, i)
		wg.Go(func() { p.loop(ctx, jobs, id) })
	}
	wg.Wait()
}

// listen turns the store's job notifications into wake-ups until ctx ends;
// the store reconnects a lost listener by itself.
func (p *Pool) listen(ctx context.Context) {
	p.deps.Store.Listen(ctx, store.ChannelJobs, func(string) { p.wake.Notify() })
}

// loop is one worker: claim a run, work on it, repeat; sleep until woken or
// the poll interval when the queue is empty.
func (p *Pool) loop(ctx, jobs context.Context, workerID string) {
	for ctx.Err() == nil {
		woken := p.wake.Wait()
		claimedAt := time.Now()
		run, err := p.claim(ctx, workerID)
		if err != nil {
			if ctx.Err() == nil {
				p.log.Error().Err(err).Str("worker", workerID).Msg("claim run")
				sleep(ctx, p.cfg.PollInterval)
			}
			continue
		}
		if run == nil {
			if p.refreshGate(ctx, workerID) {
				continue
			}
			select {
			case <-ctx.Done():
			case <-woken:
			case <-time.After(p.cfg.PollInterval):
			}
			continue
		}
		p.work(jobs, workerID, run, claimedAt)
	}
}

// claimTimeout bounds one claim.
const claimTimeout = 10 * time.Second

// claim ends the runs whose worker died for good (when reaping is due),
// then takes the next run.
// A claim under way is not cancelled with ctx: a run claimed whose answer
// was lost would wait for its lease to expire.
func (p *Pool) claim(ctx context.Context, workerID string) (*store.Run, error) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), claimTimeout)
	defer cancel()
	if p.reapDue() {
		reaped, err := p.deps.Store.ReapRuns(cctx)
		if err != nil {
			return nil, err
		}
		for i := range reaped {
			p.reaped(cctx, workerID, &reaped[i])
		}
	}
	return p.deps.Store.ClaimRun(cctx, workerID, p.cfg.Lease)
}

// reapDue reports whether the calling worker reaps now: one of the pool's
// workers does, once per poll interval. Every wake-up made every idle
// worker reap before its claim; a dead worker's run waits at most a poll
// interval longer for it.
func (p *Pool) reapDue() bool {
	now := time.Now().UnixNano()
	at := p.reapAt.Load()
	return now >= at && p.reapAt.CompareAndSwap(at, now+p.cfg.PollInterval.Nanoseconds())
}

// reaped reports a run the store ended because its worker died: failed
// after its last attempt (its pull request is told), or superseded.
func (p *Pool) reaped(ctx context.Context, workerID string, run *store.Run) {
	log := p.runLogger(run, workerID)
	j := &job{run: run, workerID: workerID, log: &log, claimedAt: time.Now()}
	p.deps.Metrics.ReviewFinished(string(run.Status), "", 0, nil)
	log.Error().Str("status", string(run.Status)).Str("reason", run.StatusReason).Msg("run ended: its worker was lost")
	end := lifecycle.End{Ending: endings[run.Status], Reason: run.StatusReason}
	if run.Status == store.StatusFailed {
		end.Notice = lifecycle.FailureNotice(run.ID, run.Attempts, errors.New(run.Error))
	}
	p.close(ctx, j, end)
}

// endings are the lifecycle's endings of the runs' statuses.
var endings = map[store.Status]lifecycle.Ending{
	store.StatusSucceeded: lifecycle.EndedSucceeded, store.StatusSkipped: lifecycle.EndedSkipped,
	store.StatusSuperseded: lifecycle.EndedSuperseded, store.StatusFailed: lifecycle.EndedFailed,
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
