package metrics

import (
	"sync"
	"time"
)

// Latencies records request latencies.
type Latencies struct {
	mu  sync.Mutex
	all []time.Duration
}

// Add records d.
func (l *Latencies) Add(d time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.all = append(l.all, d)
}
