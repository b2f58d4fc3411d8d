package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Why TakeSetupState refuses a state. Each is safe to show to the person
// in the browser.
var (
	ErrSetupStateUnknown = errors.New("this setup link is unknown or was already used")
	ErrSetupStateForeign = errors.New("this setup was started in another browser")
	ErrSetupStateExpired = errors.New("this setup link has expired")
)

// CreateSetupState records a /setup flow: the SHA-256 hashes of the state
// sent to GitHub and of the starting browser's nonce, valid for ttl by
// the database's clock (replicas' clocks may differ). Expired states are
// deleted on the way.
func (s *Store) CreateSetupState(ctx context.Context, stateHash, browserHash []byte, ttl time.Duration) error {
	if _, err := s.pool.Exec(ctx, `DELETE FROM setup_states WHERE expires_at < now()`); err != nil {
		return fmt.Errorf("create setup state: %w", err)
	}
	_, err := s.pool.Exec(ctx, `INSERT INTO setup_states (state_hash, browser_hash, expires_at)
		VALUES ($1, $2, now() + make_interval(secs => $3))`, stateHash, browserHash, ttl.Seconds())
	if err != nil {
		return fmt.Errorf("create setup state: %w", err)
	}
	return nil
}

// TakeSetupState uses up the state whose hash is stateHash, when the
// browser's nonce hash matches: it can then never be used again. It
// returns ErrSetupStateUnknown for a state never issued or already used,
// ErrSetupStateForeign when another browser started it (the state stays,
// for its own browser) and ErrSetupStateExpired when it is too old.
func (s *Store) TakeSetupState(ctx context.Context, stateHash, browserHash []byte) error {
	var live bool
	err := s.pool.QueryRow(ctx, `DELETE FROM setup_states WHERE state_hash = $1 AND browser_hash = $2
		RETURNING expires_at > now()`, stateHash, browserHash).Scan(&live)
	if err == nil {
		if !live {
			return ErrSetupStateExpired
		}
		return nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("take setup state: %w", err)
	}
	var exists bool
	if err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM setup_states WHERE state_hash = $1)`, stateHash).Scan(&exists); err != nil {
		return fmt.Errorf("take setup state: %w", err)
	}
	if exists {
		return ErrSetupStateForeign
	}
	return ErrSetupStateUnknown
}
