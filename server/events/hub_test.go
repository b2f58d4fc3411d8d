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

	h.Notify("") // the listener (re)connected: every subscriber re-reads
	for name, ch := range map[string]<-chan struct{}{"run-a": a, "run-b": b} {
		select {
		case <-ch:
		default:
			t.Fatalf("Notify(\"\") did not wake %s", name)
		}
	}

	cancelA()
	if got := h.Subscribers(); got != 1 {
		t.Fatalf("Subscribers = %d after unsubscribe, want 1", got)
	}
}
