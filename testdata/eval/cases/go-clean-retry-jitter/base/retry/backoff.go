package retry

import "time"

// Backoff returns the wait before attempt n (from 0): base doubled each
// attempt, at most max.
func Backoff(n int, base, max time.Duration) time.Duration {
	d := base << n
	if d <= 0 || d > max {
		return max
	}
	return d
}
