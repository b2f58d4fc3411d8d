package main

import (
	"context"
	"fmt"
	"io"
	"strconv"

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/server/store"
)

// runMigrate is `mergeguard migrate up|down N|version`.
func runMigrate(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlagSet("migrate", stderr)
	configPath := configFlag(fs)
	rest, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(rest) == 0 {
		return usageError{fmt.Errorf("migrate: missing action (up, down N or version)")}
	}
	action, rest := rest[0], rest[1:]
	steps := 0
	switch {
	case action == "down" && len(rest) == 1:
		steps, err = strconv.Atoi(rest[0])
		if err != nil || steps < 1 {
			return usageError{fmt.Errorf("migrate down: N must be a positive integer, got %q", rest[0])}
		}
	case action == "down":
		return usageError{fmt.Errorf("migrate down: give the number of migrations to undo, e.g. migrate down 1")}
	case action != "up" && action != "version":
		return usageError{fmt.Errorf("migrate: unknown action %q%s (want up, down N or version)", action, didYouMean(action, []string{"up", "down", "version"}))}
	case len(rest) > 0:
		return usageError{fmt.Errorf("migrate %s: unexpected argument %q", action, rest[0])}
	}

	cfg, err := loadConfig(*configPath, getenv, config.RequireDatabase)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	dbURL := cfg.Database.URL.Value()
	switch action {
	case "up":
		err = store.MigrateUp(ctx, dbURL)
	case "down":
		err = store.MigrateDown(ctx, dbURL, steps)
	}
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	version, dirty, err := store.MigrateVersion(ctx, dbURL)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	switch {
	case dirty:
		fmt.Fprintf(stdout, "schema version %d (dirty: a migration failed part-way; repair the database by hand)\n", version)
	case version == 0:
		fmt.Fprintln(stdout, "schema version 0 (no migrations applied)")
	default:
		fmt.Fprintf(stdout, "schema version %d\n", version)
	}
	return nil
}
