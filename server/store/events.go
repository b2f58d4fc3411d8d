package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/rs/zerolog"

	"github.com/mergeguard/mergeguard/review"
)

// Notification channels. Payloads: "<run id>:<seq>" on ChannelEvents (a row
// of review_events was inserted), "<run id>" on ChannelJobs (a run became
// queued).
const (
	ChannelEvents = "mergeguard_events"
	ChannelJobs   = "mergeguard_jobs"
)

// StoredEvent is a pipeline event as stored in a run's event log.
type StoredEvent struct {
	RunID string           `json:"run_id"`
	Seq   int              `json:"seq"`
	Type  review.EventType `json:"type"`
	Stage string           `json:"stage,omitempty"`
	Agent string           `json:"agent,omitempty"`
	Time  time.Time        `json:"time"`
	// Data is the event's JSON object ({} when the event had none).
	Data json.RawMessage `json:"data"`
}

// appendEvent bumps the run's event_seq and inserts the event in one
// statement: the run row stays locked until commit, so events of a run
// commit in seq order and a reader never sees seq n+1 before n.
const appendEvent = `WITH next AS (
	    UPDATE review_runs SET event_seq = event_seq + 1 WHERE id = $1 RETURNING id, event_seq)
	INSERT INTO review_events (run_id, seq, type, stage, agent, data, created_at)
	SELECT id, event_seq, $2, $3, $4, $5, COALESCE($6, now()) FROM next
	RETURNING seq`

// AppendEvent adds e to the run's event log and returns its sequence number
// (1, 2, ... per run). e.Data must marshal to a JSON object (nil is stored
// as {}); a zero e.Time is stored as the current time. Listeners of
// ChannelEvents are notified when the event commits.
func (s *Store) AppendEvent(ctx context.Context, runID string, e review.Event) (seq int, err error) {
	if !validID(runID) {
		return 0, fmt.Errorf("append event to run %q: %w", runID, ErrNotFound)
	}
	data := []byte(`{}`)
	if e.Data != nil {
		if data, err = json.Marshal(e.Data); err != nil {
			return 0, fmt.Errorf("append %s event to run %s: %w", e.Type, runID, err)
		}
	}
	var at *time.Time
	if !e.Time.IsZero() {
		at = &e.Time
	}
	err = s.pool.QueryRow(ctx, appendEvent, runID, e.Type, e.Stage, e.Agent, data, at).Scan(&seq)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, fmt.Errorf("append %s event to run %s: %w", e.Type, runID, ErrNotFound)
	}
	if err != nil {
		return 0, fmt.Errorf("append %s event to run %s: %w", e.Type, runID, err)
	}
	return seq, nil
}

const selectEvents = `SELECT run_id::text, seq, type, stage, agent, created_at, data
	FROM review_events WHERE run_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`

// Events returns up to limit events of a run with seq greater than afterSeq,
// in seq order (limit <= 0 means 1000).
func (s *Store) Events(ctx context.Context, runID string, afterSeq, limit int) ([]StoredEvent, error) {
	if !validID(runID) {
		return nil, fmt.Errorf("read events of run %q: %w", runID, ErrNotFound)
	}
	if limit <= 0 {
		limit = 1000
	}
	rows, err := s.pool.Query(ctx, selectEvents, runID, afterSeq, limit)
	if err != nil {
		return nil, fmt.Errorf("read events of run %s: %w", runID, err)
	}
	events, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (StoredEvent, error) {
		var e StoredEvent
		err := row.Scan(&e.RunID, &e.Seq, &e.Type, &e.Stage, &e.Agent, &e.Time, &e.Data)
		return e, err
	})
	if err != nil {
		return nil, fmt.Errorf("read events of run %s: %w", runID, err)
	}
	return events, nil
}

// Backoff between reconnections of Listen.
const (
	listenMinBackoff = 100 * time.Millisecond
	listenMaxBackoff = 5 * time.Second
)

// Listen listens on a notification channel (ChannelEvents, ChannelJobs) and
// calls fn with each notification's payload until ctx is done. It uses its own connection, outside the pool, and reconnects
// when that connection is lost (logging through zerolog.Ctx(ctx)).
//
// Each time the listener is (re)connected, fn is called with an empty
// payload: notifications sent while it was not listening are lost, so the
// caller re-reads what it watches. The first empty call also tells that the
// listener is ready. fn runs on Listen's goroutine and must return quickly.
func (s *Store) Listen(ctx context.Context, channel string, fn func(payload string)) {
	backoff := listenMinBackoff
	for {
		listened, err := s.listenOnce(ctx, channel, fn)
		if ctx.Err() != nil {
			return
		}
		if listened {
			backoff = listenMinBackoff
		}
		zerolog.Ctx(ctx).Warn().Err(err).Str("channel", channel).Dur("retry_in", backoff).
			Msg("listen: connection lost; reconnecting")
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, listenMaxBackoff)
	}
}

// listenOnce connects, listens and forwards notifications until the
// connection fails or ctx is done; listened reports whether LISTEN succeeded.
func (s *Store) listenOnce(ctx context.Context, channel string, fn func(string)) (listened bool, err error) {
	conn, err := pgx.ConnectConfig(ctx, s.pool.Config().ConnConfig.Copy())
	if err != nil {
		return false, fmt.Errorf("connect: %w", err)
	}
	defer func() {
		closeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		defer cancel()
		_ = conn.Close(closeCtx) // the connection is done with either way
	}()
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{channel}.Sanitize()); err != nil {
		return false, fmt.Errorf("listen %s: %w", channel, err)
	}
	fn("")
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return true, fmt.Errorf("wait for notification on %s: %w", channel, err)
		}
		fn(n.Payload)
	}
}
