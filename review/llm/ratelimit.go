package llm

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// retryHint reads how long the server asks to wait before retrying, from
// (in order) retry-after-ms, Retry-After (seconds or an HTTP date) and
// OpenAI's x-ratelimit-reset-requests / x-ratelimit-reset-tokens (Go-style
// durations such as "1s" or "6m0s"). Of the reset headers, those whose
// x-ratelimit-remaining-* is 0 name the exhausted limit; when none says
// so, the longest reset is used.
func retryHint(h http.Header, now time.Time) (time.Duration, bool) {
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 {
			return time.Duration(ms * float64(time.Millisecond)), true
		}
	}
	if v := strings.TrimSpace(h.Get("Retry-After")); v != "" {
		if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 {
			return time.Duration(s * float64(time.Second)), true
		}
		if t, err := http.ParseTime(v); err == nil {
			return max(t.Sub(now), 0), true
		}
	}
	var exhausted, longest time.Duration
	var found bool
	for _, kind := range []string{"requests", "tokens"} {
		d, err := time.ParseDuration(strings.TrimSpace(h.Get("X-Ratelimit-Reset-" + kind)))
		if err != nil || d < 0 {
			continue
		}
		found = true
		longest = max(longest, d)
		if strings.TrimSpace(h.Get("X-Ratelimit-Remaining-"+kind)) == "0" {
			exhausted = max(exhausted, d)
		}
	}
	if exhausted > 0 {
		return exhausted, true
	}
	return longest, found
}
