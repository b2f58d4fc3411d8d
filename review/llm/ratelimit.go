package llm

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/mergeguard/mergeguard/internal/retry"
)

// retryHint reads how long the server asks to wait before retrying, from
// (in order) retry-after-ms, Retry-After (seconds or an HTTP date) and, on
// a 429 only, OpenAI's x-ratelimit-reset-requests / x-ratelimit-reset-tokens
// (Go-style durations such as "1s" or "6m0s") of the exhausted limit, the
// one whose x-ratelimit-remaining-* is 0. OpenAI sends the reset headers on
// every response, so on other statuses, or when no limit is exhausted, they
// say nothing about when to retry.
func retryHint(h http.Header, status int, now time.Time) (time.Duration, bool) {
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 {
			return time.Duration(ms * float64(time.Millisecond)), true
		}
	}
	if d, ok := retry.After(h, now); ok {
		return d, true
	}
	if status != http.StatusTooManyRequests {
		return 0, false
	}
	var wait time.Duration
	var found bool
	for _, kind := range []string{"requests", "tokens"} {
		if strings.TrimSpace(h.Get("X-Ratelimit-Remaining-"+kind)) != "0" {
			continue
		}
		d, err := time.ParseDuration(strings.TrimSpace(h.Get("X-Ratelimit-Reset-" + kind)))
		if err != nil || d < 0 {
			continue
		}
		wait, found = max(wait, d), true
	}
	return wait, found
}
