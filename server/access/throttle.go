package access

import (
	"math"
	"net"
	"net/http"
	"sync"
	"time"
)

// Limits of failed sign-ins (Throttle): per client address, AddressFailures
// in ThrottleWindow, then a wait that doubles with every further block
// (ThrottleWindow, twice that, ...) up to MaxThrottleDelay; overall,
// GlobalFailures per ThrottleWindow, whatever the address.
const (
	AddressFailures  = 10
	GlobalFailures   = 100
	ThrottleWindow   = time.Minute
	MaxThrottleDelay = time.Hour
	// maxAddresses bounds the addresses remembered; beyond it new
	// addresses are limited by the global bucket only.
	maxAddresses = 10_000
)

// Throttle limits failed sign-in attempts, per client address and overall,
// in this process: each replica counts its own (a client that spreads its
// guesses over n replicas gets n times the budget). The zero value is not
// usable; make one with NewThrottle.
type Throttle struct {
	mu     sync.Mutex
	now    func() time.Time
	addrs  map[string]*strikes
	tokens float64   // the global bucket: failures still allowed
	filled time.Time // when tokens was last refilled
}

// strikes is one address's record.
type strikes struct {
	failures     int       // in the window that began at since
	since        time.Time // start of the current window
	blocks       int       // blocks so far: the next lasts ThrottleWindow << blocks
	blockedUntil time.Time
}

// NewThrottle returns a throttle with no failures recorded.
func NewThrottle() *Throttle {
	return &Throttle{now: time.Now, addrs: map[string]*strikes{}, tokens: GlobalFailures}
}

// ClientAddr is the address a throttle counts r under: the connection's
// IP. Forwarding headers are not trusted (any client can send them), so
// behind a reverse proxy every client shares the proxy's address.
func ClientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// Wait returns how long addr must wait before its next attempt: 0 when it
// may try now.
func (t *Throttle) Wait(addr string) time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	t.refill(now)
	var wait time.Duration
	if s := t.addrs[addr]; s != nil && now.Before(s.blockedUntil) {
		wait = s.blockedUntil.Sub(now)
	}
	if t.tokens < 1 {
		rate := float64(GlobalFailures) / float64(ThrottleWindow)
		wait = max(wait, time.Duration(math.Ceil((1-t.tokens)/rate)))
	}
	return wait
}

// Fail records a failed attempt of addr.
func (t *Throttle) Fail(addr string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	t.refill(now)
	t.tokens = max(t.tokens-1, 0)
	s := t.addrs[addr]
	if s == nil {
		if len(t.addrs) >= maxAddresses {
			t.sweep(now)
		}
		if len(t.addrs) >= maxAddresses {
			return
		}
		s = &strikes{since: now}
		t.addrs[addr] = s
	}
	if now.Sub(s.since) >= ThrottleWindow {
		s.failures, s.since = 0, now
	}
	s.failures++
	if s.failures >= AddressFailures {
		s.blockedUntil = now.Add(min(ThrottleWindow<<min(s.blocks, 30), MaxThrottleDelay))
		s.blocks++
		s.failures, s.since = 0, now
	}
}

// Succeed forgets addr's failures: it holds the token.
func (t *Throttle) Succeed(addr string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.addrs, addr)
}

// refill adds to the global bucket what the time since the last refill
// earned, up to GlobalFailures.
func (t *Throttle) refill(now time.Time) {
	if !t.filled.IsZero() {
		rate := float64(GlobalFailures) / float64(ThrottleWindow)
		t.tokens = min(t.tokens+float64(now.Sub(t.filled))*rate, GlobalFailures)
	}
	t.filled = now
}

// sweep forgets addresses that are not blocked and whose last block is
// over for longer than MaxThrottleDelay, and whose window has passed.
func (t *Throttle) sweep(now time.Time) {
	for addr, s := range t.addrs {
		if now.Sub(s.since) >= ThrottleWindow && now.Sub(s.blockedUntil) >= MaxThrottleDelay {
			delete(t.addrs, addr)
		}
	}
}
