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

// SetupState is a /setup flow under way.
type SetupState struct {
	// StateHash and BrowserHash are the SHA-256 hashes of the state sent
	// to GitHub and of the nonce in the starting browser's cookie.
	StateHash, BrowserHash []byte
	// WebURL is the GitHub the manifest was sent to.
	WebURL string
}

// CreateSetupState records a /setup flow, valid for ttl by the database's
// clock (replicas' clocks may differ). Expired states are deleted on the
// way.
func (s *Store) CreateSetupState(ctx context.Context, st SetupState, ttl time.Duration) error {
	if _, err := s.pool.Exec(ctx, `DELETE FROM setup_states WHERE expires_at < now()`); err != nil {
		return fmt.Errorf("create setup state: %w", err)
	}
	_, err := s.pool.Exec(ctx, `INSERT INTO setup_states (state_hash, browser_hash, web_url, expires_at)
		VALUES ($1, $2, $3, now() + make_interval(secs => $4))`, st.StateHash, st.BrowserHash, st.WebURL, ttl.Seconds())
	if err != nil {
		return fmt.Errorf("create setup state: %w", err)
	}
	return nil
}

// TakeSetupState uses up the state whose hash is stateHash, when the
// browser's nonce hash matches: it can then never be used again. It
// returns the GitHub web URL the flow started with, or ErrSetupStateUnknown for a state never issued or already used,
// ErrSetupStateForeign when another browser started it (the state stays,
// for its own browser) and ErrSetupStateExpired when it is too old.
func (s *Store) TakeSetupState(ctx context.Context, stateHash, browserHash []byte) (webURL string, err error) {
	var live bool
	err = s.pool.QueryRow(ctx, `DELETE FROM setup_states WHERE state_hash = $1 AND browser_hash = $2
		RETURNING web_url, expires_at > now()`, stateHash, browserHash).Scan(&webURL, &live)
	if err == nil {
		if !live {
			return "", ErrSetupStateExpired
		}
		return webURL, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return "", fmt.Errorf("take setup state: %w", err)
	}
	var exists bool
	if err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM setup_states WHERE state_hash = $1)`, stateHash).Scan(&exists); err != nil {
		return "", fmt.Errorf("take setup state: %w", err)
	}
	if exists {
		return "", ErrSetupStateForeign
	}
	return "", ErrSetupStateUnknown
}
