package store_test

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mergeguard/mergeguard/server/store"
)

// commandDelivery is the delivery of a help command by user on o/r#number.
func commandDelivery(id string) store.Delivery {
	return store.Delivery{ID: id, Event: "issue_comment", Action: "created", InstallationID: 7, Repository: "o/r", Outcome: "replied"}
}

// age moves every recorded delivery back in time by the given interval
// (an SQL interval literal).
func age(t *testing.T, raw *pgxpool.Pool, interval string) {
	t.Helper()
	if _, err := raw.Exec(t.Context(), `UPDATE webhook_deliveries SET received_at = received_at - $1::interval`, interval); err != nil {
		t.Fatal(err)
	}
}

// TestRecordCommandLimitsHoldConcurrently: commands recorded at once from
// several replicas carry out at most MaxCommandsPerPR, and exactly one of
// the others is to be answered.
func TestRecordCommandLimitsHoldConcurrently(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	const n = 20
	results := make([]store.CommandResult, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			c := store.Command{Name: "help", User: fmt.Sprintf("user%d", i), PRNumber: 1}
			results[i], errs[i] = s.RecordCommand(t.Context(), commandDelivery(fmt.Sprint("c", i)), c)
		})
	}
	wg.Wait()
	var carried, limited, notified int
	for i, res := range results {
		if errs[i] != nil {
			t.Fatalf("command %d: %v", i, errs[i])
		}
		switch {
		case !res.Limited:
			carried++
		case res.Notify:
			notified++
			limited++
		default:
			limited++
		}
	}
	got := []int{carried, limited, notified}
	if diff := cmp.Diff([]int{store.MaxCommandsPerPR, n - store.MaxCommandsPerPR, 1}, got); diff != "" {
		t.Errorf("carried out, limited, answered (-want +got):\n%s", diff)
	}
}

// TestRecordCommandWindow: commands older than CommandWindow no longer
// count, and the next command over the limit is answered again.
func TestRecordCommandWindow(t *testing.T) {
	t.Parallel()
	s, raw := newStore(t)
	send := func(id string) store.CommandResult {
		t.Helper()
		res, err := s.RecordCommand(t.Context(), commandDelivery(id), store.Command{Name: "help", User: "alice", PRNumber: 1})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	for i := range store.MaxCommandsPerPR {
		if res := send(fmt.Sprint("a", i)); res.Limited {
			t.Fatalf("command %d limited, want carried out", i)
		}
	}
	if res := send("over"); !res.Limited || !res.Notify || res.Limit != store.LimitPR {
		t.Errorf("command over the limit: %+v, want limited on the pull request and answered", res)
	}
	if res := send("over-again"); !res.Limited || res.Notify {
		t.Errorf("second command over the limit: %+v, want limited, not answered", res)
	}
	age(t, raw, fmt.Sprintf("%d seconds", int(store.CommandWindow.Seconds())+1))
	if res := send("later"); res.Limited {
		t.Errorf("command after the window: %+v, want carried out", res)
	}
}

// TestRecordCommandCoalescesAndPauses: a rerun of a head with a queued run
// coalesces with it (making an automatic run a requested one); pause is
// set in the command's transaction.
func TestRecordCommandCoalescesAndPauses(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	queued := enqueue(t, s, prRun("o/r", 1, "a"))
	rerun := prRun("o/r", 1, "a")
	rerun.Trigger, rerun.RequestedBy = store.TriggerCommand, "alice"
	res, err := s.RecordCommand(t.Context(), commandDelivery("c1"), store.Command{Name: "rerun", User: "alice", PRNumber: 1, Run: &rerun})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Coalesced || res.Run == nil || res.Run.ID != queued.ID || res.Run.Trigger != store.TriggerCommand || res.Run.RequestedBy != "alice" {
		t.Errorf("rerun of a queued head: %+v, want coalesced with run %s, now requested by alice", res, queued.ID)
	}
	paused := true
	if _, err := s.RecordCommand(t.Context(), commandDelivery("c2"), store.Command{Name: "pause", User: "alice", PRNumber: 1, Pause: &paused}); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Paused(t.Context(), "o/r", 1); err != nil || !got {
		t.Errorf("Paused = %t, %v; want true", got, err)
	}
}

// TestReplayWindow: the same pull_request event after ReplayWindow queues
// a run again.
func TestReplayWindow(t *testing.T) {
	t.Parallel()
	s, raw := newStore(t)
	d := func(id string) store.Delivery {
		return store.Delivery{ID: id, Event: "pull_request", Action: "opened", InstallationID: 7, Repository: "o/r"}
	}
	run := prRun("o/r", 1, "a")
	if res, err := s.RecordDelivery(t.Context(), d("d1"), &run); err != nil || res.Run == nil {
		t.Fatalf("first: %+v, %v", res, err)
	}
	if res, err := s.RecordDelivery(t.Context(), d("d2"), &run); err != nil || res.ReplayOf != "d1" || res.Run != nil {
		t.Fatalf("replay: %+v, %v; want a replay of d1", res, err)
	}
	age(t, raw, fmt.Sprintf("%d seconds", int(store.ReplayWindow.Seconds())+1))
	if res, err := s.RecordDelivery(t.Context(), d("d3"), &run); err != nil || res.ReplayOf != "" || res.Run == nil {
		t.Errorf("after the window: %+v, %v; want a run", res, err)
	}
}

// TestRecordCommandFullReview: a full review is never coalesced away into
// a review that is not full. A queued run becomes a full one; a running
// run stands for a full review only when it is one; a full run stands for
// any rerun.
func TestRecordCommandFullReview(t *testing.T) {
	t.Parallel()
	full := json.RawMessage(`{"full": true}`)
	describe := json.RawMessage(`{"describe": true}`)
	type result struct {
		Coalesced, Upgraded bool
		// SameRun is true when the result's run is the earlier one.
		SameRun  bool
		Full     bool
		Describe bool
		Trigger  store.Trigger
		By       string
		Runs     int
	}
	tests := []struct {
		name    string
		earlier store.NewRun // by bob, queued (running when running is set)
		running bool
		asked   json.RawMessage // the options of alice's command
		want    result
	}{
		{"full onto a queued automatic run", prRun("o/r", 1, "a"), false, full,
			result{Coalesced: true, Upgraded: true, SameRun: true, Full: true, Trigger: store.TriggerCommand, By: "alice", Runs: 1}},
		{"full onto a queued requested run", requested(prRun("o/r", 1, "a"), nil), false, full,
			result{Coalesced: true, Upgraded: true, SameRun: true, Full: true, Trigger: store.TriggerCommand, By: "bob", Runs: 1}},
		{"rerun onto a queued full run", requested(prRun("o/r", 1, "a"), full), false, nil,
			result{Coalesced: true, SameRun: true, Full: true, Trigger: store.TriggerCommand, By: "bob", Runs: 1}},
		{"full onto a running requested run", requested(prRun("o/r", 1, "a"), nil), true, full,
			result{Full: true, Trigger: store.TriggerCommand, By: "alice", Runs: 2}},
		{"full onto a running full run", requested(prRun("o/r", 1, "a"), full), true, full,
			result{Coalesced: true, SameRun: true, Full: true, Trigger: store.TriggerCommand, By: "bob", Runs: 1}},
		{"rerun onto a running requested run", requested(prRun("o/r", 1, "a"), nil), true, nil,
			result{Coalesced: true, SameRun: true, Trigger: store.TriggerCommand, By: "bob", Runs: 1}},
		// describe ({"describe": true}) is a flag like full.
		{"describe onto a queued automatic run", prRun("o/r", 1, "a"), false, describe,
			result{Coalesced: true, Upgraded: true, SameRun: true, Describe: true, Trigger: store.TriggerCommand, By: "alice", Runs: 1}},
		{"describe onto a queued full run keeps it full", requested(prRun("o/r", 1, "a"), full), false, describe,
			result{Coalesced: true, Upgraded: true, SameRun: true, Full: true, Describe: true, Trigger: store.TriggerCommand, By: "bob", Runs: 1}},
		{"full onto a queued describe run keeps the description", requested(prRun("o/r", 1, "a"), describe), false, full,
			result{Coalesced: true, Upgraded: true, SameRun: true, Full: true, Describe: true, Trigger: store.TriggerCommand, By: "bob", Runs: 1}},
		{"describe onto a running run that does not describe", requested(prRun("o/r", 1, "a"), full), true, describe,
			result{Describe: true, Trigger: store.TriggerCommand, By: "alice", Runs: 2}},
		{"describe onto a running describe run", requested(prRun("o/r", 1, "a"), describe), true, describe,
			result{Coalesced: true, SameRun: true, Describe: true, Trigger: store.TriggerCommand, By: "bob", Runs: 1}},
		{"full describe onto a running describe run that is not full", requested(prRun("o/r", 1, "a"), describe), true, json.RawMessage(`{"full": true, "describe": true}`),
			result{Full: true, Describe: true, Trigger: store.TriggerCommand, By: "alice", Runs: 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, raw := newStore(t)
			earlier := enqueue(t, s, tt.earlier)
			if tt.running {
				if r := claim(t, s, "w"); r == nil || r.ID != earlier.ID {
					t.Fatalf("claimed %+v, want run %s", r, earlier.ID)
				}
			}
			cmd := requested(prRun("o/r", 1, "a"), tt.asked)
			cmd.RequestedBy = "alice"
			res, err := s.RecordCommand(t.Context(), commandDelivery("c1"), store.Command{Name: "rerun", User: "alice", PRNumber: 1, Run: &cmd})
			if err != nil || res.Run == nil {
				t.Fatalf("RecordCommand: %+v, %v", res, err)
			}
			stored, err := s.GetRun(t.Context(), res.Run.ID)
			if err != nil {
				t.Fatal(err)
			}
			var opts struct{ Full, Describe bool }
			if err := json.Unmarshal(stored.Options, &opts); err != nil {
				t.Fatal(err)
			}
			var runs int
			if err := raw.QueryRow(t.Context(), `SELECT count(*) FROM review_runs`).Scan(&runs); err != nil {
				t.Fatal(err)
			}
			got := result{res.Coalesced, res.Upgraded, res.Run.ID == earlier.ID, opts.Full, opts.Describe, stored.Trigger, stored.RequestedBy, runs}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// requested makes r a run requested by bob with the given options.
func requested(r store.NewRun, options json.RawMessage) store.NewRun {
	r.Trigger, r.RequestedBy, r.Options = store.TriggerCommand, "bob", options
	return r
}
