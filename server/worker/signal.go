package worker

import "sync"

// broadcast wakes every goroutine waiting on it at once: Wait returns a
// channel that Notify closes (and replaces). Idle workers wait on it for a
// queued job's notification; the one that loses the claim race goes back to
// waiting, which SKIP LOCKED makes cheap.
type broadcast struct {
	mu sync.Mutex
	ch chan struct{}
}

func newBroadcast() *broadcast { return &broadcast{ch: make(chan struct{})} }

// Wait returns a channel closed at the next Notify.
func (b *broadcast) Wait() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.ch
}

// Notify wakes every current waiter.
func (b *broadcast) Notify() {
	b.mu.Lock()
	defer b.mu.Unlock()
	close(b.ch)
	b.ch = make(chan struct{})
}
