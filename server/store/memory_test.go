package store_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/memory"
	"github.com/mergeguard/mergeguard/server/store"
)

// memoryRun finishes a run of pull request repo#number (GitHub's
// repository id repoID) with the given ledger entries and returns its id.
func memoryRun(t *testing.T, s *store.Store, repo string, repoID int64, number int, entries []review.LedgerEntry) string {
	t.Helper()
	nr := prRun(repo, number, "h1")
	nr.RepositoryID = repoID
	return finishRunWithLedger(t, s, nr, entries)
}

// dismissedAt sets the time of a dismissal, to order them.
func dismissedAt(t *testing.T, raw *pgxpool.Pool, repo string, number int, fp string, at time.Time) {
	t.Helper()
	if _, err := raw.Exec(t.Context(), `UPDATE pr_findings SET updated_at = $4 WHERE repository = $1 AND pr_number = $2 AND fingerprint = $3`,
		repo, number, fp, at); err != nil {
		t.Fatal(err)
	}
}

// TestDismissals: the repository's most recent dismissals by writers, any
// pull request, at most the limit; never an entry that is open (a thread a
// reader resolved only teaches its id), fixed, outdated or exposed, nor
// another repository's, nor one of another repository that had the name.
func TestDismissals(t *testing.T) {
	t.Parallel()
	s, raw := newStore(t)
	ctx := t.Context()
	base := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	var want []memory.Dismissal
	for pr := 1; pr <= 4; pr++ {
		open := entry(fmt.Sprintf("open-%d", pr), "a.go", 1, review.SeverityWarning, review.FindingOpen, "h1")
		open.CommentID = int64(100 + pr)
		fixed := entry(fmt.Sprintf("fixed-%d", pr), "a.go", 2, review.SeverityWarning, review.FindingFixed, "h1")
		fixed.FixedSHA = "h1"
		gone := entry(fmt.Sprintf("gone-%d", pr), "a.go", 3, review.SeverityWarning, review.FindingOutdated, "h1")
		dismissed := entry(fmt.Sprintf("dis-%d", pr), "b.go", 4, review.SeverityStyle, review.FindingOpen, "h1")
		dismissed.CommentID = int64(200 + pr)
		memoryRun(t, s, "o/r", 42, pr, []review.LedgerEntry{open, fixed, gone, dismissed})
		if _, err := s.DismissFinding(ctx, "o/r", pr, dismissed.Finding.Fingerprint, "alice", review.DismissedCommand); err != nil {
			t.Fatal(err)
		}
		// A thread the pull request's author (no write access) resolved:
		// the lifecycle records its id only, the entry stays open.
		if _, err := s.ApplyThread(ctx, "o/r", pr, review.ThreadChange{ThreadID: fmt.Sprintf("T%d", pr), CommentID: open.CommentID}); err != nil {
			t.Fatal(err)
		}
		at := base.Add(time.Duration(pr) * time.Hour)
		dismissedAt(t, raw, "o/r", pr, dismissed.Finding.Fingerprint, at)
		want = append([]memory.Dismissal{{PRNumber: pr, Fingerprint: dismissed.Finding.Fingerprint, Finding: dismissed.Finding,
			By: "alice", How: review.DismissedCommand, At: at, CommentID: dismissed.CommentID}}, want...)
	}
	// Another repository's dismissal, and one kept under the same name by
	// the repository that had it before (another GitHub id).
	other := entry("other", "c.go", 1, review.SeverityStyle, review.FindingOpen, "h1")
	memoryRun(t, s, "o/other", 43, 1, []review.LedgerEntry{other})
	before := entry("before", "c.go", 1, review.SeverityStyle, review.FindingOpen, "h1")
	memoryRun(t, s, "o/r", 41, 9, []review.LedgerEntry{before})
	for _, d := range []struct {
		repo string
		n    int
		fp   string
	}{{"o/other", 1, "other"}, {"o/r", 9, "before"}} {
		if ok, err := s.DismissFinding(ctx, d.repo, d.n, d.fp, "bob", review.DismissedAPI); err != nil || !ok {
			t.Fatalf("DismissFinding(%s) = %t, %v", d.fp, ok, err)
		}
	}
	run := memoryRun(t, s, "o/r", 42, 5, nil)

	for _, limit := range []int{10, 2} {
		got, err := s.Dismissals(ctx, "o/r", run, limit)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want[:min(limit, len(want))], got); diff != "" {
			t.Errorf("Dismissals(limit %d) (-want +got):\n%s", limit, diff)
		}
	}
	if _, err := s.Dismissals(ctx, "o/r", "not-a-run", 10); err == nil {
		t.Error("Dismissals of a malformed run id: no error")
	}
}

// TestSuppressedAndRevived: a suppressed finding is recorded with its
// matches, suppressed again in place, revived once (a revival the memory
// reads), and a later suppression shows it suppressed again while the
// revival stays.
func TestSuppressedAndRevived(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	ctx := t.Context()
	run := memoryRun(t, s, "o/r", 42, 3, nil)
	f := review.Finding{FilePath: "a.go", LineStart: 3, LineEnd: 3, Severity: review.SeverityStyle, Category: review.CategoryQuality,
		Title: "Error string should not be capitalized", Fingerprint: "fp-nit"}
	matches := []memory.Match{{PRNumber: 1, Fingerprint: "d1", CommentID: 11, By: "alice", How: review.DismissedCommand, Similarity: 0.5}}
	sup := []memory.Suppressed{{Finding: f, Matches: matches}}
	for range 2 {
		if err := s.RecordSuppressed(ctx, "o/r", 3, run, "h1", sup); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Suppressed(ctx, "o/r", 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].RevivedAt != nil || got[0].RunID != run || got[0].HeadSHA != "h1" {
		t.Fatalf("Suppressed = %+v, want the one finding, not revived", got)
	}
	if diff := cmp.Diff(sup[0], got[0].Suppressed); diff != "" {
		t.Errorf("suppressed finding (-want +got):\n%s", diff)
	}

	for i, want := range []bool{true, false} {
		ok, err := s.Revive(ctx, "o/r", 3, "fp-nit", "carol")
		if err != nil || ok != want {
			t.Fatalf("Revive #%d = %t, %v; want %t", i+1, ok, err, want)
		}
	}
	if ok, err := s.Revive(ctx, "o/r", 3, "no-such", "carol"); err != nil || ok {
		t.Errorf("Revive of a finding never suppressed = %t, %v; want false", ok, err)
	}
	revivals, err := s.Revivals(ctx, "o/r", run, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(revivals) != 1 || revivals[0].By != "carol" || revivals[0].Finding.Title != f.Title {
		t.Fatalf("Revivals = %+v, want carol's", revivals)
	}
	if got, _ := s.Suppressed(ctx, "o/r", 3); len(got) != 1 || got[0].RevivedBy != "carol" || got[0].RevivedAt == nil {
		t.Errorf("after the revival Suppressed = %+v", got)
	}
	other := memoryRun(t, s, "o/r", 41, 4, nil)
	if r, err := s.Revivals(ctx, "o/r", other, 10); err != nil || len(r) != 0 {
		t.Errorf("revivals of another repository of the name = %+v, %v; want none", r, err)
	}

	// Suppressed again by dismissals made since: shown suppressed, the
	// revival kept.
	if err := s.RecordSuppressed(ctx, "o/r", 3, run, "h2", sup); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Suppressed(ctx, "o/r", 3); len(got) != 1 || got[0].RevivedAt != nil || got[0].HeadSHA != "h2" {
		t.Errorf("suppressed again = %+v", got)
	}
	if r, _ := s.Revivals(ctx, "o/r", run, 10); len(r) != 1 {
		t.Errorf("revivals after a new suppression = %d, want 1", len(r))
	}
}
