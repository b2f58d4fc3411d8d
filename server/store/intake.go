package store

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Group commit: Intake records concurrent deliveries in shared
// transactions, so that a durable commit (one WAL flush) is paid once per
// batch of deliveries rather than once per delivery.

// Defaults of IntakeOptions.
const (
	DefaultBatchDeliveries = 64
	DefaultBatchWait       = 2 * time.Millisecond
	DefaultBatchTimeout    = 30 * time.Second
)

// IntakeOptions bound an Intake's batches; zero fields take the defaults.
type IntakeOptions struct {
	// MaxDeliveries is the most deliveries one transaction records.
	MaxDeliveries int
	// MaxWait is how long a batch collects deliveries after its first
	// before it is written, unless it fills up first. A batch is written
	// at once when nothing suggests company: no other batch is being
	// written and the previous delivery came more than MaxWait earlier.
	MaxWait time.Duration
	// Timeout bounds the writing of one batch.
	Timeout time.Duration
}

// Intake is a group-commit writer of webhook deliveries. Its RecordDelivery
// does what Store.RecordDelivery does, with the same results, but the
// deliveries of concurrent calls are collected for up to MaxWait (or until
// MaxDeliveries are) and recorded in one transaction; each call returns
// only once that transaction committed. A batch whose transaction fails is
// not reported failed as a whole: each of its calls then records its own
// delivery in a transaction of its own (Store.RecordDelivery), so that one
// delivery the database refuses, or a transient failure, costs no other
// delivery its acknowledgement. Whatever was committed stays recorded once:
// a delivery id is a primary key, so a delivery whose batch did commit
// although its commit reported an error is found recorded (Duplicate) by
// its second attempt.
//
// An Intake has no goroutine of its own: the first call of a batch writes
// it. It is safe for concurrent use; the zero value is not usable (use
// Store.NewIntake).
type Intake struct {
	store *Store
	opts  IntakeOptions

	mu      sync.Mutex
	open    *batch        // collecting deliveries, nil when none is
	writing int           // batches being written
	idle    chan struct{} // closed when writing drops to 0
	last    time.Time     // when the latest delivery joined
}

// batch is one group of deliveries recorded in one transaction.
type batch struct {
	items []batchItem
	// steady is set when the batch opened less than MaxWait after the
	// delivery before: deliveries are coming steadily, and more will join
	// if it waits.
	steady bool
	// full is closed when the batch holds MaxDeliveries.
	full chan struct{}
	// done is closed once results and err are set.
	done    chan struct{}
	results []DeliveryResult
	err     error
}

type batchItem struct {
	d   Delivery
	run *NewRun
}

// NewIntake returns a group-commit writer of deliveries on s.
func (s *Store) NewIntake(opts IntakeOptions) *Intake {
	if opts.MaxDeliveries <= 0 {
		opts.MaxDeliveries = DefaultBatchDeliveries
	}
	if opts.MaxWait <= 0 {
		opts.MaxWait = DefaultBatchWait
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultBatchTimeout
	}
	return &Intake{store: s, opts: opts}
}

// RecordDelivery records d and queues run as Store.RecordDelivery does,
// in a transaction shared with concurrent calls; it returns once that
// transaction committed (or, when it failed, once d's own transaction
// did). An error means d may not be recorded: it must not be acknowledged.
func (w *Intake) RecordDelivery(ctx context.Context, d Delivery, run *NewRun) (DeliveryResult, error) {
	b, i, leader := w.join(d, run)
	if leader {
		w.write(ctx, b)
	} else {
		select {
		case <-b.done:
		case <-ctx.Done():
			return DeliveryResult{}, fmt.Errorf("record delivery %s: %w", d.ID, context.Cause(ctx))
		}
	}
	if b.err != nil {
		// Recorded alone: see Intake.
		return w.store.RecordDelivery(ctx, d, run)
	}
	return b.results[i], nil
}

// join adds a delivery to the open batch, opening one when there is none
// (the caller then leads it: it writes it), and returns the batch and the
// delivery's index in it.
func (w *Intake) join(d Delivery, run *NewRun) (b *batch, i int, leader bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := time.Now()
	if w.open == nil {
		w.open = &batch{full: make(chan struct{}), done: make(chan struct{}), steady: now.Sub(w.last) < w.opts.MaxWait}
		leader = true
	}
	w.last = now
	b = w.open
	i = len(b.items)
	b.items = append(b.items, batchItem{d: d, run: run})
	if len(b.items) >= w.opts.MaxDeliveries {
		w.open = nil
		close(b.full)
	}
	return b, i, leader
}

// write collects b (collect), then closes it to newcomers and records
// it. The transaction does not end with the leader's request: the other
// deliveries of the batch wait for it.
func (w *Intake) write(ctx context.Context, b *batch) {
	w.collect(b)
	w.mu.Lock()
	if w.open == b {
		w.open = nil
	}
	if w.writing == 0 {
		w.idle = make(chan struct{})
	}
	w.writing++
	w.mu.Unlock()

	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), w.opts.Timeout)
	defer cancel()
	b.results, b.err = w.store.recordBatch(ctx, b.items)
	close(b.done)

	w.mu.Lock()
	if w.writing--; w.writing == 0 {
		close(w.idle)
	}
	w.mu.Unlock()
}

// collect waits while b gathers deliveries: until it is full or MaxWait
// passed when deliveries come steadily (b.steady); otherwise while other
// batches are being written, until they are (or it is full, or MaxWait
// passed); otherwise not at all. A lone delivery thus waits for nothing;
// under load each batch gathers what arrived during the previous commit;
// and at a steady moderate rate, when commits are quick, deliveries still
// share commits rather than each paying its own.
func (w *Intake) collect(b *batch) {
	var idle chan struct{} // nil when steady: not cut short
	if !b.steady {
		w.mu.Lock()
		busy := w.writing > 0
		idle = w.idle
		w.mu.Unlock()
		if !busy {
			return
		}
	}
	timer := time.NewTimer(w.opts.MaxWait)
	defer timer.Stop()
	select {
	case <-b.full:
	case <-timer.C:
	case <-idle:
	}
}
