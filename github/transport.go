package github

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mergeguard/mergeguard/internal/retry"
)

// RetryPolicy bounds how a client waits for GitHub's rate limits and retries
// failed requests. Its zero value retries nothing and never waits; the
// application's come from its configuration (config.GitHub: max_retries,
// retry_backoff, retry_max_wait, min_write_interval).
type RetryPolicy struct {
	// MaxRetries is how many times one request is sent again.
	MaxRetries int
	// MaxWait is the longest single wait. A rate limit that asks for more
	// is handed to the caller at once (as go-github's rate-limit error), so
	// that a job fails and is retried later instead of holding a worker.
	MaxWait time.Duration
	// Backoff is the first wait after a server error or a network failure
	// of a read; it doubles with each retry.
	Backoff time.Duration
	// MinWriteInterval is the least time between two content-creating
	// requests of one installation. GitHub's REST best practices ask for
	// at least one second.
	MinWriteInterval time.Duration
}

// secondaryLimitWait is how long to wait after a secondary rate limit that
// names no time: GitHub's best practices say "at least one minute".
const secondaryLimitWait = time.Minute

// maxErrorBody bounds how much of an error response is buffered to classify it.
const maxErrorBody = 1 << 20

// rateLimiter is the shared state of the rate-limit transports of every
// client a ClientCreator makes: one write gate per installation.
type rateLimiter struct {
	policy  RetryPolicy
	timeout time.Duration // per attempt; 0 means none
	sleep   func(ctx context.Context, d time.Duration) error
	now     func() time.Time

	mu    sync.Mutex
	gates map[int64]*writeGate
}

// writeGate serialises the content-creating requests of one installation.
// sem holds one token; last is guarded by holding it.
type writeGate struct {
	sem  chan struct{}
	last time.Time
}

func newRateLimiter(p RetryPolicy, timeout time.Duration) *rateLimiter {
	return &rateLimiter{
		policy:  p,
		timeout: timeout,
		sleep:   sleepForRateLimit,
		now:     time.Now,
		gates:   make(map[int64]*writeGate),
	}
}

// middleware wraps next in a transport that applies the limiter's policy.
func (l *rateLimiter) middleware(next http.RoundTripper) http.RoundTripper {
	return &rateLimitTransport{limiter: l, next: next}
}

func (l *rateLimiter) gate(installationID int64) *writeGate {
	l.mu.Lock()
	defer l.mu.Unlock()
	g, ok := l.gates[installationID]
	if !ok {
		g = &writeGate{sem: make(chan struct{}, 1)}
		l.gates[installationID] = g
	}
	return g
}

// rateLimitTransport retries what is safe to retry and serialises writes.
//
//   - Reads (GET, HEAD and GraphQL queries) are retried after a rate limit
//     (403 secondary or primary limit, 429), a 5xx or a network failure,
//     waiting what GitHub asks (Retry-After, x-ratelimit-reset) or an
//     exponential backoff, at most MaxRetries times.
//   - Content-creating requests (POST, PUT, PATCH, DELETE) are never retried
//     after a 5xx or a network failure, because GitHub may have done the
//     work. They are retried only after a rate-limit answer that says when
//     to come back, which means GitHub did not process them. Those that
//     create content people are notified of run one at a time per
//     installation, MinWriteInterval apart; check runs, which CI systems
//     write by the hundred, are not spaced.
//
// Each attempt, reading its body included, is bounded by the client timeout.
// A timed-out read is retried; a timed-out write is not.
type rateLimitTransport struct {
	limiter *rateLimiter
	next    http.RoundTripper
}

func (t *rateLimitTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	write := isWrite(req)
	if write && createsContent(req) {
		release, err := t.acquire(req)
		if err != nil {
			return nil, err
		}
		defer release()
	}
	p := t.limiter.policy
	for attempt := 0; ; attempt++ {
		if attempt > 0 {
			body, err := rewind(req)
			if err != nil {
				return nil, err
			}
			req = body
		}
		resp, err := t.attempt(req)
		wait, retry := t.classify(resp, err, write, attempt)
		if !retry || attempt >= p.MaxRetries || wait > p.MaxWait || req.Context().Err() != nil {
			return resp, err
		}
		if req.Body != nil && req.GetBody == nil {
			return resp, err // the body cannot be sent again
		}
		if resp != nil {
			drain(resp)
		}
		if err := t.limiter.sleep(req.Context(), wait); err != nil {
			return nil, err
		}
	}
}

// attempt sends req once, within the client timeout.
func (t *rateLimitTransport) attempt(req *http.Request) (*http.Response, error) {
	if t.limiter.timeout <= 0 {
		return t.next.RoundTrip(req)
	}
	ctx, cancel := context.WithTimeout(req.Context(), t.limiter.timeout)
	resp, err := t.next.RoundTrip(req.WithContext(ctx))
	if err != nil {
		cancel()
		return nil, err
	}
	resp.Body = &cancelOnClose{ReadCloser: resp.Body, cancel: cancel}
	return resp, nil
}

// cancelOnClose releases an attempt's timeout when its body is closed.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (c *cancelOnClose) Close() error {
	err := c.ReadCloser.Close()
	c.cancel()
	return err
}

// acquire waits for the installation's write gate and for MinWriteInterval
// since its last write. The returned func records the write and releases.
func (t *rateLimitTransport) acquire(req *http.Request) (func(), error) {
	ctx := req.Context()
	g := t.limiter.gate(installationID(req))
	select {
	case g.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if !g.last.IsZero() {
		if d := g.last.Add(t.limiter.policy.MinWriteInterval).Sub(t.limiter.now()); d > 0 {
			if err := t.limiter.sleep(ctx, d); err != nil {
				<-g.sem
				return nil, err
			}
		}
	}
	return func() {
		g.last = t.limiter.now()
		<-g.sem
	}, nil
}

// classify says whether a request may be retried and after how long.
func (t *rateLimitTransport) classify(resp *http.Response, err error, write bool, attempt int) (time.Duration, bool) {
	backoff := t.limiter.policy.Backoff << attempt
	if err != nil {
		return backoff, !write
	}
	switch {
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusForbidden:
		wait, limited, explicit := rateLimitWait(resp, t.limiter.now())
		if !limited || (write && !explicit) {
			return 0, false
		}
		return wait, true
	case resp.StatusCode >= 500 && !write:
		if d, ok := retry.After(resp.Header, t.limiter.now()); ok {
			return max(d, backoff), true
		}
		return backoff, true
	}
	return 0, false
}

// rateLimitWait tells whether resp (a 403 or 429) is a rate limit, how long
// to wait, and whether GitHub named that time itself. It buffers the body so
// that the caller can still read it.
func rateLimitWait(resp *http.Response, now time.Time) (wait time.Duration, limited, explicit bool) {
	if d, ok := retry.After(resp.Header, now); ok {
		return d, true, true
	}
	if resp.Header.Get("X-Ratelimit-Remaining") == "0" {
		if reset, err := strconv.ParseInt(resp.Header.Get("X-Ratelimit-Reset"), 10, 64); err == nil {
			return max(time.Unix(reset, 0).Sub(now), 0) + time.Second, true, true
		}
	}
	if resp.StatusCode == http.StatusTooManyRequests || isSecondaryLimit(resp) {
		return secondaryLimitWait, true, false
	}
	return 0, false, false
}

// isSecondaryLimit reads a 403's body for the signs of a secondary rate limit
// (go-github's test: documentation_url ending in secondary-rate-limits or
// #abuse-rate-limits) and puts the body back.
func isSecondaryLimit(resp *http.Response) bool {
	if resp.Body == nil {
		return false
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	_ = resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(b))
	var e struct {
		Message          string `json:"message"`
		DocumentationURL string `json:"documentation_url"`
	}
	if json.Unmarshal(b, &e) != nil {
		return false
	}
	return strings.HasSuffix(e.DocumentationURL, "secondary-rate-limits") ||
		strings.HasSuffix(e.DocumentationURL, "#abuse-rate-limits") ||
		strings.Contains(strings.ToLower(e.Message), "secondary rate limit")
}

// isWrite reports whether req creates or changes content. GraphQL queries
// are POSTs but read only.
func isWrite(req *http.Request) bool {
	switch req.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return false
	}
	if strings.HasSuffix(req.URL.Path, "/graphql") && req.GetBody != nil {
		return isGraphQLMutation(req)
	}
	return true
}

// createsContent reports whether a write creates content GitHub's
// secondary rate limits for content creation count (reviews, comments,
// reactions, dismissals): every write but those of the Checks API.
func createsContent(req *http.Request) bool {
	return !strings.Contains(req.URL.Path, "/check-runs")
}

func isGraphQLMutation(req *http.Request) bool {
	rc, err := req.GetBody()
	if err != nil {
		return true
	}
	defer func() { _ = rc.Close() }() // read-only: nothing to learn from a close error
	var body struct {
		Query string `json:"query"`
	}
	if json.NewDecoder(rc).Decode(&body) != nil {
		return true
	}
	return strings.HasPrefix(strings.TrimSpace(body.Query), "mutation")
}

// userAgentInstallation matches the "(installation: N)" suffix go-githubapp
// v0.24.1 appends to the user agent of every installation client (REST and
// GraphQL), the only place its middleware can read the installation id from.
var userAgentInstallation = regexp.MustCompile(`\(installation: (\d+)\)`)

// installationID returns the installation a request is made for, 0 when it
// is not an installation client's request.
func installationID(req *http.Request) int64 {
	m := userAgentInstallation.FindStringSubmatch(req.Header.Get("User-Agent"))
	if m == nil {
		return 0
	}
	id, _ := strconv.ParseInt(m[1], 10, 64)
	return id
}

// rewind returns a copy of req whose body can be sent again.
func rewind(req *http.Request) (*http.Request, error) {
	if req.GetBody == nil {
		return req, nil
	}
	body, err := req.GetBody()
	if err != nil {
		return nil, err
	}
	r := req.Clone(req.Context())
	r.Body = body
	return r, nil
}

func drain(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
	_ = resp.Body.Close()
}

// sleepForRateLimit waits d or until ctx is done.
func sleepForRateLimit(ctx context.Context, d time.Duration) error {
	if err := retry.Sleep(ctx, d); err != nil {
		return fmt.Errorf("wait for github rate limit: %w", err)
	}
	return nil
}
