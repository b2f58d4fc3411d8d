package webhook_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"runtime/metrics"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mergeguard/mergeguard/github/githubtest"
	"github.com/mergeguard/mergeguard/server/webhook"
)

// heapInUse is the bytes of heap spans in use (MemStats.HeapInuse), read
// without stopping the world.
func heapInUse() uint64 {
	samples := []metrics.Sample{
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/memory/classes/heap/unused:bytes"},
	}
	metrics.Read(samples)
	return samples[0].Value.Uint64() + samples[1].Value.Uint64()
}

// peakHeap samples heapInUse every millisecond until stop is closed and
// returns the highest value seen.
func peakHeap(stop <-chan struct{}) <-chan uint64 {
	peak := make(chan uint64, 1)
	go func() {
		highest := heapInUse()
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				peak <- max(highest, heapInUse())
				return
			case <-tick.C:
				highest = max(highest, heapInUse())
			}
		}
	}()
	return peak
}

// TestOversizedUnsignedBodiesStayBounded sends 30 concurrent 24 MB bodies
// that are not signed by the App's secret, as an attacker who knows the
// webhook URL can, and measures the peak heap of the process (client and
// intake) above idle: the intake must refuse them without holding them in
// memory. The bodies share one buffer on the client side, allocated before
// idle is measured.
func TestOversizedUnsignedBodiesStayBounded(t *testing.T) {
	const (
		senders = 30
		size    = 24 << 20
		// budget is the most the process may grow by under the load.
		budget = 100 << 20
	)
	in := newIntake(t)
	body := bytes.Repeat([]byte("a"), size)
	forged := "sha256=" + strings.Repeat("0", 64)
	tests := []struct {
		name    string
		headers map[string]string
		// want lists the accepted answers.
		want []int
	}{
		{"no signature", map[string]string{"Content-Type": "application/json"}, []int{http.StatusUnauthorized}},
		{"form-encoded", map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, []int{http.StatusUnsupportedMediaType}},
		{"form-encoded with a forged signature", map[string]string{"Content-Type": "application/x-www-form-urlencoded", "X-Hub-Signature-256": forged}, []int{http.StatusUnsupportedMediaType}},
		// A well-formed signature must be checked against the body, so these
		// bodies are read: only a few at a time, the others are told to
		// come back later.
		{"forged signature", map[string]string{"Content-Type": "application/json", "X-Hub-Signature-256": forged}, []int{http.StatusUnauthorized, http.StatusServiceUnavailable}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runtime.GC()
			idle := heapInUse()
			stop := make(chan struct{})
			peak := peakHeap(stop)
			statuses := make([]int, senders)
			var wg sync.WaitGroup
			for i := range senders {
				wg.Go(func() { statuses[i] = postBody(t, in.url, body, tt.headers) })
			}
			wg.Wait()
			close(stop)
			grown := int64(<-peak) - int64(idle)
			t.Logf("%d concurrent %d MB bodies (%s): peak heap %.1f MB above idle", senders, size>>20, tt.name, float64(grown)/(1<<20))
			if grown > budget {
				t.Errorf("peak heap %.1f MB above idle, want at most %d MB", float64(grown)/(1<<20), budget>>20)
			}
			for i, got := range statuses {
				if !slices.Contains(tt.want, got) {
					t.Errorf("request %d: status %d, want one of %v", i, got, tt.want)
				}
			}
		})
	}
	if n := in.count("webhook_deliveries", "true"); n != 0 {
		t.Errorf("%d deliveries stored, want 0", n)
	}
}

// postBody posts body as a delivery of pull_request "big" with headers and
// returns the status; 0 when no answer came.
func postBody(t *testing.T, url string, body []byte, headers map[string]string) int {
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Error(err)
		return 0
	}
	req.Header.Set("X-GitHub-Event", "pull_request")
	req.Header.Set("X-GitHub-Delivery", "big")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Errorf("post: %v", err)
		return 0
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

// TestBusyIntakeAnswers503: when every body slot is taken by a delivery
// being read, the next one is answered 503 with Retry-After at once, and is
// accepted again once a slot is free.
func TestBusyIntakeAnswers503(t *testing.T) {
	in := newIntake(t)
	forged := map[string]string{"Content-Type": "application/json", "X-Hub-Signature-256": "sha256=" + strings.Repeat("0", 64)}
	tests := []struct {
		name  string
		size  int
		slots int
	}{
		{"small bodies", 1 << 10, webhook.MaxConcurrentBodies},
		{"large bodies", 2 << 20, webhook.MaxConcurrentLargeBodies},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var (
				pipes []*io.PipeWriter
				wg    sync.WaitGroup
			)
			for range tt.slots {
				pr, pw := io.Pipe()
				pipes = append(pipes, pw)
				req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, in.url, pr)
				if err != nil {
					t.Fatal(err)
				}
				req.ContentLength = int64(tt.size)
				for k, v := range forged {
					req.Header.Set(k, v)
				}
				req.Header.Set("X-GitHub-Event", "pull_request")
				req.Header.Set("X-GitHub-Delivery", "slow")
				wg.Go(func() {
					if resp, err := http.DefaultClient.Do(req); err == nil {
						resp.Body.Close()
					}
				})
				if _, err := pw.Write([]byte("{")); err != nil {
					t.Fatal(err)
				}
			}
			// The slow requests take their slots soon, not at once: probe
			// until the intake is full.
			body := bytes.Repeat([]byte("a"), tt.size)
			var resp *http.Response
			for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
				req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, in.url, bytes.NewReader(body))
				if err != nil {
					t.Fatal(err)
				}
				for k, v := range forged {
					req.Header.Set(k, v)
				}
				req.Header.Set("X-GitHub-Event", "pull_request")
				req.Header.Set("X-GitHub-Delivery", "one-too-many")
				if resp, err = http.DefaultClient.Do(req); err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode == http.StatusServiceUnavailable {
					break
				}
			}
			if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
				t.Errorf("with every slot taken: status %d, Retry-After %q; want 503 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
			}
			for _, pw := range pipes {
				pw.CloseWithError(io.ErrUnexpectedEOF)
			}
			wg.Wait()
			if got := postBody(t, in.url, body, forged); got != http.StatusUnauthorized {
				t.Errorf("once the slots are free: status %d, want 401", got)
			}
		})
	}
}

// TestBurstAboveTheSlotsIsServed: a burst of GitHub's own deliveries,
// more than MaxConcurrentBodies at once, waits for body slots instead of
// being refused (GitHub does not redeliver).
func TestBurstAboveTheSlotsIsServed(t *testing.T) {
	in := newIntake(t)
	const burst = 3 * webhook.MaxConcurrentBodies
	opened := githubtest.Payload(t, "pull_request/opened.payload.json")
	statuses := make([]int, burst)
	var wg sync.WaitGroup
	for i := range burst {
		payload := githubtest.SetFields(t, opened, map[string]any{"number": i + 1, "pull_request.number": i + 1})
		req, err := githubtest.Delivery{Event: "pull_request", ID: fmt.Sprint("burst-", i), Payload: payload}.Request(t.Context(), in.url, in.secret)
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			statuses[i] = resp.StatusCode
		})
	}
	wg.Wait()
	for i, got := range statuses {
		if got != http.StatusOK {
			t.Errorf("delivery %d: status %d, want 200", i, got)
		}
	}
	if n := in.count("review_runs", "true"); n != burst {
		t.Errorf("%d runs, want %d", n, burst)
	}
}
