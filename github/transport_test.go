package github

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	gh "github.com/google/go-github/v60/github"

	"github.com/mergeguard/mergeguard/github/githubtest"
)

// waits records the waits of a rate limiter instead of sleeping.
type waits struct {
	mu sync.Mutex
	d  []time.Duration
}

func (w *waits) sleep(ctx context.Context, d time.Duration) error {
	w.mu.Lock()
	w.d = append(w.d, d)
	w.mu.Unlock()
	return ctx.Err()
}

func (w *waits) list() []time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]time.Duration(nil), w.d...)
}

var testNow = time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)

// limitedClient returns a client of the fake through a rate limiter whose
// waits are recorded, acting for installation 42.
func limitedClient(t *testing.T, fake *githubtest.Server, p RetryPolicy, timeout time.Duration) (*gh.Client, *waits) {
	t.Helper()
	w := &waits{}
	l := newRateLimiter(p, timeout)
	l.sleep = w.sleep
	l.now = func() time.Time { return testNow }
	c := gh.NewClient(&http.Client{Transport: l.middleware(http.DefaultTransport)})
	u, _ := url.Parse(fake.URL())
	c.BaseURL = u
	c.UserAgent = "mergeguard/test (installation: 42)"
	return c, w
}

func header(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i < len(kv); i += 2 {
		h.Set(kv[i], kv[i+1])
	}
	return h
}

func testPolicy() RetryPolicy {
	return RetryPolicy{MaxRetries: 3, MaxWait: 2 * time.Minute, Backoff: time.Second}
}

func TestTransport(t *testing.T) {
	tests := []struct {
		name     string
		route    string
		failures []githubtest.Failure
		call     func(ctx context.Context, c *gh.Client) error
		wantErr  bool
		// wantCalls is how many requests reached the route.
		wantCalls int
		wantWaits []time.Duration
		// wantComments is how many issue comments exist afterwards.
		wantComments int
	}{
		{
			name:      "read after a 403 secondary rate limit waits Retry-After and retries",
			route:     githubtest.RoutePull,
			failures:  []githubtest.Failure{{Status: 403, Header: header("Retry-After", "7")}},
			call:      getPull,
			wantCalls: 2, wantWaits: []time.Duration{7 * time.Second},
		},
		{
			name:      "read after a 429 without Retry-After waits a minute",
			route:     githubtest.RoutePull,
			failures:  []githubtest.Failure{{Status: 429}},
			call:      getPull,
			wantCalls: 2, wantWaits: []time.Duration{time.Minute},
		},
		{
			name:  "read after a primary rate limit waits until x-ratelimit-reset",
			route: githubtest.RoutePull,
			failures: []githubtest.Failure{{Status: 403, Body: `{"message":"API rate limit exceeded"}`,
				Header: header("X-Ratelimit-Remaining", "0", "X-Ratelimit-Reset", strconv.FormatInt(testNow.Add(30*time.Second).Unix(), 10))}},
			call:      getPull,
			wantCalls: 2, wantWaits: []time.Duration{31 * time.Second},
		},
		{
			name:      "read after 5xx backs off exponentially",
			route:     githubtest.RoutePull,
			failures:  []githubtest.Failure{{Status: 502}, {Status: 500}, {Status: 503}},
			call:      getPull,
			wantCalls: 4, wantWaits: []time.Duration{time.Second, 2 * time.Second, 4 * time.Second},
		},
		{
			name:      "read gives up after MaxRetries",
			route:     githubtest.RoutePull,
			failures:  []githubtest.Failure{{Status: 502}, {Status: 502}, {Status: 502}, {Status: 502}},
			call:      getPull,
			wantErr:   true,
			wantCalls: 4, wantWaits: []time.Duration{time.Second, 2 * time.Second, 4 * time.Second},
		},
		{
			name:      "a wait above MaxWait is left to the caller",
			route:     githubtest.RoutePull,
			failures:  []githubtest.Failure{{Status: 403, Header: header("Retry-After", "3600")}},
			call:      getPull,
			wantErr:   true,
			wantCalls: 1,
		},
		{
			name:      "a 403 that is not a rate limit is not retried",
			route:     githubtest.RoutePull,
			failures:  []githubtest.Failure{{Status: 403, Body: `{"message":"Resource not accessible by integration"}`}},
			call:      getPull,
			wantErr:   true,
			wantCalls: 1,
		},
		{
			name:      "POST answered 502 is not retried (GitHub may have processed it)",
			route:     githubtest.RouteCreateIssueComment,
			failures:  []githubtest.Failure{{Status: 502, Processed: true}},
			call:      postComment,
			wantErr:   true,
			wantCalls: 1, wantComments: 1,
		},
		{
			name:      "POST answered 500 is not retried",
			route:     githubtest.RouteCreateIssueComment,
			failures:  []githubtest.Failure{{Status: 500}},
			call:      postComment,
			wantErr:   true,
			wantCalls: 1, wantComments: 0,
		},
		{
			name:      "POST after a 403 secondary rate limit with Retry-After waits and retries",
			route:     githubtest.RouteCreateIssueComment,
			failures:  []githubtest.Failure{{Status: 403, Header: header("Retry-After", "5")}},
			call:      postComment,
			wantCalls: 2, wantWaits: []time.Duration{5 * time.Second}, wantComments: 1,
		},
		{
			name:      "POST after a 429 naming no time is not retried",
			route:     githubtest.RouteCreateIssueComment,
			failures:  []githubtest.Failure{{Status: 429}},
			call:      postComment,
			wantErr:   true,
			wantCalls: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := githubtest.New(t)
			fake.AddPR(testPR(3))
			for _, f := range tt.failures {
				fake.Inject(tt.route, f)
			}
			c, w := limitedClient(t, fake, testPolicy(), 0)
			err := tt.call(t.Context(), c)
			if (err != nil) != tt.wantErr {
				t.Errorf("error = %v, want error %v", err, tt.wantErr)
			}
			if n := fake.CallCount(tt.route); n != tt.wantCalls {
				t.Errorf("%d calls to %s, want %d", n, tt.route, tt.wantCalls)
			}
			if d := cmp.Diff(tt.wantWaits, w.list()); d != "" {
				t.Errorf("waits (-want +got):\n%s", d)
			}
			if n := len(fake.IssueComments("acme", "widgets", 7)); n != tt.wantComments {
				t.Errorf("%d issue comments, want %d", n, tt.wantComments)
			}
		})
	}
}

func getPull(ctx context.Context, c *gh.Client) error {
	_, _, err := c.PullRequests.Get(ctx, "acme", "widgets", 7)
	return err
}

func postComment(ctx context.Context, c *gh.Client) error {
	_, _, err := c.Issues.CreateComment(ctx, "acme", "widgets", 7, &gh.IssueComment{Body: gh.String("hello")})
	return err
}

func TestTransportTimeouts(t *testing.T) {
	fake := githubtest.New(t)
	fake.AddPR(testPR(3))
	// An attempt may take 500 ms: the retry must succeed in that time on a
	// loaded machine with the race detector (50 ms did not, once). The
	// fake's delay ends when the attempt is cancelled.
	c, _ := limitedClient(t, fake, testPolicy(), 500*time.Millisecond)

	fake.Inject(githubtest.RoutePull, githubtest.Failure{Delay: time.Minute})
	if err := getPull(t.Context(), c); err != nil {
		t.Errorf("read after a timed-out attempt: %v, want a successful retry", err)
	}
	if n := fake.CallCount(githubtest.RoutePull); n != 2 {
		t.Errorf("%d reads, want 2", n)
	}

	fake.Inject(githubtest.RouteCreateIssueComment, githubtest.Failure{Delay: time.Minute})
	if err := postComment(t.Context(), c); err == nil {
		t.Error("write after a timed-out attempt succeeded, want the timeout")
	}
	if n := fake.CallCount(githubtest.RouteCreateIssueComment); n != 1 {
		t.Errorf("%d writes, want 1 (never retried after a timeout)", n)
	}
}

func TestTransportWaitHonoursContext(t *testing.T) {
	fake := githubtest.New(t)
	fake.AddPR(testPR(3))
	l := newRateLimiter(testPolicy(), 0)
	c := gh.NewClient(&http.Client{Transport: l.middleware(http.DefaultTransport)})
	c.BaseURL, _ = url.Parse(fake.URL())
	fake.FailNext(githubtest.RoutePull, 403, header("Retry-After", "60"))
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := getPull(ctx, c)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error = %v, want the context's deadline", err)
	}
	if time.Since(start) > 10*time.Second {
		t.Error("the wait ignored the context")
	}
}

// concurrency is a RoundTripper that measures how many requests of each
// installation are in flight at once.
type concurrency struct {
	mu       sync.Mutex
	inFlight map[int64]int
	peak     map[int64]int
	release  chan struct{}
	started  atomic.Int32
}

func (c *concurrency) RoundTrip(req *http.Request) (*http.Response, error) {
	id := installationID(req)
	c.mu.Lock()
	c.inFlight[id]++
	c.peak[id] = max(c.peak[id], c.inFlight[id])
	c.mu.Unlock()
	c.started.Add(1)
	<-c.release
	c.mu.Lock()
	c.inFlight[id]--
	c.mu.Unlock()
	return &http.Response{StatusCode: 201, Body: http.NoBody, Header: http.Header{}, Request: req}, nil
}

func TestTransportSerialisesWritesPerInstallation(t *testing.T) {
	rec := &concurrency{inFlight: map[int64]int{}, peak: map[int64]int{}, release: make(chan struct{})}
	w := &waits{}
	p := testPolicy()
	p.MinWriteInterval = time.Second
	l := newRateLimiter(p, 0)
	l.sleep = w.sleep
	l.now = func() time.Time { return testNow }
	rt := l.middleware(rec)

	send := func(method string, installation int) {
		req, _ := http.NewRequestWithContext(t.Context(), method, "http://github.invalid/x", nil)
		req.Header.Set("User-Agent", "mergeguard/test (installation: "+strconv.Itoa(installation)+")")
		resp, err := rt.RoundTrip(req)
		if err != nil {
			t.Error(err)
			return
		}
		resp.Body.Close()
	}
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() { send(http.MethodPost, 1) })
		wg.Go(func() { send(http.MethodPost, 2) })
		wg.Go(func() { send(http.MethodGet, 1) })
	}
	// Reads and one write per installation start at once; the other
	// writes wait for the gate.
	for rec.started.Load() < 5 {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond)
	if n := rec.started.Load(); n != 5 {
		t.Errorf("%d requests in flight, want 5 (3 reads, 1 write per installation)", n)
	}
	close(rec.release)
	wg.Wait()
	if d := cmp.Diff(map[int64]int{1: 4, 2: 1}, rec.peak); d != "" {
		t.Errorf("peak requests in flight per installation (-want +got):\n%s", d)
	}
	// Each write after the first of its installation waited MinWriteInterval.
	if n := len(w.list()); n != 4 {
		t.Errorf("%d waits between writes, want 4: %v", n, w.list())
	}
}

// TestTransportDoesNotSpaceCheckRuns: check run writes (a create and an
// update a review) run at once, without the content-creation spacing.
func TestTransportDoesNotSpaceCheckRuns(t *testing.T) {
	rec := &concurrency{inFlight: map[int64]int{}, peak: map[int64]int{}, release: make(chan struct{})}
	w := &waits{}
	p := testPolicy()
	p.MinWriteInterval = time.Second
	l := newRateLimiter(p, 0)
	l.sleep = w.sleep
	l.now = func() time.Time { return testNow }
	rt := l.middleware(rec)
	var wg sync.WaitGroup
	for i := range 3 {
		wg.Go(func() {
			method, path := http.MethodPost, "/repos/o/r/check-runs"
			if i > 0 {
				method, path = http.MethodPatch, "/repos/o/r/check-runs/"+strconv.Itoa(i)
			}
			req, _ := http.NewRequestWithContext(t.Context(), method, "http://github.invalid"+path, nil)
			req.Header.Set("User-Agent", "mergeguard/test (installation: 1)")
			resp, err := rt.RoundTrip(req)
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
		})
	}
	for deadline := time.Now().Add(time.Second); rec.started.Load() < 3 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	close(rec.release)
	wg.Wait()
	if rec.peak[1] != 3 || len(w.list()) != 0 {
		t.Errorf("check run writes: peak %d in flight, waits %v; want 3 at once, no waits", rec.peak[1], w.list())
	}
}

func TestIsWrite(t *testing.T) {
	tests := []struct {
		method, path, body string
		want               bool
	}{
		{"GET", "/repos/o/r/pulls/1", "", false},
		{"HEAD", "/repos/o/r", "", false},
		{"POST", "/repos/o/r/pulls/1/reviews", `{"event":"COMMENT"}`, true},
		{"PUT", "/repos/o/r/pulls/1/reviews/2/dismissals", `{}`, true},
		{"DELETE", "/repos/o/r/pulls/1/reviews/2", "", true},
		{"POST", "/graphql", `{"query":"query($owner:String!){repository(owner:$owner){id}}"}`, false},
		{"POST", "/api/graphql", `{"query":"{viewer{login}}"}`, false},
		{"POST", "/graphql", `{"query":"mutation($input:AddCommentInput!){addComment(input:$input){clientMutationId}}"}`, true},
	}
	for _, tt := range tests {
		var body io.Reader
		if tt.body != "" {
			body = strings.NewReader(tt.body)
		}
		req, err := http.NewRequest(tt.method, "https://api.github.com"+tt.path, body)
		if err != nil {
			t.Fatal(err)
		}
		if got := isWrite(req); got != tt.want {
			t.Errorf("isWrite(%s %s) = %v, want %v", tt.method, tt.path, got, tt.want)
		}
	}
}

func TestClientCreatorAgainstFake(t *testing.T) {
	fake := githubtest.New(t)
	fake.AddPR(testPR(3))
	fake.RequireAuth()
	cfg := fake.AppConfig(12345)
	retry := RetryPolicy{MaxRetries: 3, MaxWait: 2 * time.Minute, Backoff: time.Second, MinWriteInterval: time.Second}
	cc, err := NewClientCreator(cfg, ClientOptions{Version: "1.2.3", Timeout: 10 * time.Second, CacheCapacity: 8, Retry: retry})
	if err != nil {
		t.Fatal(err)
	}
	c1, err := cc.NewInstallationClient(42)
	if err != nil {
		t.Fatal(err)
	}
	c2, err := cc.NewInstallationClient(42)
	if err != nil {
		t.Fatal(err)
	}
	if c1 != c2 {
		t.Error("second NewInstallationClient(42) built a new client, want the cached one")
	}
	fake.FailNext(githubtest.RoutePull, 403, header("Retry-After", "0"))
	if err := getPull(t.Context(), c1); err != nil {
		t.Fatalf("get pull request through the installation client: %v", err)
	}
	if err := getPull(t.Context(), c2); err != nil {
		t.Fatal(err)
	}
	calls := fake.CallsTo(githubtest.RoutePull)
	if len(calls) != 3 {
		t.Fatalf("%d pull request calls, want 3 (one retried after the secondary limit)", len(calls))
	}
	if ua := calls[0].Header.Get("User-Agent"); ua != "mergeguard/1.2.3 (installation: 42)" {
		t.Errorf("User-Agent = %q", ua)
	}
	if n := fake.Tokens(); n != 1 {
		t.Errorf("%d installation tokens issued, want 1", n)
	}

	v4, err := cc.NewInstallationV4Client(42)
	if err != nil {
		t.Fatal(err)
	}
	src := NewSource(c1, v4, "acme", "widgets", 7, SourceOptions{})
	if _, err := src.Blame(t.Context(), "pkg/p00/file.go", 10); err != nil {
		t.Errorf("blame through the installation GraphQL client: %v", err)
	}

	bad := cfg
	bad.App.PrivateKey = "not a key"
	if _, err := NewClientCreator(bad, ClientOptions{}); err == nil {
		t.Error("NewClientCreator accepted a malformed private key")
	}
}
