package worker

import (
	"context"
	"time"

	"github.com/rs/zerolog"

	"github.com/mergeguard/mergeguard/internal/retry"
	"github.com/mergeguard/mergeguard/server/store"
)

// Retry is the retry policy of failed runs: a run whose failure is
// transient (GitHub 5xx or rate limit, network trouble, the database out of
// reach, every LLM call of the review failing with a rate limit, server
// error or timeout after the LLM client's own retries) is queued again after
// Base·2^(attempt-1), at most Max, or later when the failing service asked
// for a longer wait. A run that fails for good, or has used its attempts
// (the run's max_attempts), is recorded failed.
type Retry struct {
	Base time.Duration
	Max  time.Duration
}

// delay returns how long to wait before attempt+1, given the attempt that
// just failed (1-based) and the wait the service asked for (0 if none). The
// computed backoff is jittered by ±20% so retries of one outage spread out.
func (r Retry) delay(attempt int, asked time.Duration) time.Duration {
	return max(retry.Backoff{Base: r.Base, Max: r.Max}.Jittered(attempt, 0.2), asked)
}

// withDB makes a call to the store, and makes it again after a short pause
// while the database is out of reach (store.Transient), until ctx ends. A
// Postgres restart or failover kills every pooled connection and each dead
// one fails the call that takes it: the bookkeeping of a run (claiming the
// post, recording the end) must outlive that, not fail the run or leave it
// to its lease.
func withDB(ctx context.Context, call func() error) error {
	wait := retry.Backoff{Base: 50 * time.Millisecond, Max: time.Second}
	for attempt := 1; ; attempt++ {
		err := call()
		if err == nil || !store.Transient(err) {
			return err
		}
		d := wait.Delay(attempt)
		zerolog.Ctx(ctx).Warn().Err(err).Dur("retry_in", d).Msg("database out of reach; trying again")
		if retry.Sleep(ctx, d) != nil {
			return err
		}
	}
}
