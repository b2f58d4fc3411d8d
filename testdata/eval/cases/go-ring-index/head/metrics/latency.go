package metrics

import (
	"sync"
	"time"
)

// Latencies records the last len(ring) request latencies.
type Latencies struct {
	mu   sync.Mutex
	ring []time.Duration
	next int
	full bool
}

// NewLatencies keeps the last n latencies.
func NewLatencies(n int) *Latencies {
	return &Latencies{ring: make([]time.Duration, n)}
}

// Add records d, overwriting the oldest when full.
func (l *Latencies) Add(d time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ring[l.next] = d
	l.next++
	if l.next > len(l.ring) {
		l.next = 0
		l.full = true
	}
}

// Snapshot returns the recorded latencies.
func (l *Latencies) Snapshot() []time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.full {
		return append([]time.Duration(nil), l.ring...)
	}
	return append([]time.Duration(nil), l.ring[:l.next]...)
}
