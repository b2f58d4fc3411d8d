// Package events fans the pipeline's event notifications out to the live
// streams of this replica. Events themselves live in Postgres; every insert
// sends a NOTIFY on the mergeguard_events channel ("<run id>:<seq>"), which
// reaches every replica, so a client may watch a review run by any of them.
package events

import (
	"context"
	"strings"
	"sync"
)

// Channel is the Postgres notification channel of review events.
const Channel = "mergeguard_events"

// Listener runs a LISTEN on a channel, calling fn for each payload, until ctx
// is done (server/store.Store is one).
type Listener interface {
	Listen(ctx context.Context, channel string, fn func(payload string))
}

// Hub wakes subscribers of a run when one of its events is stored.
type Hub struct {
	mu   sync.Mutex
	subs map[string]map[chan struct{}]struct{}
}

// NewHub returns an empty hub; feed it with Run or Notify.
func NewHub() *Hub {
	return &Hub{subs: make(map[string]map[chan struct{}]struct{})}
}

// Run listens for event notifications until ctx is done.
func (h *Hub) Run(ctx context.Context, l Listener) {
	l.Listen(ctx, Channel, h.Notify)
}

// Subscribe returns a channel that receives a value (coalesced) whenever an
// event of runID may have been stored, and a function to unsubscribe.
func (h *Hub) Subscribe(runID string) (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	h.mu.Lock()
	m := h.subs[runID]
	if m == nil {
		m = make(map[chan struct{}]struct{})
		h.subs[runID] = m
	}
	m[ch] = struct{}{}
	h.mu.Unlock()
	return ch, func() {
		h.mu.Lock()
		delete(h.subs[runID], ch)
		if len(h.subs[runID]) == 0 {
			delete(h.subs, runID)
		}
		h.mu.Unlock()
	}
}

// Notify handles one notification payload "<run id>:<seq>". The empty
// payload, which the Listener sends after each (re)connect, wakes every
// subscriber: notifications may have been missed while it was down.
func (h *Hub) Notify(payload string) {
	if payload == "" {
		h.WakeAll()
		return
	}
	runID, _, _ := strings.Cut(payload, ":")
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range h.subs[runID] {
		wake(ch)
	}
}

// WakeAll wakes every subscriber, so each re-reads its run's log: the
// safety net for notifications missed while the listening connection was
// being re-established.
func (h *Hub) WakeAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, m := range h.subs {
		for ch := range m {
			wake(ch)
		}
	}
}

// Subscribers counts the open subscriptions (for metrics and tests).
func (h *Hub) Subscribers() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, m := range h.subs {
		n += len(m)
	}
	return n
}

func wake(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default: // a wake-up is already pending
	}
}
