package store

import (
	"context"
	"fmt"

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

// ClosePullRequest records the delivery of a pull request's closing (d.ID
// required, d.Repository its owner/name) and stops the pull request's runs,
// in one transaction: queued runs are recorded superseded, a running run is
// asked to stop (its worker records it superseded). A redelivery is reported
// Duplicate and changes nothing.
func (s *Store) ClosePullRequest(ctx context.Context, d Delivery, number int) (DeliveryResult, error) {
	d.Outcome = OutcomeClosed
	d.PRNumber = number
	var res DeliveryResult
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		isNew, err := insertDeliveryTx(ctx, tx, d)
		if err != nil {
			return err
		}
		if !isNew {
			res.Duplicate = true
			return nil
		}
		if _, err := tx.Exec(ctx, lockPullRequest, d.Repository, number); err != nil {
			return err
		}
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
	})
	if err != nil {
		return DeliveryResult{}, fmt.Errorf("record closing of %s#%d: %w", d.Repository, number, err)
	}
	return res, nil
}
