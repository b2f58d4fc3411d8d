// Package retry is MergeGuard's one implementation of waiting before trying
// again: how long a server asks to wait (Retry-After), exponential backoff
// with jitter, and a sleep that ends with its context. The GitHub transport,
// the LLM client and the review workers all use it.
package retry

import (
	"context"
	"math"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// After reads the Retry-After header of h (RFC 9110 §10.2.3): a number of
// seconds (a decimal fraction is accepted, as some model servers send it) or
// an HTTP date, which is measured from now. A date in the past means no
// wait. It reports false when the header is absent or unreadable.
func After(h http.Header, now time.Time) (time.Duration, bool) {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s < 0 || s > maxSeconds {
			return 0, false
		}
		return time.Duration(s * float64(time.Second)), true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}

// maxSeconds bounds a Retry-After in seconds so that the conversion to a
// Duration cannot overflow; no server means more than a year.
const maxSeconds = 365 * 24 * 3600

// Backoff is an exponential backoff: Base before the first retry, doubled
// for each further one, never more than Max (when Max is set).
type Backoff struct {
	Base time.Duration
	Max  time.Duration
}

// Delay is the wait before retry number attempt (1 for the first), without
// jitter.
func (b Backoff) Delay(attempt int) time.Duration {
	d := b.Base
	for i := 1; i < attempt && d > 0 && d <= math.MaxInt64/2 && (b.Max <= 0 || d < b.Max); i++ {
		d *= 2
	}
	if b.Max > 0 {
		d = min(d, b.Max)
	}
	return max(d, 0)
}

// Jittered is Delay(attempt) spread by ±frac (0 ≤ frac ≤ 1) at random, so
// that the retries of one outage do not arrive together.
func (b Backoff) Jittered(attempt int, frac float64) time.Duration {
	return Jitter(b.Delay(attempt), frac)
}

// Jitter returns d moved by a random amount of at most frac·d either way.
func Jitter(d time.Duration, frac float64) time.Duration {
	if d <= 0 || frac <= 0 {
		return d
	}
	spread := (rand.Float64()*2 - 1) * frac * float64(d) //nolint:gosec // backoff jitter needs no cryptographic randomness
	return max(d+time.Duration(spread), 0)
}

// Sleep waits d, or until ctx ends, whichever is first; it returns ctx's
// error in the second case. A d of zero or less returns at once.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
