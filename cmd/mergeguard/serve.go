package main

import (
	"context"
	"fmt"
	"io"
	"net"

	"github.com/rs/zerolog"
	"golang.org/x/sync/errgroup"

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/github/oauth"
	"github.com/mergeguard/mergeguard/server"
	"github.com/mergeguard/mergeguard/server/access"
	"github.com/mergeguard/mergeguard/server/api"
	"github.com/mergeguard/mergeguard/server/events"
	"github.com/mergeguard/mergeguard/server/metrics"
	"github.com/mergeguard/mergeguard/server/setup"
	"github.com/mergeguard/mergeguard/server/store"
	"github.com/mergeguard/mergeguard/server/web"
)

// runServe is `mergeguard serve`: it migrates the database (or, with
// database.migrate false, checks that it is migrated), opens the store
// and serves HTTP until ctx is cancelled (SIGINT or SIGTERM).
func runServe(ctx context.Context, p *process, args []string, getenv func(string) string, stderr io.Writer) error {
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
		log.Warn().Msg("GitHub App not configured in the environment (GITHUB_APP_INTEGRATION_ID, GITHUB_APP_WEBHOOK_SECRET " +
			"and GITHUB_APP_PRIVATE_KEY): webhooks are off until an App is created at /setup (or stored by another replica)")
	}

	dbURL := cfg.Database.URL.Value()
	if err := prepareSchema(ctx, dbURL, cfg.Database.Migrate); err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	st, err := openStore(ctx, cfg)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	defer st.Close()

	mx := metrics.New()
	mx.WatchQueue(st.QueueStats)
	hub := events.NewHub()
	mx.WatchGauge("mergeguard_stream_clients", "Open live event streams on this replica.",
		func() float64 { return float64(hub.Subscribers()) })
	policy, generated, err := newPolicy(ctx, cfg, st)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	app, err := newGitHubApp(ctx, p, cfg, st, log, v.version, mx)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	setupFlow, err := newSetup(cfg, st, policy, *log, v.version, app.holder.Stored)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	if err := setupFlow.AnnounceCode(ctx); err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	reviewAPI := api.New(api.Deps{Store: st, PullRequests: app.holder, Hub: hub, Access: policy, GitHubWebURL: cfg.GitHub.WebURL, Logger: *log,
		Config: cfg.API})
	gh, oauthApp := signInWithGitHub(cfg, st, v.version, log)
	ui, err := web.New(web.Deps{Runs: st, Access: policy, Logger: *log, GitHubURL: cfg.GitHub.WebURL, Reviews: reviewAPI,
		GitHub: gh, OAuthApp: oauthApp, PublicURL: cfg.Server.PublicURL})
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	routes := []server.Registrar{reviewAPI, ui, setupFlow, app.holder}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", cfg.Server.Addr)
	if err != nil {
		return fmt.Errorf("serve: listen on %s: %w", cfg.Server.Addr, err)
	}
	announceRunning(log, stderr, cfg.Server, ln.Addr(), generated)

	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		hub.Run(gctx, st) // reconnects by itself until gctx ends
		return nil
	})
	g.Go(func() error {
		app.holder.Watch(gctx) // swaps in the App /setup stores, on every replica
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
		return srv.Serve(gctx, ln)
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

// openStore opens the store at database.url with database.secret_key,
// when set, to seal and open stored secrets.
func openStore(ctx context.Context, cfg config.Config) (*store.Store, error) {
	st, err := store.Open(ctx, cfg.Database.URL.Value())
	if err != nil {
		return nil, err
	}
	if cfg.Database.SecretKey.IsSet() {
		key, err := config.ParseSecretKey(cfg.Database.SecretKey.Value())
		if err == nil {
			err = st.SetSecretKey(key)
		}
		if err != nil {
			st.Close()
			return nil, fmt.Errorf("MERGEGUARD_SECRET_KEY: %w", err)
		}
	}
	return st, nil
}

// newSetup builds /setup, the manifest flow, on the manifest of
// deploy/github-app.yml; stored is told when it stored an App.
func newSetup(cfg config.Config, st *store.Store, policy access.Policy, log zerolog.Logger, version string, stored func(context.Context)) (*setup.Setup, error) {
	manifest, err := setup.EmbeddedManifest()
	if err != nil {
		return nil, err
	}
	return setup.New(setup.Deps{
		Store: st, Access: policy, Manifest: manifest, PublicURL: cfg.Server.PublicURL,
		WebURL: cfg.GitHub.WebURL, APIURL: cfg.GitHub.V3APIURL,
		Configured: cfg.GitHub.App.Configured(), SecretKey: st.HasSecretKey(), Stored: stored, Logger: log,
		Convert: func(ctx context.Context, apiURL, code string) (oauth.ManifestApp, error) {
			return oauth.ConvertManifest(ctx, code, oauth.ManifestOptions{APIURL: apiURL, Version: version, Timeout: cfg.GitHub.Timeout})
		},
	})
}
