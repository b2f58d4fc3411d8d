// Package intakebench compares MergeGuard's webhook intake
// (server/webhook on a PostgreSQL store) with go-githubapp's event
// dispatcher and in-memory AsyncScheduler running a no-op handler. Each
// intake runs in a process of its own (Serve) so that its CPU time is its
// own; the load generator (Load) sends both the same signed payloads.
package intakebench

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/palantir/go-githubapp/githubapp"
	"github.com/rs/zerolog"

	"github.com/mergeguard/mergeguard/bench/internal/measure"
	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/server/store"
	"github.com/mergeguard/mergeguard/server/webhook"
)

// The intakes Serve runs.
const (
	MergeGuard = "mergeguard"
	GitHubApp  = "go-githubapp"
)

// Route is where both intakes take deliveries.
const Route = webhook.Route

// UsageRoute answers the serving process's usage so far (measure.Usage).
const UsageRoute = "/usage"

// Serve runs one intake (MergeGuard or GitHubApp) on a free port of
// 127.0.0.1, writes its base URL and a newline to out, and serves until
// stdin is closed or ctx is done. dbURL is MergeGuard's database (already
// migrated); the anchor needs none.
func Serve(ctx context.Context, impl, dbURL, secret string, out io.Writer) error {
	h, closeFn, err := intake(ctx, impl, dbURL, secret)
	if err != nil {
		return err
	}
	defer closeFn()
	mux := http.NewServeMux()
	mux.Handle("POST "+Route, h)
	mux.HandleFunc("GET "+UsageRoute, func(w http.ResponseWriter, _ *http.Request) {
		u, err := measure.ProcessUsage()
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		_ = json.NewEncoder(w).Encode(u)
	})
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	if _, err := fmt.Fprintf(out, "http://%s\n", ln.Addr()); err != nil {
		return fmt.Errorf("announce: %w", err)
	}
	stdinClosed := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, bufio.NewReader(os.Stdin))
		close(stdinClosed)
	}()
	select {
	case <-ctx.Done():
	case <-stdinClosed:
	case err := <-done:
		return fmt.Errorf("serve: %w", err)
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return srv.Shutdown(shutdown)
}

// intake builds the handler of impl.
func intake(ctx context.Context, impl, dbURL, secret string) (http.Handler, func(), error) {
	switch impl {
	case MergeGuard:
		st, err := store.Open(ctx, dbURL)
		if err != nil {
			return nil, nil, fmt.Errorf("mergeguard intake: %w", err)
		}
		log := zerolog.Nop()
		// As `serve` wires it: deliveries written in group commits.
		h, err := webhook.New(webhook.Deps{Config: config.Default().GitHub, Secret: secret, Store: st, Recorder: st.NewIntake(store.IntakeOptions{}),
			GitHub: noGitHub{}, Logger: &log})
		if err != nil {
			st.Close()
			return nil, nil, fmt.Errorf("mergeguard intake: %w", err)
		}
		return h, st.Close, nil
	case GitHubApp:
		h := githubapp.NewEventDispatcher([]githubapp.EventHandler{noopHandler{}}, secret,
			githubapp.WithScheduler(githubapp.AsyncScheduler()))
		return h, func() {}, nil
	}
	return nil, nil, fmt.Errorf("unknown intake %q (want %s or %s)", impl, MergeGuard, GitHubApp)
}

// noopHandler is the anchor's event handler: it does nothing.
type noopHandler struct{}

func (noopHandler) Handles() []string { return []string{"pull_request"} }

func (noopHandler) Handle(context.Context, string, string, []byte) error { return nil }

// errNoGitHub is what noGitHub answers: pull_request deliveries never ask.
var errNoGitHub = errors.New("the intake benchmark has no GitHub")

// noGitHub is MergeGuard's GitHub in the benchmark; the pull_request
// deliveries it sends never call it.
type noGitHub struct{}

func (noGitHub) CanWrite(context.Context, int64, string, string) (bool, error) {
	return false, errNoGitHub
}

func (noGitHub) Head(context.Context, int64, string, int) (review.PullHead, error) {
	return review.PullHead{}, errNoGitHub
}

func (noGitHub) React(context.Context, int64, string, int64, string) error { return errNoGitHub }

func (noGitHub) Comment(context.Context, int64, string, int, string) error { return errNoGitHub }

func (noGitHub) ReplyToReviewComment(context.Context, int64, string, int, int64, string) error {
	return errNoGitHub
}

func (noGitHub) ResolveThread(context.Context, int64, string, string) error { return errNoGitHub }
