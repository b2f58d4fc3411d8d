package store_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mergeguard/mergeguard/server/store"
)

func TestClosePullRequest(t *testing.T) {
	t.Parallel()
	s, raw := newStore(t)
	running := enqueue(t, s, prRun("o/r", 1, "a"))
	if got := claim(t, s, "w1"); got == nil || got.ID != running.ID {
		t.Fatalf("claimed %+v, want run %s", got, running.ID)
	}
	queued := enqueue(t, s, prRun("o/r", 1, "b"))
	other := enqueue(t, s, prRun("o/r", 2, "c"))

	closed := store.Delivery{ID: "close-1", Event: "pull_request", Action: "closed", InstallationID: 7, Repository: "o/r"}
	res, err := s.ClosePullRequest(t.Context(), closed, store.Closing{Number: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Duplicate {
		t.Fatal("first closing reported duplicate")
	}
	if got := getRun(t, s, queued.ID); got.Status != store.StatusSuperseded || got.StatusReason != "pull request closed" {
		t.Errorf("queued run: status %s (%q), want superseded (pull request closed)", got.Status, got.StatusReason)
	}
	if got := getRun(t, s, running.ID); got.Status != store.StatusRunning || !got.CancelRequested {
		t.Errorf("running run: status %s, cancel_requested %t; want running, asked to stop", got.Status, got.CancelRequested)
	}
	if got := getRun(t, s, other.ID); got.Status != store.StatusQueued || got.CancelRequested {
		t.Errorf("run of another pull request: status %s, cancel_requested %t; want untouched", got.Status, got.CancelRequested)
	}
	want := deliveryRow{"pull_request", "closed", store.OutcomeClosed, "1 queued runs superseded, 1 running runs asked to stop"}
	if diff := cmp.Diff(want, readDelivery(t, raw, "close-1")); diff != "" {
		t.Errorf("delivery (-want +got):\n%s", diff)
	}

	// A new run queued after the closing (reopened) survives a redelivery.
	reopened := enqueue(t, s, prRun("o/r", 1, "d"))
	again, err := s.ClosePullRequest(t.Context(), closed, store.Closing{Number: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !again.Duplicate {
		t.Error("redelivered closing not reported duplicate")
	}
	if got := getRun(t, s, reopened.ID); got.Status != store.StatusQueued {
		t.Errorf("run queued after the closing: status %s after a redelivery, want queued", got.Status)
	}
}

func TestDeliverySeen(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	if _, err := s.RecordDelivery(t.Context(), store.Delivery{ID: "seen", Event: "installation"}, nil); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]bool{"seen": true, "unseen": false} {
		got, err := s.DeliverySeen(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("DeliverySeen(%q) = %t, want %t", id, got, want)
		}
	}
}

func TestReleaseRun(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	r := prRun("o/r", 1, "a")
	r.MaxAttempts = 1
	run := enqueue(t, s, r)
	if got := claim(t, s, "w1"); got == nil || got.ID != run.ID {
		t.Fatalf("claimed %+v, want run %s", got, run.ID)
	}
	if err := s.ReleaseRun(t.Context(), run.ID, "w2"); !errors.Is(err, store.ErrLeaseLost) {
		t.Errorf("release by another worker: %v, want ErrLeaseLost", err)
	}
	if err := s.ReleaseRun(t.Context(), run.ID, "w1"); err != nil {
		t.Fatal(err)
	}
	got := getRun(t, s, run.ID)
	if got.Status != store.StatusQueued || got.Attempts != 0 || got.LockedBy != "" {
		t.Errorf("released run: %s, %d attempts, held by %q; want queued with its only attempt back", got.Status, got.Attempts, got.LockedBy)
	}
	if again := claim(t, s, "w3"); again == nil || again.ID != run.ID || again.Attempts != 1 {
		t.Errorf("claim after release: %+v, want the run on attempt 1", again)
	}

	// A run a newer head cancelled ends superseded.
	enqueue(t, s, prRun("o/r", 1, "b"))
	if err := s.ReleaseRun(t.Context(), run.ID, "w3"); err != nil {
		t.Fatal(err)
	}
	if got := getRun(t, s, run.ID); got.Status != store.StatusSuperseded || got.FinishedAt == nil {
		t.Errorf("released cancelled run: %s, want superseded and finished", got.Status)
	}
}
