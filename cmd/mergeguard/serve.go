package main

import (
	"context"
	"fmt"
	"io"
	"sync"

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/server"
	"github.com/mergeguard/mergeguard/server/store"
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

	app, err := newGitHubApp(cfg, st, log, v.version)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	srv := server.New(server.Deps{Config: cfg.Server, Logger: log, DB: st, Webhook: app.webhook})

	// The workers stop with the server: on a signal, or when it fails.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var workers sync.WaitGroup
	if app.workers != nil {
		workers.Go(func() { app.workers.Run(ctx) })
	}
	err = srv.Run(ctx)
	cancel()
	workers.Wait()
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	log.Info().Msg("stopped")
	return nil
}
