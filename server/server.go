// Package server is MergeGuard's HTTP server: the routes of
// docs/architecture.md on one http.ServeMux, served with timeouts and shut
// down gracefully. It starts with the health endpoints; the webhook, API and
// UI handlers are added to routes.
package server

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"time"

	"github.com/rs/zerolog"

	"github.com/mergeguard/mergeguard/config"
)

// readyTimeout bounds the database check of /readyz, well under the usual
// probe timeout of orchestrators.
const readyTimeout = 2 * time.Second

// Pinger checks that a dependency answers; *store.Store is one.
type Pinger interface {
	Ping(ctx context.Context) error
}

// Deps are what the server needs.
type Deps struct {
	// Config holds the listen address and timeouts.
	Config config.Server
	// Logger logs server events; every request's context carries it
	// (zerolog.Ctx), as go-githubapp's handlers expect.
	Logger *zerolog.Logger
	// DB is checked by /readyz; nil means there is nothing to check.
	DB Pinger
	// Metrics serves /metrics when set.
	Metrics http.Handler
	// Instrument, when set, wraps the server's routes to count and time
	// every request by route pattern (metrics.Metrics.Instrument).
	Instrument func(mux http.Handler) http.Handler
	// Routes add their handlers to the server's mux: the webhook intake,
	// the review API and the web UI.
	Routes []Registrar
}

// Registrar adds routes to a mux.
type Registrar interface {
	Register(mux *http.ServeMux)
}

// Server is MergeGuard's HTTP server. Create it with New.
type Server struct {
	cfg config.Server
	log *zerolog.Logger
	db  Pinger
	mux *http.ServeMux
	// routes is mux, instrumented when Deps.Instrument is set.
	routes http.Handler
}

// New returns a server with its routes registered. A nil Logger logs
// nothing.
func New(deps Deps) *Server {
	logger := deps.Logger
	if logger == nil {
		nop := zerolog.Nop()
		logger = &nop
	}
	s := &Server{cfg: deps.Config, log: logger, db: deps.DB, mux: http.NewServeMux()}
	s.mux.HandleFunc("GET /healthz", s.healthz)
	s.mux.HandleFunc("GET /readyz", s.readyz)
	if deps.Metrics != nil {
		s.mux.Handle("GET /metrics", deps.Metrics)
	}
	for _, r := range deps.Routes {
		r.Register(s.mux)
	}
	s.routes = s.mux
	if deps.Instrument != nil {
		s.routes = deps.Instrument(s.mux)
	}
	return s
}

// Handler returns the server's routes, each request's context carrying the
// logger.
func (s *Server) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.routes.ServeHTTP(w, r.WithContext(s.log.WithContext(r.Context())))
	})
}

// Run listens on the configured address and serves until ctx is cancelled,
// then shuts down gracefully (see Serve).
func (s *Server) Run(ctx context.Context) error {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", s.cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", s.cfg.Addr, err)
	}
	return s.Serve(ctx, ln)
}

// Serve serves HTTP on ln until ctx is cancelled. It then stops accepting
// connections and gives in-flight requests the configured shutdown timeout
// to finish before closing them. It returns nil after a clean shutdown.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: s.cfg.ReadHeaderTimeout,
		ReadTimeout:       s.cfg.ReadTimeout,
		WriteTimeout:      s.cfg.WriteTimeout,
		IdleTimeout:       s.cfg.IdleTimeout,
		ErrorLog:          log.New(s.log.With().Str("source", "net/http").Logger(), "", 0),
		// Requests keep ctx's values but are not cancelled with it:
		// shutdown lets them finish.
		BaseContext: func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	s.log.Info().Str("addr", ln.Addr().String()).Msg("listening")

	select {
	case err := <-errc:
		return fmt.Errorf("serve http: %w", err)
	case <-ctx.Done():
	}
	s.log.Info().Stringer("grace", s.cfg.ShutdownTimeout).Msg("shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return errors.Join(fmt.Errorf("shut down http server: %w", err), srv.Close())
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve http: %w", err)
	}
	return nil
}

// healthz answers 200 while the process serves; it checks nothing else.
func (s *Server) healthz(w http.ResponseWriter, _ *http.Request) {
	writeText(w, http.StatusOK, "ok")
}

// readyz answers 200 when the database answers, 503 "database
// unavailable" otherwise (the reason is logged).
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	if s.db != nil {
		ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
		defer cancel()
		if err := s.db.Ping(ctx); err != nil {
			// The reason may name the database's address and user: it goes
			// to the log only.
			zerolog.Ctx(r.Context()).Warn().Err(err).Msg("not ready: database")
			writeText(w, http.StatusServiceUnavailable, "database unavailable")
			return
		}
	}
	writeText(w, http.StatusOK, "ok")
}

func writeText(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = fmt.Fprintln(w, body)
}
