package store_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/server/store"
)

var ledgerVolatile = cmpopts.IgnoreFields(review.LedgerEntry{}, "UpdatedAt")

func entry(fp, file string, line int, sev review.Severity, state review.FindingState, sha string) review.LedgerEntry {
	return review.LedgerEntry{
		Finding: review.Finding{FilePath: file, LineStart: line, LineEnd: line, Side: review.SideRight, Severity: sev,
			Category: review.CategoryBug, Title: "t " + fp, VerificationStatus: review.Verified, Confidence: 0.9,
			CodeSnippet: "x()", Fingerprint: fp},
		State: state, FirstSeenSHA: sha, LastSeenSHA: sha,
	}
}

// finishWithLedger runs one pull request run to its end with the given
// ledger entries.
func finishWithLedger(t *testing.T, s *store.Store, head string, entries []review.LedgerEntry) string {
	t.Helper()
	return finishRunWithLedger(t, s, prRun("o/r", 1, head), entries)
}

// finishRunWithLedger queues run nr and runs it to its end with the given
// ledger entries.
func finishRunWithLedger(t *testing.T, s *store.Store, nr store.NewRun, entries []review.LedgerEntry) string {
	t.Helper()
	run := enqueue(t, s, nr)
	claim(t, s, "w")
	err := s.FinishRun(t.Context(), run.ID, "w", store.Result{Status: store.StatusSucceeded, Ledger: entries,
		Scope: review.Scope{Kind: review.ScopeFull, Reason: "first review", ConfigDigest: "cfg"}})
	if err != nil {
		t.Fatalf("FinishRun: %v", err)
	}
	return run.ID
}

func ledger(t *testing.T, s *store.Store) []review.LedgerEntry {
	t.Helper()
	got, err := s.Ledger(t.Context(), "o/r", 1)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TestLedgerFollowsRuns: entries are written with the run, keep their
// first head, and a dismissal is never undone by a run.
func TestLedgerFollowsRuns(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	a := entry("fp-a", "a.go", 10, review.SeverityCritical, review.FindingOpen, "h1")
	a.CommentID = 501
	b := entry("fp-b", "b.go", 3, review.SeverityWarning, review.FindingOpen, "h1")
	first := finishWithLedger(t, s, "h1", []review.LedgerEntry{a, b})
	if diff := cmp.Diff([]review.LedgerEntry{a, b}, ledger(t, s), ledgerVolatile); diff != "" {
		t.Errorf("ledger after the first run (-want +got):\n%s", diff)
	}
	if r := getRun(t, s, first); r.ReviewKind != "full" || r.KindReason != "first review" || r.ConfigDigest != "cfg" {
		t.Errorf("run scope = %q %q %q, want full, first review, cfg", r.ReviewKind, r.KindReason, r.ConfigDigest)
	}

	// A person resolves b's thread; then the next run fixes a and says b is
	// still open: b stays dismissed.
	b.ThreadID = "T_b"
	if _, err := s.ApplyThread(t.Context(), "o/r", 1, review.ThreadChange{ThreadID: "T_b"}); err != nil {
		t.Fatal(err)
	}
	b.CommentID = 502
	finishWithLedger(t, s, "h1", []review.LedgerEntry{b}) // records the comment id
	changed, err := s.ApplyThread(t.Context(), "o/r", 1, review.ThreadChange{ThreadID: "T_b", CommentID: 502, Resolved: true, By: "alice"})
	if err != nil || !changed {
		t.Fatalf("ApplyThread(resolved) = %t, %v; want a change", changed, err)
	}
	a2 := a
	a2.State, a2.FixedSHA, a2.LastSeenSHA, a2.StateBy = review.FindingFixed, "h2", "h2", "mergeguard"
	b2 := b
	b2.LastSeenSHA = "h2"
	second := finishWithLedger(t, s, "h2", []review.LedgerEntry{a2, b2})

	b.State, b.StateBy, b.StateHow, b.ThreadID = review.FindingDismissed, "alice", review.DismissedThreadResolved, "T_b"
	if diff := cmp.Diff([]review.LedgerEntry{a2, b}, ledger(t, s), ledgerVolatile); diff != "" {
		t.Errorf("ledger after the second run (-want +got):\n%s", diff)
	}

	history, err := s.LedgerHistory(t.Context(), "o/r", 1)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range history {
		got = append(got, fmt.Sprintf("%s %s %s %s %s", c.Fingerprint, c.State, c.SHA, c.By, c.How))
	}
	want := []string{
		"fp-a open h1  ",
		"fp-b open h1  ",
		"fp-b dismissed h1 alice thread_resolved",
		"fp-a fixed h2 mergeguard ",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("history (-want +got):\n%s", diff)
	}
	if history[len(history)-1].RunID != second {
		t.Errorf("fixed by run %q, want %q", history[len(history)-1].RunID, second)
	}
}

// TestApplyThread: which thread changes move which entries.
func TestApplyThread(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	open := entry("fp-open", "a.go", 1, review.SeverityCritical, review.FindingOpen, "h1")
	open.CommentID = 11
	fixed := entry("fp-fixed", "a.go", 5, review.SeverityWarning, review.FindingFixed, "h1")
	fixed.FixedSHA, fixed.CommentID, fixed.ThreadID = "h1", 12, "T_fixed"
	exposed := entry("fp-exposed", "b.go", 2, review.SeverityCritical, review.FindingExposed, "h1")
	exposed.StateBy, exposed.StateHow, exposed.CommentID, exposed.ThreadID = "mergeguard", review.ExposedBlocking, 13, "T_exposed"
	finishWithLedger(t, s, "h1", []review.LedgerEntry{open, fixed, exposed})

	steps := []struct {
		name        string
		change      review.ThreadChange
		wantChanged bool
		wantState   review.FindingState
		fp          string
	}{
		{"unknown thread", review.ThreadChange{ThreadID: "T_x", CommentID: 99, Resolved: true, By: "bob"}, false, "", ""},
		{"learn the thread id by comment", review.ThreadChange{ThreadID: "T_open", CommentID: 11}, false, review.FindingOpen, "fp-open"},
		{"resolved by a person", review.ThreadChange{ThreadID: "T_open", Resolved: true, By: "bob"}, true, review.FindingDismissed, "fp-open"},
		{"resolved again", review.ThreadChange{ThreadID: "T_open", Resolved: true, By: "carol"}, false, review.FindingDismissed, "fp-open"},
		{"unresolved", review.ThreadChange{ThreadID: "T_open", By: "bob"}, true, review.FindingOpen, "fp-open"},
		{"a fixed entry's thread unresolved", review.ThreadChange{ThreadID: "T_fixed", By: "bob"}, false, review.FindingFixed, "fp-fixed"},
		// An exposed secret needs an explicit dismissal: resolving is not one.
		{"an exposed secret's thread resolved", review.ThreadChange{ThreadID: "T_exposed", Resolved: true, By: "bob"}, false, review.FindingExposed, "fp-exposed"},
	}
	for _, st := range steps {
		changed, err := s.ApplyThread(t.Context(), "o/r", 1, st.change)
		if err != nil || changed != st.wantChanged {
			t.Errorf("%s: ApplyThread = %t, %v; want %t", st.name, changed, err, st.wantChanged)
		}
		for _, e := range ledger(t, s) {
			if e.Finding.Fingerprint == st.fp && e.State != st.wantState {
				t.Errorf("%s: %s is %s, want %s", st.name, st.fp, e.State, st.wantState)
			}
			if st.name == "learn the thread id by comment" && e.Finding.Fingerprint == "fp-open" && e.ThreadID != "T_open" {
				t.Errorf("%s: thread id %q, want T_open", st.name, e.ThreadID)
			}
		}
	}
}

// TestLedgerRejectsBadEntries: the schema's rules roll the whole finish
// back.
func TestLedgerRejectsBadEntries(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	bad := entry("fp", "a.go", 1, review.SeverityCritical, review.FindingFixed, "h1") // fixed without a sha
	run := enqueue(t, s, prRun("o/r", 1, "h1"))
	claim(t, s, "w")
	err := s.FinishRun(t.Context(), run.ID, "w", store.Result{Status: store.StatusSucceeded, Ledger: []review.LedgerEntry{bad}})
	if err == nil {
		t.Fatal("FinishRun with a fixed entry without its sha succeeded")
	}
	if got := getRun(t, s, run.ID); got.Status != store.StatusRunning {
		t.Errorf("run is %s after a refused finish, want running", got.Status)
	}
	if got := ledger(t, s); len(got) != 0 {
		t.Errorf("ledger = %v, want empty", got)
	}
	// An exposed secret must say whether it blocks (secrets.removed).
	exposed := entry("fp", "a.go", 1, review.SeverityCritical, review.FindingExposed, "h1")
	if err := s.FinishRun(t.Context(), run.ID, "w", store.Result{Status: store.StatusSucceeded, Ledger: []review.LedgerEntry{exposed}}); err == nil ||
		!strings.Contains(err.Error(), "pr_findings_exposed_how") {
		t.Errorf("FinishRun with an exposed entry without its state_how = %v, want the schema's refusal", err)
	}
	// A run of a diff has no ledger.
	dr := enqueue(t, s, diffRun())
	if got := claim(t, s, "w2"); got == nil || got.ID != dr.ID {
		t.Fatalf("claimed %v, want the diff run", got)
	}
	ok := entry("fp", "a.go", 1, review.SeverityCritical, review.FindingOpen, "h1")
	err = s.FinishRun(t.Context(), dr.ID, "w2", store.Result{Status: store.StatusSucceeded, Ledger: []review.LedgerEntry{ok}})
	if err == nil || !strings.Contains(err.Error(), "not of a pull request") {
		t.Errorf("FinishRun of a diff run with ledger entries = %v, want a refusal", err)
	}
}

// TestLastReview: the newest succeeded or failed run of the pull request.
func TestLastReview(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	if _, err := s.LastReview(t.Context(), "o/r", 1, ""); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("LastReview of a new pull request = %v, want ErrNotFound", err)
	}
	first := finishWithLedger(t, s, "h1", nil)
	skipped := enqueue(t, s, prRun("o/r", 1, "h2"))
	claim(t, s, "w")
	if err := s.FinishRun(t.Context(), skipped.ID, "w", store.Result{Status: store.StatusSkipped, Reason: "paused"}); err != nil {
		t.Fatal(err)
	}
	current := enqueue(t, s, prRun("o/r", 1, "h3"))
	got, err := s.LastReview(t.Context(), "o/r", 1, current.ID)
	want := review.LastReview{Found: true, Succeeded: true, KeptLedger: true, HeadSHA: "h1", BaseSHA: getRun(t, s, first).BaseSHA, ConfigDigest: "cfg"}
	if diff := cmp.Diff(want, got); err != nil || diff != "" {
		t.Errorf("LastReview: %v; (-want +got)\n%s", err, diff)
	}
	claim(t, s, "w")
	if err := s.SetRunCheck(t.Context(), current.ID, "w", 77); err != nil {
		t.Fatal(err)
	}
	if err := s.SetRunCheck(t.Context(), current.ID, "other", 78); !errors.Is(err, store.ErrLeaseLost) {
		t.Errorf("SetRunCheck by another worker = %v, want ErrLeaseLost", err)
	}
	if r := getRun(t, s, current.ID); r.CheckRunID != 77 {
		t.Errorf("check run id %d, want 77", r.CheckRunID)
	}
}

// TestReviewOfHead finds the newest succeeded review of a head only.
func TestReviewOfHead(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	if _, err := s.ReviewOfHead(t.Context(), "o/r", 1, "h1"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("ReviewOfHead of a new pull request = %v, want ErrNotFound", err)
	}
	finish := func(head string, res store.Result) string {
		run := enqueue(t, s, prRun("o/r", 1, head))
		claim(t, s, "w")
		if err := s.FinishRun(t.Context(), run.ID, "w", res); err != nil {
			t.Fatal(err)
		}
		return run.ID
	}
	verdict := &review.Verdict{Verdict: review.DecisionComment, Summary: "ok", Walkthrough: &review.Walkthrough{Summary: "walk"}}
	want := finish("h1", store.Result{Status: store.StatusSucceeded, Verdict: verdict})
	finish("h1", store.Result{Status: store.StatusFailed, Error: "boom"})
	finish("h1", store.Result{Status: store.StatusSkipped, Reason: "paused"})
	finish("h2", store.Result{Status: store.StatusSucceeded, Verdict: verdict})
	got, err := s.ReviewOfHead(t.Context(), "o/r", 1, "h1")
	if err != nil || got.RunID != want || got.HeadSHA != "h1" || got.Verdict == nil || got.Verdict.Walkthrough == nil || got.Verdict.Walkthrough.Summary != "walk" {
		t.Errorf("ReviewOfHead(h1) = %s %+v, %v; want %s with its walkthrough", got.RunID, got.Verdict, err, want)
	}
	if _, err := s.ReviewOfHead(t.Context(), "o/r", 1, "h3"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("ReviewOfHead of an unreviewed head = %v, want ErrNotFound", err)
	}
	if _, err := s.ReviewOfHead(t.Context(), "o/r", 2, "h1"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("ReviewOfHead of another pull request = %v, want ErrNotFound", err)
	}
}

// TestHistoryNamesTheRunOnlyForItsChanges: a person's dismissal is not
// attributed to the run that last wrote the entry.
func TestHistoryNamesTheRunOnlyForItsChanges(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	e := entry("fp", "a.go", 1, review.SeverityCritical, review.FindingOpen, "h1")
	e.ThreadID = "T"
	run := finishWithLedger(t, s, "h1", []review.LedgerEntry{e})
	if _, err := s.ApplyThread(t.Context(), "o/r", 1, review.ThreadChange{ThreadID: "T", Resolved: true, By: "alice"}); err != nil {
		t.Fatal(err)
	}
	history, err := s.LedgerHistory(t.Context(), "o/r", 1)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range history {
		got = append(got, fmt.Sprintf("%s by %q run %q", c.State, c.By, c.RunID))
	}
	want := []string{fmt.Sprintf("open by \"\" run %q", run), `dismissed by "alice" run ""`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("history (-want +got):\n%s", diff)
	}
}

// TestAnswersRunBesideReviews: an answer run of a pull request is claimed
// while a review of it runs; a second review waits, and so does a second
// answer.
func TestAnswersRunBesideReviews(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	enqueue(t, s, prRun("o/r", 1, "h1"))
	review1 := claim(t, s, "w1")
	answer := enqueue(t, s, store.NewRun{Mode: store.ModeAnswer, Trigger: store.TriggerWebhook, InstallationID: 7,
		Repository: "o/r", PRNumber: 1, HeadSHA: "h1", Options: []byte(`{"kind":"reply","comment_id":2}`)})
	second := enqueue(t, s, store.NewRun{Mode: store.ModePR, Trigger: store.TriggerCommand, InstallationID: 7,
		Repository: "o/r", PRNumber: 1, HeadSHA: "h1"})
	got := claim(t, s, "w2")
	if got == nil || got.ID != answer.ID {
		t.Fatalf("claimed %v while review %s runs, want the answer %s", got, review1.ID, answer.ID)
	}
	enqueue(t, s, store.NewRun{Mode: store.ModeAnswer, Trigger: store.TriggerWebhook, InstallationID: 7,
		Repository: "o/r", PRNumber: 1, HeadSHA: "h1", Options: []byte(`{"kind":"reply","comment_id":3}`)})
	if got := claim(t, s, "w3"); got != nil {
		t.Errorf("claimed %s (%s) while a review and an answer of the pull request run, want nothing (second review %s waits)", got.ID, got.Mode, second.ID)
	}
}
