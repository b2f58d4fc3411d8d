package main

import (
	"context"
	"fmt"
	"io"

	"golang.org/x/sync/errgroup"

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/server"
	"github.com/mergeguard/mergeguard/server/access"
	"github.com/mergeguard/mergeguard/server/api"
	"github.com/mergeguard/mergeguard/server/events"
	"github.com/mergeguard/mergeguard/server/metrics"
	"github.com/mergeguard/mergeguard/server/store"
	"github.com/mergeguard/mergeguard/server/web"
)

// runServe is `mergeguard serve`: it migrates the database (or, with
// database.migrate false, checks that it is migrated), opens the store
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
	if err := prepareSchema(ctx, dbURL, cfg.Database.Migrate); err != nil {
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
	policy, err := access.NewPolicy(cfg.API.Token.Value(), cfg.Server.PublicURL)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	if policy.Token == "" {
		log.Warn().Msg("MERGEGUARD_API_TOKEN is not set: the review API and web UI answer requests from this machine to localhost only")
	}
	ui, err := web.New(web.Deps{Runs: st, Access: policy, Logger: *log, GitHubURL: cfg.GitHub.WebURL})
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

// prepareSchema readies the database schema for serve: with migrate it
// applies pending migrations; without, it only reads the schema version and
// refuses a database that is behind this binary's migrations or dirty (a
// migration failed half way), which an operator fixes with `mergeguard
// migrate`. A database ahead of the binary (an older replica during a
// rollout) is accepted either way.
func prepareSchema(ctx context.Context, dbURL string, migrate bool) error {
	if migrate {
		return store.MigrateUp(ctx, dbURL)
	}
	version, dirty, err := store.MigrateVersion(ctx, dbURL)
	if err != nil {
		return err
	}
	latest, err := store.LatestVersion()
	if err != nil {
		return err
	}
	switch {
	case dirty:
		return fmt.Errorf("database schema version %d is dirty: a migration failed part way; "+
			"repair the database, then run `mergeguard migrate up` (database.migrate is false, so serve does not migrate)", version)
	case version < latest:
		return fmt.Errorf("database schema version %d is behind this binary's %d; "+
			"run `mergeguard migrate up` first (database.migrate is false, so serve does not migrate)", version, latest)
	}
	return nil
}
