package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// This file queues and hands out gate refreshes: when a person dismisses a
// finding (or a thread change moves one), the check of the pull request's
// current head completes again from its ledger, and the bot's
// REQUEST_CHANGES reviews are dismissed when nothing blocks, without
// waiting for the next push. A refresh is queued in the transaction of the
// change, so it survives restarts, and any replica's worker takes it.

// MaxGateAttempts is how many times a gate refresh is tried before it is
// dropped (the next review refreshes the gate in any case).
const MaxGateAttempts = 5

// enqueueGate queues a gate refresh of repository $1's pull request $2 for
// the installation of its newest pull request run; a refresh already
// queued is moved to now (and handed out again). A pull request with no
// run has no check to refresh: nothing is queued.
const enqueueGate = `INSERT INTO gate_refreshes AS g (repository, pr_number, installation_id)
	SELECT repository, pr_number, installation_id FROM review_runs
	WHERE repository = $1 AND pr_number = $2 AND mode = 'pr'
	ORDER BY created_at DESC LIMIT 1
	ON CONFLICT (repository, pr_number) DO UPDATE
	SET queued_at = clock_timestamp(), claimed_until = '-infinity', attempts = 0, installation_id = EXCLUDED.installation_id`

// GateRefresh is a queued refresh of a pull request's gate.
type GateRefresh struct {
	Repository     string
	PRNumber       int
	InstallationID int64
	// QueuedAt tells this refresh from one queued again while it ran.
	QueuedAt time.Time
	Attempts int
}

// ClaimGateRefresh takes the oldest gate refresh no worker holds, for
// lease; nil when there is none. Refreshes tried MaxGateAttempts times
// are dropped.
func (s *Store) ClaimGateRefresh(ctx context.Context, lease time.Duration) (*GateRefresh, error) {
	if _, err := s.pool.Exec(ctx, `DELETE FROM gate_refreshes WHERE attempts >= $1 AND claimed_until < now()`, MaxGateAttempts); err != nil {
		return nil, fmt.Errorf("drop spent gate refreshes: %w", err)
	}
	var g GateRefresh
	err := s.pool.QueryRow(ctx, `UPDATE gate_refreshes SET claimed_until = now() + $1::interval, attempts = attempts + 1
		WHERE (repository, pr_number) = (SELECT repository, pr_number FROM gate_refreshes
		        WHERE claimed_until < now() ORDER BY queued_at LIMIT 1 FOR UPDATE SKIP LOCKED)
		RETURNING repository, pr_number, installation_id, queued_at, attempts`, lease).
		Scan(&g.Repository, &g.PRNumber, &g.InstallationID, &g.QueuedAt, &g.Attempts)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("claim gate refresh: %w", err)
	}
	return &g, nil
}

// FinishGateRefresh removes a refresh that was carried out, unless it was
// queued again meanwhile (that one is handed out again).
func (s *Store) FinishGateRefresh(ctx context.Context, g GateRefresh) error {
	_, err := s.pool.Exec(ctx, `DELETE FROM gate_refreshes WHERE repository = $1 AND pr_number = $2 AND queued_at = $3`,
		g.Repository, g.PRNumber, g.QueuedAt)
	if err != nil {
		return fmt.Errorf("finish gate refresh of %s#%d: %w", g.Repository, g.PRNumber, err)
	}
	return nil
}
