package store_test

import (
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"github.com/mergeguard/mergeguard/server/store"
	"github.com/mergeguard/mergeguard/server/store/storetest"
)

// tables lists the public tables of the database at url.
func tables(t *testing.T, url string) []string {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(t.Context())
	rows, err := conn.Query(t.Context(),
		`SELECT table_name::text FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return names
}

type version struct {
	Version uint
	Dirty   bool
}

func migrationVersion(t *testing.T, url string) version {
	t.Helper()
	v, dirty, err := store.MigrateVersion(t.Context(), url)
	if err != nil {
		t.Fatalf("MigrateVersion: %v", err)
	}
	return version{v, dirty}
}

func TestMigrateUpDownUp(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: every migration up, down and up again on an empty database, about 5 s; skipped by -short, make test runs it")
	}
	t.Parallel()
	url := storetest.Empty(t)
	all11 := []string{"access_secrets", "agent_results", "findings", "gate_refreshes", "github_app", "installations", "learnings", "model_token_corrections", "pr_finding_history",
		"pr_findings", "pull_requests", "repositories", "review_events", "review_runs", "schema_migrations", "setup_states", "web_sessions", "webhook_deliveries"}
	all := []string{"access_secrets", "agent_results", "finding_revivals", "findings", "gate_refreshes", "github_app", "installations", "learnings", "model_token_corrections", "pr_closings",
		"pr_finding_history", "pr_findings", "pull_requests", "repositories", "review_events", "review_runs", "schema_migrations", "setup_states", "suppressed_findings", "web_sessions", "webhook_deliveries"}
	all12 := []string{"access_secrets", "agent_results", "findings", "gate_refreshes", "github_app", "installations", "learnings", "model_token_corrections", "pr_closings",
		"pr_finding_history", "pr_findings", "pull_requests", "repositories", "review_events", "review_runs", "schema_migrations", "setup_states", "web_sessions", "webhook_deliveries"}
	all8 := []string{"agent_results", "findings", "gate_refreshes", "github_app", "installations", "learnings", "model_token_corrections", "pr_finding_history",
		"pr_findings", "pull_requests", "repositories", "review_events", "review_runs", "schema_migrations", "setup_states", "webhook_deliveries"}
	all7 := []string{"agent_results", "findings", "github_app", "installations", "learnings", "model_token_corrections", "pr_finding_history",
		"pr_findings", "pull_requests", "repositories", "review_events", "review_runs", "schema_migrations", "setup_states", "webhook_deliveries"}
	all5 := []string{"agent_results", "findings", "github_app", "installations", "learnings", "pr_finding_history", "pr_findings", "pull_requests",
		"repositories", "review_events", "review_runs", "schema_migrations", "setup_states", "webhook_deliveries"}
	all4 := []string{"agent_results", "findings", "installations", "learnings", "pr_finding_history", "pr_findings", "pull_requests",
		"repositories", "review_events", "review_runs", "schema_migrations", "webhook_deliveries"}
	all3 := []string{"agent_results", "findings", "installations", "pr_finding_history", "pr_findings", "pull_requests",
		"repositories", "review_events", "review_runs", "schema_migrations", "webhook_deliveries"}
	first := []string{"agent_results", "findings", "installations", "pull_requests", "repositories",
		"review_events", "review_runs", "schema_migrations", "webhook_deliveries"}

	if diff := cmp.Diff(version{0, false}, migrationVersion(t, url)); diff != "" {
		t.Errorf("version of an empty database (-want +got):\n%s", diff)
	}
	steps := []struct {
		name        string
		migrate     func() error
		wantVersion version
		wantTables  []string
	}{
		{"up", func() error { return store.MigrateUp(t.Context(), url) }, version{14, false}, all},
		{"up again is a no-op", func() error { return store.MigrateUp(t.Context(), url) }, version{14, false}, all},
		{"down all", func() error { return store.MigrateDown(t.Context(), url, math.MaxInt32) }, version{0, false}, []string{"schema_migrations"}},
		{"down with nothing applied", func() error { return store.MigrateDown(t.Context(), url, 1) }, version{0, false}, []string{"schema_migrations"}},
		{"up after down", func() error { return store.MigrateUp(t.Context(), url) }, version{14, false}, all},
		{"down the fourteenth (memory of dismissals)", func() error { return store.MigrateDown(t.Context(), url, 1) }, version{13, false}, all12},
		{"down the thirteenth (experiment arms)", func() error { return store.MigrateDown(t.Context(), url, 1) }, version{12, false}, all12},
		{"down the twelfth (finding outcomes)", func() error { return store.MigrateDown(t.Context(), url, 1) }, version{11, false}, all11},
		{"down the eleventh", func() error { return store.MigrateDown(t.Context(), url, 1) }, version{10, false}, all11},
		{"down the tenth (repository ids)", func() error { return store.MigrateDown(t.Context(), url, 1) }, version{9, false}, all11},
		{"down the ninth", func() error { return store.MigrateDown(t.Context(), url, 1) }, version{8, false}, all8},
		{"down the eighth", func() error { return store.MigrateDown(t.Context(), url, 1) }, version{7, false}, all7},
		{"down the seventh", func() error { return store.MigrateDown(t.Context(), url, 1) }, version{6, false}, all7},
		{"down the sixth", func() error { return store.MigrateDown(t.Context(), url, 1) }, version{5, false}, all5},
		{"down the fifth", func() error { return store.MigrateDown(t.Context(), url, 1) }, version{4, false}, all4},
		{"down the fourth", func() error { return store.MigrateDown(t.Context(), url, 1) }, version{3, false}, all3},
		{"down the third", func() error { return store.MigrateDown(t.Context(), url, 1) }, version{2, false}, first},
		{"down the second", func() error { return store.MigrateDown(t.Context(), url, 1) }, version{1, false}, first},
		{"down the first", func() error { return store.MigrateDown(t.Context(), url, 1) }, version{0, false}, []string{"schema_migrations"}},
	}
	for _, step := range steps {
		if err := step.migrate(); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		if diff := cmp.Diff(step.wantVersion, migrationVersion(t, url)); diff != "" {
			t.Errorf("%s: version (-want +got):\n%s", step.name, diff)
		}
		if diff := cmp.Diff(step.wantTables, tables(t, url)); diff != "" {
			t.Errorf("%s: tables (-want +got):\n%s", step.name, diff)
		}
	}
}

func TestMigrateUpConcurrently(t *testing.T) {
	t.Parallel()
	url := storetest.Empty(t)
	const replicas = 4
	errs := make([]error, replicas)
	var wg sync.WaitGroup
	for i := range replicas {
		wg.Go(func() { errs[i] = store.MigrateUp(t.Context(), url) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("replica %d: %v", i, err)
		}
	}
	if diff := cmp.Diff(version{14, false}, migrationVersion(t, url)); diff != "" {
		t.Errorf("version (-want +got):\n%s", diff)
	}
}

func TestMigrateBadInput(t *testing.T) {
	t.Parallel()
	url := storetest.Empty(t)
	tests := []struct {
		name    string
		migrate func() error
		wantErr string
	}{
		{"zero steps down", func() error { return store.MigrateDown(t.Context(), url, 0) }, "step count must be positive"},
		{"negative steps down", func() error { return store.MigrateDown(t.Context(), url, -1) }, "step count must be positive"},
		{"not a URL", func() error { return store.MigrateUp(t.Context(), "host=localhost dbname=x") }, "database url must have the form"},
		{"other scheme", func() error { return store.MigrateUp(t.Context(), "mysql://u@h/db") }, "database url must have the form"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.migrate()
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("got error %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

// Pool options in the URL are for pgxpool; migrations must ignore them.
func TestMigrateAcceptsPoolOptions(t *testing.T) {
	t.Parallel()
	url := storetest.Empty(t) + "&pool_max_conns=2"
	if err := store.MigrateUp(t.Context(), url); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(version{14, false}, migrationVersion(t, url)); diff != "" {
		t.Errorf("version (-want +got):\n%s", diff)
	}
	s, err := store.Open(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Ping(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// TestLatestVersionIsWhereMigrateUpLeads: LatestVersion reads the embedded
// migrations' numbers; MigrateUp on an empty database ends at it.
func TestLatestVersionIsWhereMigrateUpLeads(t *testing.T) {
	latest, err := store.LatestVersion()
	if err != nil {
		t.Fatal(err)
	}
	dbURL := storetest.Empty(t)
	if err := store.MigrateUp(t.Context(), dbURL); err != nil {
		t.Fatal(err)
	}
	if v, dirty, err := store.MigrateVersion(t.Context(), dbURL); err != nil || dirty || v != latest {
		t.Errorf("after MigrateUp: version %d dirty=%t err=%v, want %d (LatestVersion)", v, dirty, err, latest)
	}
}
