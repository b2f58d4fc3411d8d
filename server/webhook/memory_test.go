package webhook_test

import (
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/mergeguard/mergeguard/github/githubtest"

	"github.com/mergeguard/mergeguard/internal/allocs"
)

// TestOversizedUnsignedBodiesKeepHeapBounded sends 30 bodies of 24 MB at
// once, each with a wrong signature (so each must be read to be refused):
// half announce their length, half are chunked. The heap may not grow by
// more than 100 MB above idle (it grew by 443 MB before the in-flight
// budget), every request is refused with 401 or 503, nothing is stored,
// and a real delivery is accepted right after.
func TestOversizedUnsignedBodiesKeepHeapBounded(t *testing.T) {
	in := newIntake(t)
	const clients, size = 30, 24 << 20
	idle, stop := allocs.HeapPeak(t)
	var wg sync.WaitGroup
	codes := make(chan int, clients)
	for i := range clients {
		wg.Go(func() {
			req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, in.url, io.LimitReader(zeros{}, size))
			if err != nil {
				t.Error(err)
				return
			}
			if i%2 == 0 {
				req.ContentLength = size
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-GitHub-Event", "pull_request")
			req.Header.Set("X-GitHub-Delivery", fmt.Sprintf("big-%d", i))
			req.Header.Set("X-Hub-Signature-256", githubtest.Sign([]byte("not the secret"), []byte("x")))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				codes <- 0 // the server may close a connection it refused early
				return
			}
			resp.Body.Close()
			codes <- resp.StatusCode
		})
	}
	wg.Wait()
	close(codes)
	peak := stop()
	growth := int64(peak) - int64(idle)
	t.Logf("heap: idle %d MB, peak %d MB, growth %d MB", idle>>20, peak>>20, growth>>20)
	if growth > 100<<20 {
		t.Errorf("heap grew by %d MB under %d oversized unsigned bodies, want under 100 MB", growth>>20, clients)
	}
	for code := range codes {
		if code != 0 && code != http.StatusUnauthorized && code != http.StatusServiceUnavailable {
			t.Errorf("status %d, want 401 or 503", code)
		}
	}
	if n := in.count("webhook_deliveries", "true"); n != 0 {
		t.Errorf("%d deliveries stored, want 0", n)
	}
	d := githubtest.Delivery{Event: "pull_request", ID: "after-the-storm", Payload: githubtest.Payload(t, "pull_request/opened.payload.json")}
	if got := in.send(d); got != http.StatusOK {
		t.Errorf("a real delivery after the load: status %d, want 200", got)
	}
}

// TestBusyIntakeAnswers503: while the bodies in flight nearly fill the
// budget (two 23 MiB bodies still being sent), a third large delivery is refused at once
// with 503 and Retry-After, before a byte of it is read; a small one still
// fits, and so does a large one once the others are done.
func TestBusyIntakeAnswers503(t *testing.T) {
	t.Parallel() // its own intake, budget and limits; it mostly waits
	in := newIntake(t)
	const size = 24 << 20
	big := func(id string, body io.Reader, size int64) *http.Request {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, in.url, body)
		if err != nil {
			t.Fatal(err)
		}
		req.ContentLength = size
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-GitHub-Event", "pull_request")
		req.Header.Set("X-GitHub-Delivery", id)
		req.Header.Set("X-Hub-Signature-256", githubtest.Sign([]byte("not the secret"), []byte("x")))
		return req
	}
	var writers []*io.PipeWriter
	var wg sync.WaitGroup
	for i := range 2 {
		pr, pw := io.Pipe()
		writers = append(writers, pw)
		wg.Go(func() {
			if resp, err := http.DefaultClient.Do(big(fmt.Sprintf("held-%d", i), pr, 23<<20)); err == nil {
				resp.Body.Close()
			}
		})
		// More than the kernel's socket buffers hold: once written, the
		// server is reading the body, so it holds its reservation.
		if _, err := pw.Write(make([]byte, 16<<20)); err != nil {
			t.Fatal(err)
		}
	}
	resp, err := http.DefaultClient.Do(big("third", io.LimitReader(zeros{}, size), size))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Errorf("third large body while two are in flight: %d (Retry-After %q), want 503 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	d := githubtest.Delivery{Event: "pull_request", ID: "small", Payload: githubtest.Payload(t, "pull_request/opened.payload.json")}
	if got := in.send(d); got != http.StatusOK {
		t.Errorf("a small delivery while the budget is nearly full: %d, want 200", got)
	}
	for _, w := range writers {
		w.CloseWithError(io.ErrUnexpectedEOF)
	}
	wg.Wait()
	// The server gives the budget back when its handler ends, a moment
	// after the clients saw their requests fail.
	status := 0
	for deadline := time.Now().Add(5 * time.Second); status != http.StatusUnauthorized && time.Now().Before(deadline); {
		resp, err = http.DefaultClient.Do(big("after", io.LimitReader(zeros{}, size), size))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		status = resp.StatusCode
		time.Sleep(20 * time.Millisecond)
	}
	if status != http.StatusUnauthorized {
		t.Errorf("a large body after the others ended: %d, want 401 (read, signature wrong): the budget was not given back", status)
	}
}
