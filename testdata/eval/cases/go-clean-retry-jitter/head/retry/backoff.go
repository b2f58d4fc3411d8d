package retry

import (
	"math/rand/v2"
	"time"
)

// Backoff returns the wait before attempt n (from 0): a random duration
// between zero and base doubled each attempt, capped at max (full jitter).
func Backoff(n int, base, max time.Duration) time.Duration {
	d := base << n
	if d <= 0 || d > max {
		d = max
	}
	return rand.N(d + 1)
}
