package api

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/server/events"
	"github.com/mergeguard/mergeguard/server/store"
	"github.com/mergeguard/mergeguard/server/store/storetest"

	"github.com/mergeguard/mergeguard/internal/allocs"
)

// limitFixture serves an API made with d (Store, Hub and Logger filled in)
// over a real Postgres.
func limitFixture(t *testing.T, d Deps) (*fixture, *API) {
	t.Helper()
	st := storetest.New(t)
	d.Store, d.Hub, d.Logger, d.Access = st, events.NewHub(), zerolog.Nop(), holder
	a := New(d)
	mux := http.NewServeMux()
	a.Register(mux)
	srv := httptest.NewServer(asHolder(mux))
	t.Cleanup(srv.Close)
	return &fixture{srv: srv, store: st, hub: d.Hub}, a
}

// oversized is a JSON body of n bytes whose diff_text never ends within
// the limit, produced as it is read so the client holds none of it.
type oversized struct{ n, off int }

func (b *oversized) Read(p []byte) (int, error) {
	const head = `{"diff_text":"`
	if b.off >= b.n {
		return 0, io.EOF
	}
	n := min(len(p), b.n-b.off)
	for i := range n {
		if at := b.off + i; at < len(head) {
			p[i] = head[at]
		} else {
			p[i] = 'a'
		}
	}
	b.off += n
	return n, nil
}

// TestOversizedBodiesKeepHeapBounded sends 30 bodies over the 10 MB limit
// at once to POST /api/review with no token (a local server), half with
// their length announced and half chunked, which must be read to find out.
// The heap must stay under 100 MB above idle.
func TestOversizedBodiesKeepHeapBounded(t *testing.T) {
	f, _ := limitFixture(t, Deps{Config: testAPI()})
	const clients = 30
	idle, stop := allocs.HeapPeak(t)
	var wg sync.WaitGroup
	var mu sync.Mutex
	codes := make(map[int]int)
	for i := range clients {
		wg.Go(func() {
			body := &oversized{n: MaxBodyBytes + 5<<20}
			req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, f.srv.URL+"/api/review", body)
			if err != nil {
				t.Error(err)
				return
			}
			if i%2 == 0 {
				req.ContentLength = int64(body.n)
			}
			req.Header.Set("Content-Type", "application/json")
			code := -1 // the server closed the connection while the body was sent
			if res, err := http.DefaultClient.Do(req); err == nil {
				code = res.StatusCode
				_ = res.Body.Close() // nothing to read
			}
			mu.Lock()
			codes[code]++
			mu.Unlock()
		})
	}
	wg.Wait()
	peak := stop()
	growth := int64(peak) - int64(idle)
	t.Logf("%d oversized bodies at once: heap in use idle %.1f MB, peak %.1f MB, growth %.1f MB; answers %v",
		clients, mb(idle), mb(peak), float64(growth)/(1<<20), codes)
	if growth > 100<<20 {
		t.Errorf("heap grew by %.1f MB, want under 100 MB", float64(growth)/(1<<20))
	}
	// A client still sending when the server answers and closes may see
	// the connection reset instead of the answer.
	if codes[http.StatusRequestEntityTooLarge] == 0 {
		t.Errorf("answers %v, want some 413", codes)
	}
	for code := range codes {
		if code != http.StatusRequestEntityTooLarge && code != http.StatusServiceUnavailable && code != -1 {
			t.Errorf("answer %d to an oversized body (answers %v)", code, codes)
		}
	}
	if n := f.runCount(t); n != 0 {
		t.Errorf("%d runs stored, want 0", n)
	}
}

func mb(b uint64) float64 { return float64(b) / (1 << 20) }

// TestCreateRefusesBodiesBeyondTheCap holds the only slot with a request
// whose body is still arriving: the next one is answered 503 with
// Retry-After at once, and the slot is free again once the first is done.
func TestCreateRefusesBodiesBeyondTheCap(t *testing.T) {
	t.Parallel() // each test has its own database and servers
	f, a := limitFixture(t, Deps{Config: testAPI(func(c *config.API) { c.MaxConcurrentSubmissions = 1 })})
	pr, pw := io.Pipe()
	first := make(chan int, 1)
	go func() {
		req, err := http.NewRequestWithContext(context.WithoutCancel(t.Context()), http.MethodPost, f.srv.URL+"/api/review", pr)
		if err != nil {
			first <- -1
			return
		}
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			first <- -1
			return
		}
		_ = res.Body.Close() // the status is enough
		first <- res.StatusCode
	}()
	if _, err := io.WriteString(pw, `{"diff_text":`); err != nil { // blocks until the client sends it
		t.Fatal(err)
	}
	waitFor(t, "the first request to take the slot", func() bool { return len(a.bodies) == 1 })
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, f.srv.URL+"/api/review",
		strings.NewReader(`{"diff_text":`+jsonString(sampleDiff)+`}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close() // the status is enough
	if res.StatusCode != http.StatusServiceUnavailable || res.Header.Get("Retry-After") == "" {
		t.Errorf("second body while the first is read: %d, Retry-After %q; want 503 with Retry-After",
			res.StatusCode, res.Header.Get("Retry-After"))
	}
	if _, err := io.WriteString(pw, jsonString(sampleDiff)+`}`); err != nil {
		t.Fatal(err)
	}
	if err := pw.Close(); err != nil {
		t.Fatal(err)
	}
	if code := <-first; code != http.StatusAccepted {
		t.Fatalf("first request: %d, want 202", code)
	}
	if code, out := f.do(t, http.MethodPost, "/api/review", `{"diff_text":`+jsonString(sampleDiff)+`}`, nil); code != http.StatusAccepted {
		t.Errorf("after the first finished: %d %v, want 202", code, out)
	}
}

// TestStreamLimits opens streams of a running run up to the caps: one
// client address beyond its share gets 429, any client beyond the
// replica's total 503, and a closed stream frees its slot.
func TestStreamLimits(t *testing.T) {
	t.Parallel() // each test has its own database and servers
	tests := []struct {
		name              string
		total, perClient  int
		open, wantRefused int
	}{
		{"per client", 10, 2, 2, http.StatusTooManyRequests},
		{"in total", 2, 10, 2, http.StatusServiceUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, a := limitFixture(t, Deps{Config: testAPI(func(c *config.API) {
				c.MaxStreams, c.MaxStreamsPerClient, c.StreamHeartbeat, c.StreamPoll = tt.total, tt.perClient, time.Hour, time.Hour
			})})
			run := runningRun(t, f.store, review.EventPipelineStarted)
			ctx, cancel := context.WithCancel(t.Context())
			var bodies []io.Closer
			for range tt.open {
				bodies = append(bodies, openStream(t, ctx, f.srv.URL, run.ID))
			}
			code, out := f.do(t, http.MethodGet, "/api/review/"+run.ID+"/stream", "", nil)
			if code != tt.wantRefused {
				t.Errorf("stream beyond the cap: %d %v, want %d", code, out, tt.wantRefused)
			}
			_ = bodies[0].Close() // the client leaves
			cancel()
			waitFor(t, "streams to close", func() bool { return a.streams.open() == 0 })
			body := openStream(t, t.Context(), f.srv.URL, run.ID)
			_ = body.Close() // opening it was the point
		})
	}
}

// openStream opens a run's stream and returns its body once answered 200.
func openStream(t *testing.T, ctx context.Context, base, id string) io.ReadCloser {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/review/"+id+"/stream", nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK {
		_ = res.Body.Close() // the status says it all
		t.Fatalf("stream answered %d", res.StatusCode)
	}
	return res.Body
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestStreamRedactsEventErrors: a pipeline.failed event's error reaches
// the stream without the internal addresses it names.
func TestStreamRedactsEventErrors(t *testing.T) {
	t.Parallel() // each test has its own database and servers
	st := storetest.New(t)
	f := quietFixture(t, st, st)
	run := runningRun(t, st)
	stored := `llm: Post "http://10.1.2.3:8000/v1/chat/completions": EOF`
	if _, err := st.AppendEvent(t.Context(), run.ID, review.Event{Type: review.EventPipelineFailed,
		Data: map[string]any{"error": stored, "attempt": 1}}); err != nil {
		t.Fatal(err)
	}
	if err := st.FinishRun(t.Context(), run.ID, "w1", store.Result{Status: store.StatusFailed, Error: stored}); err != nil {
		t.Fatal(err)
	}
	evs := readSSE(t, f.stream(t, run.ID, ""), 1)
	if len(evs) != 1 {
		t.Fatalf("events %v, want one", types(evs))
	}
	got := string(evs[0].Data.Data)
	if want := `{"attempt":1,"error":"llm: Post \"[url]\": EOF"}`; got != want {
		t.Errorf("event data %s, want %s", got, want)
	}
}
