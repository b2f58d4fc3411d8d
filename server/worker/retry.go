package worker

import (
	"context"
	"time"

	"github.com/rs/zerolog"

	"github.com/mergeguard/mergeguard/internal/retry"
	"github.com/mergeguard/mergeguard/server/store"
)

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
