package metrics

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// unmatchedRoute labels requests that no route of the mux matched.
const unmatchedRoute = "unmatched"

// httpMetrics counts and times HTTP requests by route pattern and status.
type httpMetrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

func newHTTPMetrics(reg prometheus.Registerer) httpMetrics {
	h := httpMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mergeguard_http_requests_total",
			Help: "HTTP requests served, by route pattern and status code.",
		}, []string{"route", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "mergeguard_http_request_duration_seconds",
			Help:    "Time to serve an HTTP request, by route pattern (event streams last as long as the client stays).",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"route"}),
	}
	reg.MustRegister(h.requests, h.duration)
	return h
}

// Instrument wraps mux, a ServeMux (or a handler that passes the request to
// one), so that each request is counted and timed under the pattern of the
// route that served it (http.Request.Pattern, e.g. "GET /api/review/{id}"),
// never its raw path, which would make the label set unbounded. Requests no
// route matched are labelled "unmatched".
func (m *Metrics) Instrument(mux http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		mux.ServeHTTP(sw, r)
		route := r.Pattern // set by the ServeMux on this request
		if route == "" {
			route = unmatchedRoute
		}
		code := sw.code
		if code == 0 {
			code = http.StatusOK
		}
		m.http.requests.WithLabelValues(route, strconv.Itoa(code)).Inc()
		m.http.duration.WithLabelValues(route).Observe(time.Since(start).Seconds())
	})
}

// statusWriter records the status code a handler sends. Unwrap lets
// http.ResponseController reach the underlying writer (flushes for event
// streams, deadlines).
type statusWriter struct {
	http.ResponseWriter
	code int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Flush sends buffered data to the client when the underlying writer can.
func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap returns the underlying writer, for http.ResponseController.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
