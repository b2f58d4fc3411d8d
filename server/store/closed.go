package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// DeliverySeen reports whether a webhook delivery is already recorded. Intake
// asks before changes that are not part of RecordDelivery's transaction, so
// that a redelivery changes nothing.
func (s *Store) DeliverySeen(ctx context.Context, id string) (bool, error) {
	var seen bool
	err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM webhook_deliveries WHERE delivery_id = $1)`, id).Scan(&seen)
	if err != nil {
		return false, fmt.Errorf("look up delivery %s: %w", id, err)
	}
	return seen, nil
}

// OutcomeClosed is the outcome of a pull_request closed delivery.
const OutcomeClosed = "closed"

const (
	supersedeClosed = `UPDATE review_runs
		SET status = 'superseded', status_reason = 'pull request closed', finished_at = now()
		WHERE status = 'queued' AND mode = 'pr' AND repository = $1 AND pr_number = $2`

	cancelClosed = `UPDATE review_runs SET cancel_requested = true
		WHERE status = 'running' AND mode = 'pr' AND repository = $1 AND pr_number = $2`

	setDeliveryDetail = `UPDATE webhook_deliveries SET detail = $2 WHERE delivery_id = $1`
)

// Closing is a pull request's closing: its number, whether it was merged,
// and when it closed (GitHub's closed_at; the zero time means now).
type Closing struct {
	Number int
	Merged bool
	At     time.Time
}

// ClosedResult is what ClosePullRequest did: the delivery's result and the
// outcomes it gave ledger entries (none for a redelivery).
type ClosedResult struct {
	DeliveryResult
	Outcomes []SetOutcome
}

// ClosePullRequest records the delivery of a pull request's closing (d.ID
// required, d.Repository its owner/name) in one transaction: queued runs
// are recorded superseded, a running run is asked to stop (its worker
// records it superseded), the closing is kept (pr_closings, unless a later
// one is) and every ledger entry without an outcome gets the one
// review.OutcomeOf decides (setOutcomes). A redelivery is reported
// Duplicate and changes nothing.
func (s *Store) ClosePullRequest(ctx context.Context, d Delivery, c Closing) (ClosedResult, error) {
	d.Outcome = OutcomeClosed
	d.PRNumber = c.Number
	if c.At.IsZero() {
		c.At = time.Now()
	}
	var res ClosedResult
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		isNew, err := insertDeliveryTx(ctx, tx, d)
		if err != nil {
			return err
		}
		if !isNew {
			res.Duplicate = true
			return nil
		}
		if _, err := tx.Exec(ctx, lockPullRequest, d.Repository, c.Number); err != nil {
			return err
		}
		if err := stopRuns(ctx, tx, d, c.Number); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, upsertClosing, d.Repository, c.Number, d.InstallationID, d.RepositoryID, c.Merged, c.At); err != nil {
			return err
		}
		res.Outcomes, err = setOutcomes(ctx, tx, d.Repository, c)
		return err
	})
	if err != nil {
		return ClosedResult{}, fmt.Errorf("record closing of %s#%d: %w", d.Repository, c.Number, err)
	}
	return res, nil
}

// stopRuns supersedes the queued runs of a closed pull request and asks its
// running one to stop, and says so on the delivery.
func stopRuns(ctx context.Context, tx pgx.Tx, d Delivery, number int) error {
	superseded, err := tx.Exec(ctx, supersedeClosed, d.Repository, number)
	if err != nil {
		return err
	}
	cancelled, err := tx.Exec(ctx, cancelClosed, d.Repository, number)
	if err != nil {
		return err
	}
	detail := fmt.Sprintf("%d queued runs superseded, %d running runs asked to stop",
		superseded.RowsAffected(), cancelled.RowsAffected())
	_, err = tx.Exec(ctx, setDeliveryDetail, d.ID, detail)
	return err
}
