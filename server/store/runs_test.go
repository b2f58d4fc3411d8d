package store_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/server/store"
)

// runVolatile are the Run fields a test cannot predict.
var runVolatile = cmpopts.IgnoreFields(store.Run{}, "ID", "RunAfter", "CreatedAt", "StartedAt",
	"FinishedAt", "LeaseExpiresAt", "PostStartedAt", "PostedAt", "DurationMS")

func TestEnqueueRunStoresTheRequest(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	diff := "diff --git a/x b/x\n"
	tests := []struct {
		name string
		in   store.NewRun
		want store.Run
	}{
		{
			name: "pull request",
			in: store.NewRun{
				Mode: store.ModePR, Trigger: store.TriggerCommand, InstallationID: 42, Repository: "octo/app",
				RepositoryID: 4242, PRNumber: 12, HeadSHA: "h1", BaseSHA: "b1", Branch: "topic", RequestedBy: "alice",
				Options: json.RawMessage(`{"focus_areas": ["security"]}`), MaxAttempts: 5,
			},
			want: store.Run{
				Mode: store.ModePR, Trigger: store.TriggerCommand, Status: store.StatusQueued,
				InstallationID: 42, Repository: "octo/app", RepositoryID: 4242, PRNumber: 12, HeadSHA: "h1", BaseSHA: "b1",
				Branch: "topic", RequestedBy: "alice", Options: json.RawMessage(`{"focus_areas": ["security"]}`),
				MaxAttempts: 5,
			},
		},
		{
			name: "diff with defaults",
			in:   store.NewRun{Mode: store.ModeDiff, Trigger: store.TriggerAPI, DiffText: &diff},
			want: store.Run{
				Mode: store.ModeDiff, Trigger: store.TriggerAPI, Status: store.StatusQueued,
				Options: json.RawMessage(`{}`), DiffText: &diff, MaxAttempts: store.DefaultMaxAttempts,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := enqueue(t, s, tt.in)
			if diff := cmp.Diff(tt.want, got, runVolatile); diff != "" {
				t.Errorf("EnqueueRun (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(got, getRun(t, s, got.ID)); diff != "" {
				t.Errorf("GetRun differs from EnqueueRun (-enqueued +read):\n%s", diff)
			}
		})
	}
}

func TestEnqueueRunRejectsBadInput(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	tests := []struct {
		name string
		in   store.NewRun
		want string
	}{
		{"unknown mode", store.NewRun{Mode: "patch", Trigger: store.TriggerAPI}, "review_runs_mode_check"},
		{"unknown trigger", func() store.NewRun { r := diffRun(); r.Trigger = "cron"; return r }(), "review_runs_trigger_check"},
		{"pull request without number", store.NewRun{Mode: store.ModePR, Trigger: store.TriggerWebhook, Repository: "o/r"}, "review_runs_pr_identity"},
		{"diff without text", store.NewRun{Mode: store.ModeDiff, Trigger: store.TriggerAPI}, "review_runs_diff_text"},
		{"options not an object", func() store.NewRun { r := diffRun(); r.Options = json.RawMessage(`[1]`); return r }(), "review_runs_options_check"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.EnqueueRun(t.Context(), tt.in)
			if got := constraintOf(err); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestEnqueueRunDeduplicatesQueuedTwin(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name           string
		first, second  store.Trigger
		firstHead, sec string
		wantReused     bool
	}{
		{"webhook twice at one head", store.TriggerWebhook, store.TriggerWebhook, "a", "a", true},
		{"webhook at a new head", store.TriggerWebhook, store.TriggerWebhook, "a", "b", false},
		{"rerun command twice", store.TriggerCommand, store.TriggerCommand, "a", "a", false},
		{"rerun after webhook", store.TriggerWebhook, store.TriggerCommand, "a", "a", false},
		{"webhook after api", store.TriggerAPI, store.TriggerWebhook, "a", "a", false},
	}
	s, _ := newStore(t)
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			repo := fmt.Sprintf("o/dedup%d", i)
			r1 := prRun(repo, 1, tt.firstHead)
			r1.Trigger = tt.first
			first := enqueue(t, s, r1)
			r2 := prRun(repo, 1, tt.sec)
			r2.Trigger = tt.second
			second := enqueue(t, s, r2)

			if got := second.ID == first.ID; got != tt.wantReused {
				t.Errorf("second run reused the first: %t, want %t", got, tt.wantReused)
			}
			queued, err := s.ListRuns(t.Context(), store.RunFilter{Repository: repo, Status: store.StatusQueued})
			if err != nil {
				t.Fatal(err)
			}
			if len(queued) != 1 || queued[0].ID != second.ID {
				t.Errorf("queued runs of the pull request: %v, want only %s", runIDs(queued), second.ID)
			}
		})
	}
}

func runIDs(runs []store.Run) []string {
	var ids []string
	for _, r := range runs {
		ids = append(ids, r.ID+"("+string(r.Status)+")")
	}
	return ids
}

func TestEnqueueRunSupersedesQueuedRuns(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	old := enqueue(t, s, prRun("o/r", 1, "a"))
	otherPR := enqueue(t, s, prRun("o/r", 2, "a"))
	otherRepo := enqueue(t, s, prRun("o/other", 1, "a"))
	diff := enqueue(t, s, diffRun())
	newer := enqueue(t, s, prRun("o/r", 1, "b"))

	got := getRun(t, s, old.ID)
	want := old
	want.Status = store.StatusSuperseded
	want.StatusReason = fmt.Sprintf("superseded by %s (head b)", newer.ID)
	if diff := cmp.Diff(want, got, runVolatile); diff != "" {
		t.Errorf("older queued run (-want +got):\n%s", diff)
	}
	if got.FinishedAt == nil {
		t.Error("superseded run has no finished_at")
	}
	for _, r := range []store.Run{otherPR, otherRepo, diff, newer} {
		if got := getRun(t, s, r.ID).Status; got != store.StatusQueued {
			t.Errorf("run %s (%s#%d): status %s, want queued", r.ID, r.Repository, r.PRNumber, got)
		}
	}
}

func TestEnqueueRunCancelsRunningRunAtOtherHead(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	a := enqueue(t, s, prRun("o/r", 1, "a"))
	if got := claim(t, s, "w1"); got == nil || got.ID != a.ID {
		t.Fatalf("claimed %v, want run %s", got, a.ID)
	}

	// Same head: the running run goes on; the new one waits for it.
	sameHead := enqueue(t, s, prRun("o/r", 1, "a"))
	if cancel, err := s.RenewLease(t.Context(), a.ID, "w1", time.Minute); err != nil || cancel {
		t.Fatalf("RenewLease after a same-head enqueue = %t, %v; want false, nil", cancel, err)
	}
	if got := claim(t, s, "w2"); got != nil {
		t.Fatalf("claimed run %s of a pull request that has a running run", got.ID)
	}

	// New head: the queued run is superseded, the running one asked to stop.
	c := enqueue(t, s, prRun("o/r", 1, "c"))
	if got := getRun(t, s, sameHead.ID).Status; got != store.StatusSuperseded {
		t.Errorf("queued same-head run: status %s, want superseded", got)
	}
	cancel, err := s.RenewLease(t.Context(), a.ID, "w1", time.Minute)
	if err != nil || !cancel {
		t.Fatalf("RenewLease after a new-head enqueue = %t, %v; want true, nil", cancel, err)
	}
	if got := claim(t, s, "w2"); got != nil {
		t.Fatalf("claimed run %s while the cancelled run still runs", got.ID)
	}
	if err := s.FinishRun(t.Context(), a.ID, "w1", store.Result{Status: store.StatusSuperseded, Reason: "newer head c"}); err != nil {
		t.Fatal(err)
	}
	if got := claim(t, s, "w2"); got == nil || got.ID != c.ID {
		t.Fatalf("claimed %v after the superseded run finished, want run %s", got, c.ID)
	}
}

// A pull request run queued without a head (its head is read when it
// starts) is not a newer head: it waits behind the running run instead of
// cancelling it.
func TestEnqueueRunWithoutHeadDoesNotCancelTheRunningRun(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	a := enqueue(t, s, prRun("o/r", 1, "a"))
	if got := claim(t, s, "w1"); got == nil || got.ID != a.ID {
		t.Fatalf("claimed %v, want run %s", got, a.ID)
	}
	rerun := prRun("o/r", 1, "")
	rerun.Trigger = store.TriggerCommand
	waiting := enqueue(t, s, rerun)
	if cancel, err := s.RenewLease(t.Context(), a.ID, "w1", time.Minute); err != nil || cancel {
		t.Fatalf("RenewLease after enqueueing a run without a head = %t, %v; want false, nil", cancel, err)
	}
	if err := s.FinishRun(t.Context(), a.ID, "w1", store.Result{Status: store.StatusSucceeded}); err != nil {
		t.Fatal(err)
	}
	if got := claim(t, s, "w2"); got == nil || got.ID != waiting.ID {
		t.Fatalf("claimed %v after the running run finished, want the waiting run %s", got, waiting.ID)
	}
}

func TestSetRunHead(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	r := prRun("o/r", 1, "")
	r.Trigger, r.BaseSHA, r.Branch = store.TriggerCommand, "", ""
	run := enqueue(t, s, r)
	head := review.PullHead{SHA: "h1", BaseSHA: "b1", Branch: "topic"}
	if err := s.SetRunHead(t.Context(), run.ID, "w1", head); !errors.Is(err, store.ErrLeaseLost) {
		t.Errorf("SetRunHead of a queued run: %v, want ErrLeaseLost", err)
	}
	if got := claim(t, s, "w1"); got == nil || got.ID != run.ID {
		t.Fatalf("claimed %v, want run %s", got, run.ID)
	}
	if err := s.SetRunHead(t.Context(), run.ID, "w2", head); !errors.Is(err, store.ErrLeaseLost) {
		t.Errorf("SetRunHead by another worker: %v, want ErrLeaseLost", err)
	}
	if err := s.SetRunHead(t.Context(), "not-a-run", "w1", head); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("SetRunHead of a malformed id: %v, want ErrNotFound", err)
	}
	if err := s.SetRunHead(t.Context(), run.ID, "w1", head); err != nil {
		t.Fatal(err)
	}
	got := getRun(t, s, run.ID)
	if diff := cmp.Diff(head, review.PullHead{SHA: got.HeadSHA, BaseSHA: got.BaseSHA, Branch: got.Branch}); diff != "" {
		t.Errorf("recorded head (-want +got):\n%s", diff)
	}

	// The recorded head is what later enqueues compare with.
	enqueue(t, s, prRun("o/r", 1, "h1"))
	if cancel, err := s.RenewLease(t.Context(), run.ID, "w1", time.Minute); err != nil || cancel {
		t.Fatalf("RenewLease after a same-head enqueue = %t, %v; want false, nil", cancel, err)
	}
	enqueue(t, s, prRun("o/r", 1, "h2"))
	if cancel, err := s.RenewLease(t.Context(), run.ID, "w1", time.Minute); err != nil || !cancel {
		t.Fatalf("RenewLease after a new-head enqueue = %t, %v; want true, nil", cancel, err)
	}
}

// Concurrent enqueues of one pull request are serialized: exactly one run
// stays queued.
func TestEnqueueRunConcurrentlyLeavesOneQueued(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			_, errs[i] = s.EnqueueRun(t.Context(), prRun("o/r", 1, fmt.Sprintf("head%d", i)))
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	queued, err := s.ListRuns(t.Context(), store.RunFilter{Repository: "o/r", Status: store.StatusQueued})
	if err != nil {
		t.Fatal(err)
	}
	superseded, err := s.ListRuns(t.Context(), store.RunFilter{Repository: "o/r", Status: store.StatusSuperseded})
	if err != nil {
		t.Fatal(err)
	}
	if len(queued) != 1 || len(superseded) != n-1 {
		t.Errorf("%d queued and %d superseded runs, want 1 and %d", len(queued), len(superseded), n-1)
	}
}

type deliveryRow struct {
	Event, Action, Outcome, Detail string
}

func readDelivery(t *testing.T, raw *pgxpool.Pool, id string) deliveryRow {
	t.Helper()
	var d deliveryRow
	err := raw.QueryRow(t.Context(), `SELECT event, action, outcome, detail FROM webhook_deliveries WHERE delivery_id = $1`, id).
		Scan(&d.Event, &d.Action, &d.Outcome, &d.Detail)
	if err != nil {
		t.Fatalf("read delivery %s: %v", id, err)
	}
	return d
}

func TestRecordDelivery(t *testing.T) {
	t.Parallel()
	s, raw := newStore(t)
	pr := func(head string, trigger store.Trigger) *store.NewRun {
		r := prRun("o/r", 1, head)
		r.Trigger = trigger
		return &r
	}
	delivery := func(id string) store.Delivery {
		return store.Delivery{ID: id, Event: "pull_request", Action: "synchronize", InstallationID: 7, Repository: "o/r"}
	}
	reopened := func(id string) store.Delivery {
		d := delivery(id)
		d.Action = "reopened"
		return d
	}
	first, err := s.RecordDelivery(t.Context(), delivery("d1"), pr("a", store.TriggerWebhook))
	if err != nil {
		t.Fatal(err)
	}
	if first.Duplicate || first.Reused || first.Run == nil || first.Run.DeliveryID != "d1" {
		t.Fatalf("first delivery: %+v, want a new run from delivery d1", first)
	}
	firstID := first.Run.ID

	tests := []struct {
		name         string
		delivery     store.Delivery
		run          *store.NewRun
		wantDup      bool
		wantReused   bool
		wantNewRun   bool
		wantReplayOf string
		wantDelivery deliveryRow
	}{
		{
			name: "redelivery changes nothing", delivery: delivery("d1"), run: pr("b", store.TriggerWebhook),
			wantDup:      true,
			wantDelivery: deliveryRow{"pull_request", "synchronize", "queued", "run " + firstID},
		},
		{
			name: "same event under a new delivery id is a replay", delivery: delivery("d2"), run: pr("a", store.TriggerWebhook),
			wantReplayOf: "d1",
			wantDelivery: deliveryRow{"pull_request", "synchronize", "duplicate", "replays delivery d1 (pull_request synchronize of head a)"},
		},
		{
			name: "same head in another event reuses the queued run", delivery: reopened("d2b"), run: pr("a", store.TriggerWebhook),
			wantReused:   true,
			wantDelivery: deliveryRow{"pull_request", "reopened", "deduplicated", "run " + firstID + " already queued for head a"},
		},
		{
			name:         "no run asked",
			delivery:     store.Delivery{ID: "d3", Event: "pull_request", Action: "opened", Outcome: "ignored", Detail: "draft pull request"},
			wantDelivery: deliveryRow{"pull_request", "opened", "ignored", "draft pull request"},
		},
		{
			name:         "no run and no outcome",
			delivery:     store.Delivery{ID: "d4", Event: "ping"},
			wantDelivery: deliveryRow{"ping", "", "received", ""},
		},
		{
			name: "rerun command queues again", delivery: delivery("d5"), run: pr("a", store.TriggerCommand),
			wantNewRun: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := s.RecordDelivery(t.Context(), tt.delivery, tt.run)
			if err != nil {
				t.Fatal(err)
			}
			if res.Duplicate != tt.wantDup || res.Reused != tt.wantReused {
				t.Errorf("Duplicate, Reused = %t, %t; want %t, %t", res.Duplicate, res.Reused, tt.wantDup, tt.wantReused)
			}
			if res.ReplayOf != tt.wantReplayOf {
				t.Errorf("ReplayOf = %q, want %q", res.ReplayOf, tt.wantReplayOf)
			}
			switch {
			case tt.run == nil || tt.wantDup || tt.wantReplayOf != "":
				if res.Run != nil {
					t.Errorf("got run %s, want none", res.Run.ID)
				}
			case tt.wantReused:
				if res.Run == nil || res.Run.ID != firstID {
					t.Errorf("got run %v, want the queued run %s", res.Run, firstID)
				}
			case tt.wantNewRun:
				if res.Run == nil || res.Run.ID == firstID || res.Run.DeliveryID != tt.delivery.ID {
					t.Errorf("got run %+v, want a new run of delivery %s", res.Run, tt.delivery.ID)
				}
				tt.wantDelivery = deliveryRow{"pull_request", "synchronize", "queued", "run " + res.Run.ID}
			}
			if diff := cmp.Diff(tt.wantDelivery, readDelivery(t, raw, tt.delivery.ID)); diff != "" {
				t.Errorf("stored delivery (-want +got):\n%s", diff)
			}
		})
	}

	runs, err := s.ListRuns(t.Context(), store.RunFilter{Repository: "o/r"})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 {
		t.Errorf("runs of o/r: %v, want 2 (the first, superseded by the rerun)", runIDs(runs))
	}
}

// A delivery whose run cannot be stored is not recorded either, so GitHub's
// redelivery can try again.
func TestRecordDeliveryIsAtomic(t *testing.T) {
	t.Parallel()
	s, raw := newStore(t)
	bad := store.NewRun{Mode: store.ModeDiff, Trigger: store.TriggerAPI} // no diff text
	if _, err := s.RecordDelivery(t.Context(), store.Delivery{ID: "d1", Event: "pull_request"}, &bad); err == nil {
		t.Fatal("RecordDelivery accepted a bad run")
	}
	var n int
	if err := raw.QueryRow(t.Context(), `SELECT count(*) FROM webhook_deliveries`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("%d deliveries stored, want 0", n)
	}
	res, err := s.RecordDelivery(t.Context(), store.Delivery{ID: "d1", Event: "pull_request"}, new(prRun("o/r", 1, "a")))
	if err != nil || res.Duplicate || res.Run == nil {
		t.Errorf("redelivery = %+v, %v; want a new run", res, err)
	}
}

func TestGetRunNotFound(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	for _, id := range []string{"00000000-0000-0000-0000-000000000001", "nope", "", "1; DROP TABLE review_runs"} {
		if _, err := s.GetRun(t.Context(), id); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("GetRun(%q) = %v, want ErrNotFound", id, err)
		}
	}
}

func TestListRuns(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	a1 := enqueue(t, s, prRun("o/a", 1, "x"))
	a2 := enqueue(t, s, prRun("o/a", 2, "x"))
	b1 := enqueue(t, s, prRun("o/b", 1, "x"))
	d := enqueue(t, s, diffRun())
	if got := claim(t, s, "w"); got == nil || got.ID != a1.ID {
		t.Fatalf("claimed %v, want %s", got, a1.ID)
	}
	tests := []struct {
		name   string
		filter store.RunFilter
		want   []string
	}{
		{"all, newest first", store.RunFilter{}, []string{d.ID, b1.ID, a2.ID, a1.ID}},
		{"repository", store.RunFilter{Repository: "o/a"}, []string{a2.ID, a1.ID}},
		{"pull request", store.RunFilter{Repository: "o/a", PRNumber: 2}, []string{a2.ID}},
		{"status", store.RunFilter{Status: store.StatusRunning}, []string{a1.ID}},
		{"limit", store.RunFilter{Limit: 2}, []string{d.ID, b1.ID}},
		{"nothing", store.RunFilter{Repository: "o/none"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runs, err := s.ListRuns(t.Context(), tt.filter)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range runs {
				got = append(got, r.ID)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ListRuns (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRepositoryIDs: the ids of the repositories a name's runs were of,
// newest first; a run without an id (from before ids were kept) adds none.
func TestRepositoryIDs(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	for _, r := range []struct {
		repo   string
		id     int64
		number int
	}{{"acme/app", 0, 1}, {"acme/app", 11, 1}, {"acme/app", 11, 2}, {"acme/app", 22, 3}, {"acme/other", 33, 1}} {
		nr := prRun(r.repo, r.number, fmt.Sprintf("h%d-%d", r.id, r.number))
		nr.RepositoryID = r.id
		enqueue(t, s, nr)
	}
	tests := []struct {
		repo   string
		number int
		want   []int64
	}{
		{"acme/app", 0, []int64{22, 11}},
		{"acme/app", 1, []int64{11}},
		{"acme/app", 3, []int64{22}},
		{"acme/app", 4, nil},
		{"acme/other", 0, []int64{33}},
		{"nobody/none", 0, nil},
	}
	all := map[string][]int64{}
	for _, tt := range tests {
		got, err := s.RepositoryIDs(t.Context(), tt.repo, tt.number)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("RepositoryIDs(%s, %d) (-want +got):\n%s", tt.repo, tt.number, diff)
		}
		if tt.number == 0 && len(tt.want) > 0 {
			all[tt.repo] = tt.want
		}
	}
	got, err := s.RepositoryIDsOf(t.Context(), []string{"acme/app", "acme/other", "nobody/none"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(all, got); diff != "" {
		t.Errorf("RepositoryIDsOf: (-want +got):\n%s", diff)
	}
}

// TestLedgerAndLearningsKeepTheRepositoryID: a ledger entry and a learning
// keep the GitHub repository id of the run that wrote them; a later run
// without an id (queued before the upgrade) does not erase it, and a
// learning of no run has none.
func TestLedgerAndLearningsKeepTheRepositoryID(t *testing.T) {
	t.Parallel()
	s, pool := newStore(t)
	finish := func(head string, id int64) string {
		nr := prRun("o/r", 1, head)
		nr.RepositoryID = id
		run := enqueue(t, s, nr)
		claim(t, s, "w")
		e := review.LedgerEntry{Finding: review.Finding{FilePath: "a.go", LineStart: 1, LineEnd: 1, Side: review.SideRight,
			Severity: review.SeverityWarning, Category: review.CategoryBug, Title: "t", VerificationStatus: review.Verified,
			Confidence: 0.9, Fingerprint: "fp"}, State: review.FindingOpen, FirstSeenSHA: head, LastSeenSHA: head}
		if err := s.FinishRun(t.Context(), run.ID, "w", store.Result{Status: store.StatusSucceeded, Ledger: []review.LedgerEntry{e}}); err != nil {
			t.Fatal(err)
		}
		return run.ID
	}
	first := finish("h1", 77)
	finish("h2", 0)
	var got int64
	if err := pool.QueryRow(t.Context(), `SELECT coalesce(repo_id, 0) FROM pr_findings WHERE fingerprint = 'fp'`).Scan(&got); err != nil || got != 77 {
		t.Errorf("the ledger entry's repository id: %d, %v; want 77", got, err)
	}
	for _, tt := range []struct {
		run  string
		want int64
	}{{first, 77}, {"", 0}} {
		l, err := s.AddLearning(t.Context(), review.Learning{Repository: "o/r", Instruction: "x", Status: review.LearningProposed,
			Author: "alice", RunID: tt.run})
		if err != nil {
			t.Fatal(err)
		}
		if err := pool.QueryRow(t.Context(), `SELECT coalesce(repo_id, 0) FROM learnings WHERE id = $1`, l.ID).Scan(&got); err != nil || got != tt.want {
			t.Errorf("learning of run %q: repository id %d, %v; want %d", tt.run, got, err, tt.want)
		}
	}
}
