package store_test

import (
	"testing"
	"time"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/server/store"
)

// TestDismissalsQueueGateRefreshes: a dismissal (command, feedback, a
// writer resolving a thread) queues one refresh of the pull request's gate
// in its own transaction; a change that changes nothing queues none; a
// refresh is handed to one worker at a time, survives a lost worker (its
// lease runs out) and, queued again while it ran, is not lost when the
// first one finishes.
func TestDismissalsQueueGateRefreshes(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	a := entry("fp-a", "a.go", 1, review.SeverityCritical, review.FindingOpen, "h1")
	b := entry("fp-b", "a.go", 5, review.SeverityCritical, review.FindingOpen, "h1")
	b.CommentID = 12
	finishWithLedger(t, s, "h1", []review.LedgerEntry{a, b})
	claim := func(lease time.Duration) *store.GateRefresh {
		t.Helper()
		g, err := s.ClaimGateRefresh(t.Context(), lease)
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	if g := claim(time.Minute); g != nil {
		t.Fatalf("a refresh queued before any dismissal: %+v", g)
	}
	if ok, err := s.DismissFinding(t.Context(), "o/r", 1, "fp-none", "alice", review.DismissedCommand); err != nil || ok {
		t.Fatalf("DismissFinding(unknown) = %t, %v", ok, err)
	}
	if g := claim(time.Minute); g != nil {
		t.Fatalf("a dismissal that dismissed nothing queued %+v", g)
	}

	if ok, err := s.DismissFinding(t.Context(), "o/r", 1, "fp-a", "alice", review.DismissedCommand); err != nil || !ok {
		t.Fatalf("DismissFinding = %t, %v", ok, err)
	}
	first := claim(time.Millisecond) // a worker that is lost: its lease runs out
	if first == nil || first.Repository != "o/r" || first.PRNumber != 1 || first.InstallationID != 7 {
		t.Fatalf("claimed %+v, want o/r#1 of installation 7", first)
	}
	time.Sleep(20 * time.Millisecond)
	again := claim(time.Minute)
	if again == nil || again.Attempts != 2 {
		t.Fatalf("after the lease ran out: %+v, want the refresh again (attempt 2)", again)
	}
	if g := claim(time.Minute); g != nil {
		t.Fatalf("a refresh held by a worker handed out twice: %+v", g)
	}

	// A writer resolves b's thread while the refresh runs: queued again.
	if changed, err := s.ApplyThread(t.Context(), "o/r", 1, review.ThreadChange{ThreadID: "T_b", CommentID: 12, Resolved: true, By: "bob"}); err != nil || !changed {
		t.Fatalf("ApplyThread = %t, %v", changed, err)
	}
	if err := s.FinishGateRefresh(t.Context(), *again); err != nil {
		t.Fatal(err)
	}
	if g := claim(time.Minute); g == nil {
		t.Fatal("the refresh the thread change queued was lost when the earlier one finished")
	} else if err := s.FinishGateRefresh(t.Context(), *g); err != nil {
		t.Fatal(err)
	}
	if g := claim(time.Minute); g != nil {
		t.Fatalf("a finished refresh handed out again: %+v", g)
	}
}
