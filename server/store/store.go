// Package store is MergeGuard's Postgres store: webhook intake, review runs
// and the durable job queue they form, findings, agent results, the per-run
// event log, installations and per pull request switches.
//
// Every invariant the application relies on is enforced by the schema in
// migrations/ (one running run per pull request, one run per delivery, one
// GitHub review per run, ...); this package adds the queries and the
// transactions that keep multi-step changes atomic. A Store is safe for
// concurrent use and several replicas may share one database.
//
// The life of a run, as a worker sees it:
//
//	EnqueueRun or RecordDelivery      queued
//	ClaimRun                          running, held with a lease
//	RenewLease, periodically          stop when it reports cancelRequested
//	RetryRun after a transient error  queued again (or failed when exhausted)
//	ClaimPost, then post on GitHub    at most once per run
//	FinishRun(Result{Posted: ...})    succeeded, failed, skipped or superseded
//
// A run whose worker dies is taken over by another worker's ClaimRun once
// its lease expires.
package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mergeguard/mergeguard/internal/secretbox"
	"github.com/mergeguard/mergeguard/review"
)

// ErrNotFound is returned when the requested row does not exist (a malformed
// run id is reported as not found too). It wraps review.ErrNotFound, so
// the life of a pull request (review/lifecycle) reads the store's not
// found as any other.
var ErrNotFound = fmt.Errorf("%w", review.ErrNotFound)

// ErrLeaseLost is returned to a worker that no longer holds the run it tries
// to change: its lease expired and another worker took the run, or the run is
// no longer running.
var ErrLeaseLost = errors.New("lease lost")

// ErrCancelled is returned by ClaimPost when a newer head superseded the run
// before it started posting: the run must not post.
var ErrCancelled = errors.New("run cancelled")

// Store is the Postgres store. Create it with Open.
type Store struct {
	pool *pgxpool.Pool
	// borrowed: the pool is its caller's (Borrow), and Close leaves it open.
	borrowed bool
	// box seals and opens the stored secrets (github_app); nil until
	// SetSecretKey.
	box *secretbox.Box
}

// Open connects to the database at url (a postgres:// URL; pgxpool options
// such as pool_max_conns are honoured) and checks that it answers. The schema
// must already be migrated (MigrateUp).
func Open(ctx context.Context, url string) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("open store: %w", err)
	}
	return &Store{pool: pool}, nil
}

// Borrow returns a Store over pool, which stays its caller's: Close leaves
// it open. The schema must already be migrated. Tests keep a database's
// sessions from one test to the next with it (storetest.Open).
func Borrow(pool *pgxpool.Pool) *Store { return &Store{pool: pool, borrowed: true} }

// Close closes every connection of the store, but a borrowed pool's.
func (s *Store) Close() {
	if !s.borrowed {
		s.pool.Close()
	}
}

// Ping checks that the database answers.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.pool.Ping(ctx); err != nil {
		return fmt.Errorf("ping database: %w", err)
	}
	return nil
}

// validID reports whether id is a well-formed run id; the database would
// reject a malformed one with a syntax error rather than find nothing.
func validID(id string) bool {
	_, err := uuid.Parse(id)
	return err == nil
}

// isViolation reports whether err is a violation of the named constraint.
func isViolation(err error, constraint string) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.ConstraintName == constraint
}

// nullIfEmpty maps "" to SQL NULL.
func nullIfEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// nullIfZero maps 0 to SQL NULL.
func nullIfZero[T int | int64](v T) *T {
	if v == 0 {
		return nil
	}
	return &v
}
