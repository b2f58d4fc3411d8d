package events

import (
	"testing"
)

func TestHubNotifiesOnlyItsRun(t *testing.T) {
	h := NewHub()
	a, cancelA := h.Subscribe("run-a")
	b, cancelB := h.Subscribe("run-b")
	defer cancelB()

	h.Notify("run-a:1")
	h.Notify("run-a:2") // coalesced with the first

	select {
	case <-a:
	default:
		t.Fatal("subscriber of run-a was not woken")
	}
	select {
	case <-a:
		t.Fatal("wake-ups were not coalesced")
	default:
	}
	select {
	case <-b:
		t.Fatal("subscriber of run-b was woken by run-a")
	default:
	}

	h.WakeAll()
	select {
	case <-b:
	default:
		t.Fatal("WakeAll did not wake run-b")
	}

	cancelA()
	if got := h.Subscribers(); got != 1 {
		t.Fatalf("Subscribers = %d after unsubscribe, want 1", got)
	}
}
