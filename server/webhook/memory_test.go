package webhook_test

import (
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"

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
	idle := allocs.HeapNow()
	stop := allocs.HeapPeak()
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
