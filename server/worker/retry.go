package worker

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"syscall"
	"time"

	"github.com/bradleyfalzon/ghinstallation/v2"
	gh "github.com/google/go-github/v60/github"
	"github.com/rs/zerolog"

	"github.com/mergeguard/mergeguard/server/store"
)

// Retry is the retry policy of failed runs: a run whose failure is
// transient (GitHub 5xx or rate limit, network trouble, the database out of
// reach, every LLM call of the review failing with a rate limit, server
// error or timeout after the LLM client's own retries) is
// queued again after Base·2^(attempt-1), at most Max, or later when the
// failing service asked for a longer wait. A run that fails for good, or has
// used its attempts (the run's max_attempts), is recorded failed.
type Retry struct {
	Base time.Duration
	Max  time.Duration
}

// delay returns how long to wait before attempt+1, given the attempt that
// just failed (1-based) and the wait the service asked for (0 if none). The
// computed backoff is jittered by ±20% so retries of one outage spread out.
func (r Retry) delay(attempt int, asked time.Duration) time.Duration {
	d := r.Base
	for i := 1; i < attempt && d < r.Max; i++ {
		d *= 2
	}
	d = min(d, r.Max)
	if d > 0 {
		d += time.Duration((rand.Float64()*0.4 - 0.2) * float64(d)) //nolint:gosec // backoff jitter needs no cryptographic randomness
	}
	return max(d, asked)
}

// transient reports whether err is worth retrying, and how long the failing
// service asked to wait (0 when it did not say). Model errors never get
// here: the pipeline turns them into failed agents (see llmUnavailable).
func transient(err error) (asked time.Duration, ok bool) {
	if errors.Is(err, errLLMUnavailable) || store.Transient(err) {
		return 0, true
	}
	var rate *gh.RateLimitError
	if errors.As(err, &rate) {
		return time.Until(rate.Rate.Reset.Time), true
	}
	var abuse *gh.AbuseRateLimitError
	if errors.As(err, &abuse) {
		return abuse.GetRetryAfter(), true
	}
	var ghErr *gh.ErrorResponse
	if errors.As(err, &ghErr) && ghErr.Response != nil {
		return retryableStatus(ghErr.Response.StatusCode, ghErr.Response.Header)
	}
	var tokenErr *ghinstallation.HTTPError // minting the installation token
	if errors.As(err, &tokenErr) && tokenErr.Response != nil {
		return retryableStatus(tokenErr.Response.StatusCode, tokenErr.Response.Header)
	}
	// Connection failures and timeouts; not every error of an HTTP client
	// (a url.Error wraps a refused installation token too). A request
	// whose connection closed before any answer fails with a url.Error
	// wrapping io.EOF.
	var opErr *net.OpError
	var netErr net.Error
	var urlErr *url.Error
	switch {
	case errors.As(err, &opErr),
		errors.As(err, &netErr) && netErr.Timeout(),
		errors.As(err, &urlErr) && errors.Is(urlErr.Err, io.EOF),
		errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.ECONNREFUSED):
		return 0, true
	}
	return 0, false
}

// retryableStatus says whether an HTTP status is worth retrying: 429 and
// server errors are, client errors are not.
func retryableStatus(code int, h http.Header) (time.Duration, bool) {
	if code != http.StatusTooManyRequests && code < 500 {
		return 0, false
	}
	if s, err := strconv.Atoi(h.Get("Retry-After")); err == nil && s > 0 {
		return time.Duration(s) * time.Second, true
	}
	return 0, true
}

// failureReason names why posting to GitHub failed, for the post failures
// metric.
func failureReason(err error) string {
	var rate *gh.RateLimitError
	var abuse *gh.AbuseRateLimitError
	var ghErr *gh.ErrorResponse
	switch {
	case errors.As(err, &rate), errors.As(err, &abuse):
		return "rate_limited"
	case errors.As(err, &ghErr) && ghErr.Response != nil:
		if ghErr.Response.StatusCode == http.StatusTooManyRequests {
			return "rate_limited"
		}
		return strconv.Itoa(ghErr.Response.StatusCode)
	}
	if _, ok := transient(err); ok {
		return "network"
	}
	return "other"
}

// withDB makes a call to the store, and makes it again after a short pause
// while the database is out of reach (store.Transient), until ctx ends. A
// Postgres restart or failover kills every pooled connection and each dead
// one fails the call that takes it: the bookkeeping of a run (claiming the
// post, recording the end) must outlive that, not fail the run or leave it
// to its lease.
func withDB(ctx context.Context, call func() error) error {
	wait := 50 * time.Millisecond
	for {
		err := call()
		if err == nil || !store.Transient(err) {
			return err
		}
		zerolog.Ctx(ctx).Warn().Err(err).Dur("retry_in", wait).Msg("database out of reach; trying again")
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		wait = min(2*wait, time.Second)
	}
}
