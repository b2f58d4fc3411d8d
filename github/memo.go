package github

import (
	"context"
	"errors"
	"sync"

	"github.com/mergeguard/mergeguard/review"
)

// memo caches the result of one fetch per key for the life of a Source.
// Concurrent callers of the same key wait for the one fetch in flight.
// Successes and ErrNotFound are kept; other errors (a cancelled context, a
// rate limit) are not, so a later call tries again.
type memo[K comparable, V any] struct {
	mu      sync.Mutex
	entries map[K]*memoEntry[V]
}

type memoEntry[V any] struct {
	done chan struct{}
	val  V
	err  error
}

// get returns the value of key, calling fetch if no call has stored it.
func (m *memo[K, V]) get(ctx context.Context, key K, fetch func() (V, error)) (V, error) {
	m.mu.Lock()
	if m.entries == nil {
		m.entries = make(map[K]*memoEntry[V])
	}
	e, ok := m.entries[key]
	if !ok {
		e = &memoEntry[V]{done: make(chan struct{})}
		m.entries[key] = e
		m.mu.Unlock()
		e.val, e.err = fetch()
		if e.err != nil && !errors.Is(e.err, review.ErrNotFound) {
			m.mu.Lock()
			delete(m.entries, key)
			m.mu.Unlock()
		}
		close(e.done)
		return e.val, e.err
	}
	m.mu.Unlock()
	select {
	case <-e.done:
		return e.val, e.err
	case <-ctx.Done():
		var zero V
		return zero, ctx.Err()
	}
}

// peek returns the stored value of key without fetching it.
func (m *memo[K, V]) peek(key K) (V, bool) {
	m.mu.Lock()
	e, ok := m.entries[key]
	m.mu.Unlock()
	var zero V
	if !ok {
		return zero, false
	}
	select {
	case <-e.done:
		if e.err != nil {
			return zero, false
		}
		return e.val, true
	default:
		return zero, false
	}
}
