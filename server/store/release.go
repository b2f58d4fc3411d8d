package store

import (
	"context"
	"fmt"
)

const releaseRun = `UPDATE review_runs SET
	    status = CASE WHEN cancel_requested THEN 'superseded' ELSE 'queued' END,
	    status_reason = CASE WHEN cancel_requested THEN 'superseded by a newer head'
	                         ELSE 'handed back by a stopping worker' END,
	    attempts = CASE WHEN cancel_requested THEN attempts ELSE greatest(attempts - 1, 0) END,
	    run_after = now(),
	    locked_by = CASE WHEN cancel_requested THEN locked_by END,
	    lease_expires_at = NULL,
	    finished_at = CASE WHEN cancel_requested THEN now() END,
	    duration_ms = CASE WHEN cancel_requested THEN (extract(epoch FROM now() - started_at) * 1000)::bigint END
	WHERE id = $1 AND status = 'running' AND locked_by = $2`

// ReleaseRun gives back a run its worker is not done with, such as at
// shutdown: the run is queued again at once and the interrupted attempt is
// not counted (it did not fail). A run a newer head asked to stop is
// recorded superseded instead. Only the lease holder may release
// (ErrLeaseLost).
func (s *Store) ReleaseRun(ctx context.Context, runID, workerID string) error {
	if !validID(runID) {
		return fmt.Errorf("release run %q: %w", runID, ErrNotFound)
	}
	tag, err := s.pool.Exec(ctx, releaseRun, runID, workerID)
	if err != nil {
		return fmt.Errorf("release run %s: %w", runID, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("release run %s: %w", runID, ErrLeaseLost)
	}
	return nil
}
