package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/server/store"
)

func TestAppendEvent(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	run := enqueue(t, s, diffRun())
	at := time.Date(2026, 11, 21, 10, 0, 0, 123456000, time.UTC) // Postgres keeps microseconds
	events := []review.Event{
		{Type: review.EventPipelineStarted, Stage: review.StagePlanner, Time: at},
		{Type: review.EventToolCalled, Stage: review.StageReviewer, Agent: "reviewer-1", Time: at,
			Data: map[string]any{"tool": "read_file_part", "args": map[string]any{"file_path": "a.go"}}},
		{Type: review.EventFindingDetected, Agent: "reviewer-1", Time: at,
			Data: review.Finding{FilePath: "a.go", LineStart: 3, LineEnd: 3, Severity: review.SeverityWarning}},
	}
	for i, e := range events {
		seq, err := s.AppendEvent(t.Context(), run.ID, e)
		if err != nil {
			t.Fatal(err)
		}
		if seq != i+1 {
			t.Errorf("event %d got seq %d", i+1, seq)
		}
	}
	finding, _ := json.Marshal(events[2].Data)
	want := []store.StoredEvent{
		{RunID: run.ID, Seq: 1, Type: review.EventPipelineStarted, Stage: "planner", Time: at, Data: json.RawMessage(`{}`)},
		{RunID: run.ID, Seq: 2, Type: review.EventToolCalled, Stage: "reviewer", Agent: "reviewer-1", Time: at,
			Data: json.RawMessage(`{"args": {"file_path": "a.go"}, "tool": "read_file_part"}`)},
		{RunID: run.ID, Seq: 3, Type: review.EventFindingDetected, Agent: "reviewer-1", Time: at, Data: finding},
	}
	tests := []struct {
		name            string
		afterSeq, limit int
		want            []store.StoredEvent
	}{
		{"all", 0, 0, want},
		{"after 1", 1, 0, want[1:]},
		{"page", 1, 1, want[1:2]},
		{"none left", 3, 0, nil},
	}
	opts := cmp.Options{
		cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) }),
		cmp.Comparer(jsonEqual),
		cmpopts.EquateEmpty(),
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.Events(t.Context(), run.ID, tt.afterSeq, tt.limit)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got, opts); diff != "" {
				t.Errorf("Events (-want +got):\n%s", diff)
			}
		})
	}
	if got := getRun(t, s, run.ID).EventSeq; got != 3 {
		t.Errorf("run event_seq %d, want 3", got)
	}
}

// jsonEqual compares JSON documents by value.
func jsonEqual(a, b json.RawMessage) bool {
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return string(a) == string(b)
	}
	return cmp.Equal(va, vb)
}

func TestAppendEventRejects(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	run := enqueue(t, s, diffRun())
	tests := []struct {
		name  string
		runID string
		event review.Event
		want  string
	}{
		{"unknown run", "00000000-0000-0000-0000-000000000001", review.Event{Type: review.EventToolCalled}, store.ErrNotFound.Error()},
		{"malformed run id", "run-1", review.Event{Type: review.EventToolCalled}, store.ErrNotFound.Error()},
		{"unknown type", run.ID, review.Event{Type: "tool.finished"}, "review_events_type_check"},
		{"data not an object", run.ID, review.Event{Type: review.EventToolCalled, Data: []int{1}}, "review_events_data_check"},
		{"data not JSON", run.ID, review.Event{Type: review.EventToolCalled, Data: func() {}}, "json: unsupported type"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.AppendEvent(t.Context(), tt.runID, tt.event)
			if err == nil {
				t.Fatal("AppendEvent accepted a bad event")
			}
			if constraintOf(err) != tt.want && !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q, want one about %q", err, tt.want)
			}
		})
	}
	// Rejected events use no sequence number.
	seq, err := s.AppendEvent(t.Context(), run.ID, review.Event{Type: review.EventPipelineStarted})
	if err != nil || seq != 1 {
		t.Errorf("AppendEvent after rejections = %d, %v; want 1, nil", seq, err)
	}
	events, err := s.Events(t.Context(), run.ID, 0, 0)
	if err != nil || len(events) != 1 || time.Since(events[0].Time) > time.Minute {
		t.Errorf("Events = %+v, %v; want one event stamped now", events, err)
	}
}

// Concurrent writers get distinct consecutive seqs, and a reader following
// the log never sees a later seq before an earlier one commits.
func TestAppendEventConcurrentOrder(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	run := enqueue(t, s, diffRun())
	const writers, perWriter = 8, 50
	const total = writers * perWriter

	readerDone := make(chan error, 1)
	go func() {
		last := 0
		deadline := time.Now().Add(time.Minute)
		for last < total && time.Now().Before(deadline) {
			events, err := s.Events(t.Context(), run.ID, last, 0)
			if err != nil {
				readerDone <- err
				return
			}
			for _, e := range events {
				if e.Seq != last+1 {
					readerDone <- fmt.Errorf("read seq %d right after %d", e.Seq, last)
					return
				}
				last = e.Seq
			}
		}
		if last != total {
			readerDone <- fmt.Errorf("reader saw %d events, want %d", last, total)
			return
		}
		readerDone <- nil
	}()

	var wg sync.WaitGroup
	seqs := make([][]int, writers)
	for w := range writers {
		wg.Go(func() {
			for i := range perWriter {
				seq, err := s.AppendEvent(t.Context(), run.ID, review.Event{
					Type: review.EventToolCalled, Agent: fmt.Sprintf("w%d", w), Data: map[string]int{"i": i},
				})
				if err != nil {
					t.Errorf("writer %d: %v", w, err)
					return
				}
				seqs[w] = append(seqs[w], seq)
			}
		})
	}
	wg.Wait()
	if err := <-readerDone; err != nil {
		t.Error(err)
	}

	seen := map[int]bool{}
	for w, ss := range seqs {
		for i, seq := range ss {
			if seen[seq] {
				t.Errorf("seq %d given twice", seq)
			}
			seen[seq] = true
			if i > 0 && seq <= ss[i-1] {
				t.Errorf("writer %d got seq %d after %d", w, seq, ss[i-1])
			}
		}
	}
	for seq := 1; seq <= total; seq++ {
		if !seen[seq] {
			t.Errorf("seq %d never given", seq)
		}
	}
}

// notifications collects what Listen delivers.
type notifications chan string

func (n notifications) next(t *testing.T) string {
	t.Helper()
	select {
	case p := <-n:
		return p
	case <-time.After(30 * time.Second):
		t.Fatal("no notification within 30s")
		return ""
	}
}

func listen(t *testing.T, s *store.Store, channel string) notifications {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	got := make(notifications, 100)
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.Listen(ctx, channel, func(p string) { got <- p })
	}()
	t.Cleanup(func() { cancel(); <-done })
	if p := got.next(t); p != "" {
		t.Fatalf("first call got %q, want the empty ready payload", p)
	}
	return got
}

func TestListen(t *testing.T) {
	t.Parallel()
	s, raw := newStore(t)
	events := listen(t, s, store.ChannelEvents)
	jobs := listen(t, s, store.ChannelJobs)

	run := enqueue(t, s, diffRun())
	if got := jobs.next(t); got != run.ID {
		t.Errorf("jobs notification %q, want %q", got, run.ID)
	}
	if _, err := s.AppendEvent(t.Context(), run.ID, review.Event{Type: review.EventPipelineStarted}); err != nil {
		t.Fatal(err)
	}
	if got, want := events.next(t), run.ID+":1"; got != want {
		t.Errorf("events notification %q, want %q", got, want)
	}

	// A run queued again after a retry wakes workers too.
	claim(t, s, "w")
	if err := s.RetryRun(t.Context(), run.ID, "w", 0, "boom"); err != nil {
		t.Fatal(err)
	}
	if got := jobs.next(t); got != run.ID {
		t.Errorf("jobs notification after a retry %q, want %q", got, run.ID)
	}

	// The server drops the listener's connection: it reconnects, says so
	// with an empty payload, and goes on delivering.
	var terminated int
	err := raw.QueryRow(t.Context(), `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE datname = current_database() AND query = 'LISTEN "mergeguard_events"'`).Scan(&terminated)
	if err != nil || terminated != 1 {
		t.Fatalf("terminated %d listeners (%v), want 1", terminated, err)
	}
	if got := events.next(t); got != "" {
		t.Fatalf("after reconnecting got %q, want the empty payload", got)
	}
	if _, err := s.AppendEvent(t.Context(), run.ID, review.Event{Type: review.EventPipelineCompleted}); err != nil {
		t.Fatal(err)
	}
	if got, want := events.next(t), run.ID+":2"; got != want {
		t.Errorf("events notification after reconnecting %q, want %q", got, want)
	}
}
