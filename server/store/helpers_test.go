package store_test

import (
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mergeguard/mergeguard/server/store"
	"github.com/mergeguard/mergeguard/server/store/storetest"
)

// newStore returns a store on a fresh database and a raw pool on the same
// database, for checking and arranging what the API does not expose.
func newStore(t *testing.T) (*store.Store, *pgxpool.Pool) {
	t.Helper()
	return storetest.Open(t)
}

// newStoreApart is newStore with the store's sessions apart from the raw
// pool's, for tests that end the store's sessions through the raw pool.
func newStoreApart(t *testing.T) (*store.Store, *pgxpool.Pool) {
	t.Helper()
	return storetest.OpenURL(t, storetest.URL(t))
}

// prRun is a webhook run of pull request repo#n at head.
func prRun(repo string, n int, head string) store.NewRun {
	return store.NewRun{
		Mode: store.ModePR, Trigger: store.TriggerWebhook, InstallationID: 7,
		Repository: repo, PRNumber: n, HeadSHA: head, BaseSHA: "base", Branch: "feature",
	}
}

func diffRun() store.NewRun {
	diff := "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n"
	return store.NewRun{Mode: store.ModeDiff, Trigger: store.TriggerAPI, DiffText: &diff}
}

func enqueue(t *testing.T, s *store.Store, r store.NewRun) store.Run {
	t.Helper()
	run, err := s.EnqueueRun(t.Context(), r)
	if err != nil {
		t.Fatalf("EnqueueRun: %v", err)
	}
	return run
}

// claim claims a run as a worker does: after ending the runs whose worker
// died for good.
func claim(t *testing.T, s *store.Store, worker string) *store.Run {
	t.Helper()
	if _, err := s.ReapRuns(t.Context()); err != nil {
		t.Fatalf("ReapRuns: %v", err)
	}
	run, err := s.ClaimRun(t.Context(), worker, time.Minute)
	if err != nil {
		t.Fatalf("ClaimRun: %v", err)
	}
	return run
}

func getRun(t *testing.T, s *store.Store, id string) store.Run {
	t.Helper()
	run, err := s.GetRun(t.Context(), id)
	if err != nil {
		t.Fatalf("GetRun: %v", err)
	}
	return run
}

// expireLease makes a run's lease run out now, as if its worker had died.
func expireLease(t *testing.T, raw *pgxpool.Pool, runID string) {
	t.Helper()
	_, err := raw.Exec(t.Context(),
		`UPDATE review_runs SET lease_expires_at = now() - interval '1 second' WHERE id = $1`, runID)
	if err != nil {
		t.Fatal(err)
	}
}

// constraintOf returns the constraint a Postgres error names, or the error
// text when it is not a constraint violation.
func constraintOf(err error) string {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.ConstraintName != "" {
		return pgErr.ConstraintName
	}
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}
