package metrics

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// testMux has routes that answer like the API: an implicit 200, an explicit
// 404, and an event stream that flushes.
func testMux(t *testing.T) *http.ServeMux {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	mux.HandleFunc("GET /api/review/{id}", func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "no", http.StatusNotFound) })
	mux.HandleFunc("GET /api/review/{id}/stream", func(w http.ResponseWriter, _ *http.Request) {
		if err := http.NewResponseController(w).Flush(); err != nil {
			t.Errorf("flush through the instrumented writer: %v", err)
		}
	})
	return mux
}

func TestInstrumentLabelsByRoutePattern(t *testing.T) {
	m := New()
	h := m.Instrument(testMux(t))
	requests := []struct {
		method, path string
		wantCode     int
	}{
		{http.MethodGet, "/healthz", 200},
		{http.MethodGet, "/api/review/0b5e", 404},
		{http.MethodGet, "/api/review/77aa", 404},
		{http.MethodGet, "/api/review/77aa/stream", 200},
		{http.MethodGet, "/no/such/page", 404},
		{http.MethodPost, "/healthz", 405},
	}
	for _, r := range requests {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(r.method, r.path, nil))
		if rec.Code != r.wantCode {
			t.Errorf("%s %s = %d, want %d", r.method, r.path, rec.Code, r.wantCode)
		}
	}
	got := map[string]float64{}
	for _, l := range [][2]string{
		{"GET /healthz", "200"}, {"GET /api/review/{id}", "404"}, {"GET /api/review/{id}/stream", "200"},
		{"unmatched", "404"}, {"unmatched", "405"},
	} {
		got[l[0]+" "+l[1]] = testutil.ToFloat64(m.http.requests.WithLabelValues(l[0], l[1]))
	}
	want := map[string]float64{
		"GET /healthz 200": 1, "GET /api/review/{id} 404": 2, "GET /api/review/{id}/stream 200": 1,
		"unmatched 404": 1, "unmatched 405": 1,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("mergeguard_http_requests_total (-want +got):\n%s", diff)
	}
	out := scrape(t, m)
	if !strings.Contains(out, `mergeguard_http_request_duration_seconds_count{route="GET /api/review/{id}"} 2`) {
		t.Errorf("scrape lacks the duration of GET /api/review/{id}:\n%s", out)
	}
	for _, raw := range []string{"0b5e", "77aa", "/no/such/page"} {
		if strings.Contains(out, raw) {
			t.Errorf("scrape contains the raw path part %q", raw)
		}
	}
}
