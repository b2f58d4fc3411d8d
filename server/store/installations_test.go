package store_test

import (
	"errors"
	"testing"
	"time"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/server/store"
)

func TestInstallationForRepo(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	ctx := t.Context()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	// want is the installation InstallationForRepo finds for each name after
	// the step; 0 means ErrNotFound.
	steps := []struct {
		name string
		do   func() error
		want map[string]int64
	}{
		{"nothing installed", func() error { return nil }, map[string]int64{"octo/app": 0}},
		{"install with two repositories", func() error {
			must(s.UpsertInstallation(ctx, store.Installation{ID: 1, AccountLogin: "octo", AccountType: "Organization"}))
			return s.UpsertRepositories(ctx, 1, []store.Repository{{ID: 10, FullName: "octo/app"}, {ID: 11, FullName: "octo/lib", Private: true}})
		}, map[string]int64{"octo/app": 1, "OCTO/App": 1, "octo/lib": 1, "octo/other": 0}},
		{"suspend", func() error { return s.SetInstallationSuspended(ctx, 1, true) }, map[string]int64{"octo/app": 0, "octo/lib": 0}},
		{"unsuspend", func() error { return s.SetInstallationSuspended(ctx, 1, false) }, map[string]int64{"octo/app": 1}},
		{"remove a repository", func() error { return s.RemoveRepositories(ctx, 1, []int64{11, 999}) }, map[string]int64{"octo/app": 1, "octo/lib": 0}},
		{"add it back", func() error { return s.UpsertRepositories(ctx, 1, []store.Repository{{ID: 11, FullName: "octo/lib"}}) }, map[string]int64{"octo/lib": 1}},
		{"rename", func() error { return s.UpsertRepositories(ctx, 1, []store.Repository{{ID: 11, FullName: "octo/core"}}) }, map[string]int64{"octo/lib": 0, "octo/core": 1}},
		{"a new repository takes an old name", func() error {
			must(s.UpsertInstallation(ctx, store.Installation{ID: 2, AccountLogin: "octo"}))
			return s.UpsertRepositories(ctx, 2, []store.Repository{{ID: 12, FullName: "octo/app"}})
		}, map[string]int64{"octo/app": 2}},
		{"delete the installation", func() error { return s.DeleteInstallation(ctx, 2) }, map[string]int64{"octo/app": 0, "octo/core": 1}},
		{"install again", func() error { return s.UpsertInstallation(ctx, store.Installation{ID: 2, AccountLogin: "octo"}) }, map[string]int64{"octo/app": 2}},
	}
	for _, step := range steps {
		if err := step.do(); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		for repo, want := range step.want {
			got, err := s.InstallationForRepo(ctx, repo)
			switch {
			case want == 0 && !errors.Is(err, store.ErrNotFound):
				t.Errorf("%s: InstallationForRepo(%s) = %d, %v; want ErrNotFound", step.name, repo, got, err)
			case want != 0 && (err != nil || got != want):
				t.Errorf("%s: InstallationForRepo(%s) = %d, %v; want %d", step.name, repo, got, err, want)
			}
		}
	}
}

func TestInstallationErrors(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"suspend unknown", s.SetInstallationSuspended(t.Context(), 404, true), store.ErrNotFound.Error()},
		{"delete unknown", s.DeleteInstallation(t.Context(), 404), store.ErrNotFound.Error()},
		{"repositories of unknown installation", s.UpsertRepositories(t.Context(), 404, []store.Repository{{ID: 1, FullName: "o/r"}}), "repositories_installation_id_fkey"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.err == nil || (constraintOf(tt.err) != tt.want && !errors.Is(tt.err, store.ErrNotFound)) {
				t.Errorf("got %v, want an error about %q", tt.err, tt.want)
			}
		})
	}
}

func TestPaused(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	steps := []struct {
		name string
		pr   int
		set  *bool
		want bool
	}{
		{name: "never set", pr: 1, want: false},
		{name: "pause", pr: 1, set: new(true), want: true},
		{name: "another pull request", pr: 2, want: false},
		{name: "pause twice", pr: 1, set: new(true), want: true},
		{name: "resume", pr: 1, set: new(false), want: false},
	}
	for _, step := range steps {
		if step.set != nil {
			if err := s.SetPaused(t.Context(), "o/r", step.pr, *step.set, "alice"); err != nil {
				t.Fatalf("%s: %v", step.name, err)
			}
		}
		got, err := s.Paused(t.Context(), "o/r", step.pr)
		if err != nil || got != step.want {
			t.Errorf("%s: Paused = %t, %v; want %t", step.name, got, err, step.want)
		}
	}
	if err := s.SetPaused(t.Context(), "o/r", 0, true, "alice"); constraintOf(err) != "pull_requests_number_check" {
		t.Errorf("SetPaused on pull request 0 = %v, want pull_requests_number_check", err)
	}
}

func TestInstallationUsageSince(t *testing.T) {
	t.Parallel()
	s, raw := newStore(t)
	finish := func(installation int64, cost review.CostInfo) store.Run {
		t.Helper()
		r := prRun("o/r", int(installation)*100+int(cost.InputTokens), "a")
		r.InstallationID = installation
		run := enqueue(t, s, r)
		if got := claim(t, s, "w"); got == nil || got.ID != run.ID {
			t.Fatalf("claimed %v, want %s", got, run.ID)
		}
		if err := s.FinishRun(t.Context(), run.ID, "w", store.Result{Status: store.StatusSucceeded, Cost: cost}); err != nil {
			t.Fatal(err)
		}
		return run
	}
	finish(1, review.CostInfo{InputTokens: 1, OutputTokens: 10, TotalCost: 0.25})
	finish(1, review.CostInfo{InputTokens: 2, OutputTokens: 20, TotalCost: 0.5})
	old := finish(1, review.CostInfo{InputTokens: 3, OutputTokens: 30, TotalCost: 1})
	finish(2, review.CostInfo{InputTokens: 4, OutputTokens: 40, TotalCost: 2})
	if _, err := raw.Exec(t.Context(), `UPDATE review_runs SET created_at = now() - interval '2 days' WHERE id = $1`, old.ID); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name         string
		installation int64
		since        time.Time
		wantTokens   int
		wantCost     float64
	}{
		{"today", 1, time.Now().Add(-24 * time.Hour), 33, 0.75},
		{"this week", 1, time.Now().Add(-7 * 24 * time.Hour), 66, 1.75},
		{"other installation", 2, time.Now().Add(-24 * time.Hour), 44, 2},
		{"unknown installation", 3, time.Now().Add(-24 * time.Hour), 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tokens, cost, err := s.InstallationUsageSince(t.Context(), tt.installation, tt.since)
			if err != nil || tokens != tt.wantTokens || cost != tt.wantCost {
				t.Errorf("InstallationUsageSince = %d, %v, %v; want %d, %v", tokens, cost, err, tt.wantTokens, tt.wantCost)
			}
		})
	}
}
