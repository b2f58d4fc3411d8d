package main

import (
	"context"
	"fmt"
	"io"

	"golang.org/x/sync/errgroup"

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/server"
	"github.com/mergeguard/mergeguard/server/api"
	"github.com/mergeguard/mergeguard/server/events"
	"github.com/mergeguard/mergeguard/server/metrics"
	"github.com/mergeguard/mergeguard/server/store"
	"github.com/mergeguard/mergeguard/server/web"
)

// runServe is `mergeguard serve`: it migrates the database, opens the store
// and serves HTTP until ctx is cancelled (SIGINT or SIGTERM).
func runServe(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) error {
	fs := newFlagSet("serve", stderr)
	configPath := configFlag(fs)
	rest, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usageError{fmt.Errorf("serve: unexpected argument %q", rest[0])}
	}
	cfg, err := loadConfig(*configPath, getenv, config.RequireDatabase)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	log, err := newLogger(cfg.Log, stderr)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	v := buildInfo()
	log.Info().Str("version", v.version).Str("commit", v.commit).Msg("starting mergeguard serve")
	if !cfg.GitHub.App.Configured() {
		log.Warn().Msg("GitHub App not configured (set GITHUB_APP_INTEGRATION_ID, GITHUB_APP_WEBHOOK_SECRET " +
			"and GITHUB_APP_PRIVATE_KEY): webhooks are off, serving the API and diff reviews only")
	}

	dbURL := cfg.Database.URL.Value()
	if err := store.MigrateUp(ctx, dbURL); err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	st, err := store.Open(ctx, dbURL)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	defer st.Close()

	mx := metrics.New()
	mx.WatchQueue(st.QueueStats)
	hub := events.NewHub()
	mx.WatchGauge("mergeguard_stream_clients", "Open live event streams on this replica.",
		func() float64 { return float64(hub.Subscribers()) })
	policy, err := newPolicy(cfg, log)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	app, err := newGitHubApp(ctx, cfg, st, log, v.version, mx)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	reviewAPI := api.New(api.Deps{Store: st, PullRequests: app.pulls, Hub: hub, Access: policy, GitHubWebURL: cfg.GitHub.WebURL, Logger: *log,
		MaxBodies: cfg.API.MaxConcurrentSubmissions, MaxStreams: cfg.API.MaxStreams, MaxStreamsPerClient: cfg.API.MaxStreamsPerClient,
		StreamBatch: cfg.API.StreamBatch, StreamWriteTimeout: cfg.API.StreamWriteTimeout,
		Heartbeat: cfg.API.StreamHeartbeat, Poll: cfg.API.StreamPoll})
	gh, oauthApp := signInWithGitHub(cfg, policy, v.version, log)
	ui, err := web.New(web.Deps{Runs: st, Access: policy, Logger: *log, GitHubURL: cfg.GitHub.WebURL, Reviews: reviewAPI,
		GitHub: gh, OAuthApp: oauthApp, PublicURL: cfg.Server.PublicURL})
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	routes := []server.Registrar{reviewAPI, ui}
	if app.webhook != nil {
		routes = append(routes, app.webhook)
	}

	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		hub.Run(gctx, st) // reconnects by itself until gctx ends
		return nil
	})
	if app.workers != nil {
		// The workers stop with the server; running reviews get the
		// shutdown grace period.
		g.Go(func() error {
			app.workers.Run(gctx)
			return nil
		})
	}
	g.Go(func() error {
		srv := server.New(server.Deps{Config: cfg.Server, Logger: log, DB: st, Metrics: mx.Handler(),
			Instrument: mx.Instrument, Routes: routes})
		return srv.Run(gctx)
	})
	if err := g.Wait(); err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	log.Info().Msg("stopped")
	return nil
}
