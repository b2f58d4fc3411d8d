package server_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/server"
)

// pinger is a fake database: it fails with err, and first waits for release
// when that is set.
type pinger struct {
	err     error
	entered chan struct{}
	release chan struct{}
}

func (p *pinger) Ping(ctx context.Context) error {
	if p.release != nil {
		p.entered <- struct{}{}
		select {
		case <-p.release:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return p.err
}

func TestHealthEndpoints(t *testing.T) {
	tests := []struct {
		name       string
		db         server.Pinger
		method     string
		path       string
		wantStatus int
		wantBody   string
	}{
		{"healthz", &pinger{err: errors.New("down")}, "GET", "/healthz", 200, "ok\n"},
		{"readyz with the database up", &pinger{}, "GET", "/readyz", 200, "ok\n"},
		{"readyz with the database down", &pinger{err: errors.New("connection refused")}, "GET", "/readyz", 503, "database unavailable\n"}, // the cause goes to the log, never to the caller
		{"readyz without a database", nil, "GET", "/readyz", 200, "ok\n"},
		{"wrong method", &pinger{}, "POST", "/healthz", 405, "Method Not Allowed\n"},
		{"unknown path", &pinger{}, "GET", "/nope", 404, "404 page not found\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := server.New(server.Deps{Config: config.Default().Server, DB: tt.db})
			rec := httptest.NewRecorder()
			s.Handler().ServeHTTP(rec, httptest.NewRequestWithContext(t.Context(), tt.method, tt.path, nil))
			if rec.Code != tt.wantStatus {
				t.Errorf("status = %d, want %d", rec.Code, tt.wantStatus)
			}
			if diff := cmp.Diff(tt.wantBody, rec.Body.String()); diff != "" {
				t.Errorf("body (-want +got):\n%s", diff)
			}
		})
	}
}

// serve starts s on a loopback port and returns its base URL and Serve's
// result channel.
func serve(t *testing.T, ctx context.Context, s *server.Server) (string, <-chan error) {
	t.Helper()
	var lc net.ListenConfig
	ln, err := lc.Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	return "http://" + ln.Addr().String(), done
}

// get requests url and returns the response status.
func get(ctx context.Context, url string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, errors.Join(err, resp.Body.Close())
}

func TestServeFinishesInFlightRequestsOnShutdown(t *testing.T) {
	db := &pinger{entered: make(chan struct{}, 1), release: make(chan struct{})}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	base, done := serve(t, ctx, server.New(server.Deps{Config: config.Default().Server, DB: db}))

	type result struct {
		status int
		err    error
	}
	got := make(chan result, 1)
	go func() {
		status, err := get(t.Context(), base+"/readyz")
		got <- result{status, err}
	}()
	<-db.entered // the request is in flight
	cancel()
	// Shutdown stops accepting connections while the request is held.
	refused := false
	for deadline := time.Now().Add(5 * time.Second); !refused && time.Now().Before(deadline); {
		_, err := get(t.Context(), base+"/healthz")
		refused = err != nil
		time.Sleep(10 * time.Millisecond)
	}
	if !refused {
		t.Error("new connections were still accepted during shutdown")
	}
	close(db.release)

	if r := <-got; r.err != nil || r.status != http.StatusOK {
		t.Errorf("in-flight request: status %d, error %v; want 200", r.status, r.err)
	}
	if err := <-done; err != nil {
		t.Errorf("Serve = %v, want nil", err)
	}
}

func TestServeGivesUpAfterTheShutdownTimeout(t *testing.T) {
	db := &pinger{entered: make(chan struct{}, 1), release: make(chan struct{})}
	defer close(db.release)
	cfg := config.Default().Server
	cfg.ShutdownTimeout = 50 * time.Millisecond
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	base, done := serve(t, ctx, server.New(server.Deps{Config: cfg, DB: db}))

	go func() { _, _ = get(t.Context(), base+"/readyz") }()
	<-db.entered
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Serve = %v, want a shutdown deadline error", err)
		}
	case <-time.After(time.Second):
		t.Fatal("Serve did not return after its shutdown timeout")
	}
}

func TestRunReportsListenErrors(t *testing.T) {
	cfg := config.Default().Server
	cfg.Addr = "256.0.0.1:0"
	err := server.New(server.Deps{Config: cfg}).Run(t.Context())
	if err == nil {
		t.Fatal("Run on an invalid address succeeded")
	}
	const prefix = "listen on 256.0.0.1:0: "
	if got := err.Error(); len(got) < len(prefix) || got[:len(prefix)] != prefix {
		t.Errorf("Run error = %q, want prefix %q", got, prefix)
	}
}
