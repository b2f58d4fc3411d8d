package store_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/server/store"
)

// outcomeRow is a ledger entry's outcome as stored.
type outcomeRow struct {
	Fingerprint, Outcome, How, Source string
	Merged                            bool
	At                                time.Time
}

func readOutcomes(t *testing.T, raw *pgxpool.Pool, repo string, number int) []outcomeRow {
	t.Helper()
	rows, err := raw.Query(t.Context(), `SELECT fingerprint, COALESCE(outcome, ''), outcome_how, outcome_source,
		COALESCE(outcome_merged, false), COALESCE(outcome_at, 'epoch')
		FROM pr_findings WHERE repository = $1 AND pr_number = $2 ORDER BY fingerprint`, repo, number)
	if err != nil {
		t.Fatal(err)
	}
	got, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (outcomeRow, error) {
		var o outcomeRow
		err := r.Scan(&o.Fingerprint, &o.Outcome, &o.How, &o.Source, &o.Merged, &o.At)
		o.At = o.At.UTC()
		return o, err
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func closePR(t *testing.T, s *store.Store, id, repo string, number int, merged bool, at time.Time) store.ClosedResult {
	t.Helper()
	d := store.Delivery{ID: id, Event: "pull_request", Action: "closed", InstallationID: 7, Repository: repo}
	res, err := s.ClosePullRequest(t.Context(), d, store.Closing{Number: number, Merged: merged, At: at})
	if err != nil {
		t.Fatalf("ClosePullRequest(%s): %v", id, err)
	}
	return res
}

// TestCloseSetsOutcomes: a closing gives every ledger entry without an
// outcome the one review.OutcomeOf decides, once; a redelivery, an older
// closing and a reopened pull request's later closing change none of them,
// and the later closing sets the outcomes of the new entries.
func TestCloseSetsOutcomes(t *testing.T) {
	t.Parallel()
	s, raw := newStore(t)
	fixed := entry("fp-fixed", "a.go", 1, review.SeverityWarning, review.FindingFixed, "h1")
	fixed.FixedSHA = "h2"
	dismissed := entry("fp-dismissed", "a.go", 2, review.SeverityInfo, review.FindingDismissed, "h1")
	dismissed.StateBy, dismissed.StateHow = "alice", review.DismissedCommand
	open := entry("fp-open", "b.go", 3, review.SeverityCritical, review.FindingOpen, "h1")
	tool := entry("fp-tool", "c.sh", 4, review.SeverityWarning, review.FindingOpen, "h1")
	tool.Finding.Agent = "analyzer:shellcheck"
	run := enqueue(t, s, prRun("o/r", 1, "h1"))
	claim(t, s, "w")
	if err := s.FinishRun(t.Context(), run.ID, "w", store.Result{Status: store.StatusSucceeded, Model: "gpt-4o",
		Ledger: []review.LedgerEntry{fixed, dismissed, open, tool}, Scope: review.Scope{Kind: review.ScopeFull}}); err != nil {
		t.Fatal(err)
	}

	t1 := time.Date(2026, 11, 2, 10, 0, 0, 0, time.UTC)
	res := closePR(t, s, "close-1", "o/r", 1, false, t1)
	wantSet := []store.SetOutcome{
		{Fingerprint: "fp-dismissed", Severity: review.SeverityInfo, Category: review.CategoryBug, Source: "gpt-4o",
			FindingOutcome: review.FindingOutcome{Outcome: review.OutcomeDismissed, How: review.DismissedCommand}},
		{Fingerprint: "fp-fixed", Severity: review.SeverityWarning, Category: review.CategoryBug, Source: "gpt-4o",
			FindingOutcome: review.FindingOutcome{Outcome: review.OutcomeAddressed, How: review.AddressedFixed}},
		{Fingerprint: "fp-open", Severity: review.SeverityCritical, Category: review.CategoryBug, Source: "gpt-4o",
			FindingOutcome: review.FindingOutcome{Outcome: review.OutcomeAbandoned}},
		{Fingerprint: "fp-tool", Severity: review.SeverityWarning, Category: review.CategoryBug, Source: "analyzer:shellcheck",
			FindingOutcome: review.FindingOutcome{Outcome: review.OutcomeAbandoned}},
	}
	if diff := cmp.Diff(wantSet, res.Outcomes); diff != "" {
		t.Errorf("outcomes set by the first closing (-want +got):\n%s", diff)
	}
	want := []outcomeRow{
		{"fp-dismissed", "dismissed", "command", "gpt-4o", false, t1},
		{"fp-fixed", "addressed", "fixed", "gpt-4o", false, t1},
		{"fp-open", "abandoned", "", "gpt-4o", false, t1},
		{"fp-tool", "abandoned", "", "analyzer:shellcheck", false, t1},
	}
	if diff := cmp.Diff(want, readOutcomes(t, raw, "o/r", 1)); diff != "" {
		t.Fatalf("outcomes after the first closing (-want +got):\n%s", diff)
	}

	// Redelivered: nothing set.
	if again := closePR(t, s, "close-1", "o/r", 1, true, t1); !again.Duplicate || len(again.Outcomes) != 0 {
		t.Errorf("redelivery: duplicate %t, %d outcomes set; want duplicate, none", again.Duplicate, len(again.Outcomes))
	}
	// Reopened: a new finding, the open one fixed; merged.
	late := entry("fp-late", "d.go", 5, review.SeverityWarning, review.FindingOpen, "h3")
	open.State, open.FixedSHA = review.FindingFixed, "h3"
	run2 := enqueue(t, s, prRun("o/r", 1, "h3"))
	claim(t, s, "w")
	if err := s.FinishRun(t.Context(), run2.ID, "w", store.Result{Status: store.StatusSucceeded, Model: "qwen",
		Ledger: []review.LedgerEntry{open, late}, Scope: review.Scope{Kind: review.ScopeFull}}); err != nil {
		t.Fatal(err)
	}
	t2 := t1.Add(48 * time.Hour)
	res = closePR(t, s, "close-2", "o/r", 1, true, t2)
	if diff := cmp.Diff([]store.SetOutcome{{Fingerprint: "fp-late", Severity: review.SeverityWarning, Category: review.CategoryBug,
		Source: "qwen", FindingOutcome: review.FindingOutcome{Outcome: review.OutcomeUnaddressed}}}, res.Outcomes); diff != "" {
		t.Errorf("outcomes set by the second closing (-want +got):\n%s", diff)
	}
	// An older closing delivered late (another delivery id) sets nothing.
	if stale := closePR(t, s, "close-0", "o/r", 1, false, t1.Add(-time.Hour)); len(stale.Outcomes) != 0 {
		t.Errorf("older closing set %d outcomes, want none", len(stale.Outcomes))
	}
	want = append(want, outcomeRow{"fp-late", "unaddressed", "", "qwen", true, t2})
	want = []outcomeRow{want[0], want[1], want[4], want[2], want[3]}
	if diff := cmp.Diff(want, readOutcomes(t, raw, "o/r", 1)); diff != "" {
		t.Errorf("outcomes after reopening and merging (-want +got):\n%s", diff)
	}
	var merged bool
	var closedAt time.Time
	if err := raw.QueryRow(t.Context(), `SELECT merged, closed_at FROM pr_closings WHERE repository = 'o/r' AND pr_number = 1`).
		Scan(&merged, &closedAt); err != nil {
		t.Fatal(err)
	}
	if !merged || !closedAt.Equal(t2) {
		t.Errorf("pull request's closing: merged %t at %s; want the latest, merged at %s", merged, closedAt, t2)
	}
}

// TestLedgerShowsOutcome: the ledger read back carries each entry's
// outcome once its pull request closed, none before.
func TestLedgerShowsOutcome(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	finishWithLedger(t, s, "h1", []review.LedgerEntry{entry("fp-a", "a.go", 1, review.SeverityWarning, review.FindingOpen, "h1")})
	if got := ledger(t, s); len(got) != 1 || got[0].Outcome != nil {
		t.Fatalf("ledger before the close: %+v, want one entry without an outcome", got)
	}
	at := time.Date(2026, 11, 2, 10, 0, 0, 0, time.UTC)
	closePR(t, s, "close-1", "o/r", 1, true, at)
	got := ledger(t, s)
	want := &review.ClosedOutcome{FindingOutcome: review.FindingOutcome{Outcome: review.OutcomeUnaddressed},
		Merged: true, Source: review.SourceUnknownModel, At: at}
	if len(got) != 1 {
		t.Fatalf("ledger after the close: %d entries, want 1", len(got))
	}
	if diff := cmp.Diff(want, got[0].Outcome); diff != "" {
		t.Errorf("outcome (-want +got):\n%s", diff)
	}
}
