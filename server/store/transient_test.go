package store_test

import (
	"context"
	"fmt"
	"io"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/mergeguard/mergeguard/server/store"
)

func TestTransient(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"server shutting down", &pgconn.PgError{Severity: "FATAL", Code: "57P01"}, true},
		{"server starting up", fmt.Errorf("claim run: %w", &pgconn.PgError{Severity: "FATAL", Code: "57P03"}), true},
		{"connection failure", &pgconn.PgError{Code: "08006"}, true},
		{"not the database", fmt.Errorf("read: %w", io.ErrUnexpectedEOF), false},
		{"unique violation", &pgconn.PgError{Code: "23505"}, false},
		{"no rows", pgx.ErrNoRows, false},
		{"lease lost", store.ErrLeaseLost, false},
		{"not found", fmt.Errorf("run x: %w", store.ErrNotFound), false},
		{"caller gave up", fmt.Errorf("finish run: %w", context.DeadlineExceeded), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := store.Transient(tt.err); got != tt.want {
				t.Errorf("Transient(%v) = %t, want %t", tt.err, got, tt.want)
			}
		})
	}
}

// TestTransientConnectionLoss checks the errors of real connection losses:
// a pooled connection whose server session was terminated, and a server
// that is not there.
func TestTransientConnectionLoss(t *testing.T) {
	s, raw := newStoreApart(t)
	ctx := t.Context()
	if err := s.Ping(ctx); err != nil { // the pool now holds one connection, just used
		t.Fatal(err)
	}
	_, err := raw.Exec(ctx, `SELECT pg_terminate_backend(pid, 10000) FROM pg_stat_activity
		WHERE datname = current_database() AND pid <> pg_backend_pid()`)
	if err != nil {
		t.Fatal(err)
	}
	err = s.Ping(ctx)
	if err == nil || !store.Transient(err) {
		t.Errorf("Transient(%v) = false on a terminated connection, want true", err)
	}
	if err := s.Ping(ctx); err != nil {
		t.Errorf("the pool did not reconnect: %v", err)
	}

	_, err = store.Open(ctx, "postgres://nobody@127.0.0.1:1/none?sslmode=disable&connect_timeout=2")
	if err == nil || !store.Transient(err) {
		t.Errorf("Transient(%v) = false on a refused connection, want true", err)
	}
}

// TestBorrowLeavesThePoolOpen: a borrowed pool stays its owner's.
func TestBorrowLeavesThePoolOpen(t *testing.T) {
	_, pool := newStore(t)
	s := store.Borrow(pool)
	if err := s.Ping(t.Context()); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if err := pool.Ping(t.Context()); err != nil {
		t.Errorf("the borrowed pool after Close: %v, want it open", err)
	}
}
