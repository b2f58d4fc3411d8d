package store_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/server/store"
)

// Many workers drain a queue holding several runs per pull request: no run
// is claimed twice and no pull request ever has two runs held at once. (The
// runs' timestamps cannot show this: now() is when a claim statement began,
// and a claim may wait on the previous run's commit before it succeeds.)
func TestClaimRunConcurrentWorkers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		prRuns, prs int
		diffs       int
		workers     int
	}{
		{name: "runs of 10 pull requests and diffs", prRuns: 200, prs: 10, diffs: 50, workers: 8},
		// Every claimer goes for the same pull request at once: all but
		// one lose the race on review_runs_one_running_per_pr.
		{name: "one hot pull request", prRuns: 40, prs: 1, workers: 8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			drainConcurrently(t, tt.prRuns, tt.prs, tt.diffs, tt.workers)
		})
	}
}

// drainConcurrently queues prRuns runs spread over prs pull requests (inserted
// directly: EnqueueRun would supersede them) and diffs diff runs, and has
// workers claim and finish them all.
func drainConcurrently(t *testing.T, prRuns, prs, diffs, workers int) {
	s, raw := newStore(t)
	total := int64(prRuns + diffs)
	_, err := raw.Exec(t.Context(), `
		INSERT INTO review_runs (mode, trigger, repository, pr_number, head_sha)
		SELECT 'pr', 'webhook', 'o/r', 1 + i % $2, 'h' || i FROM generate_series(0, $1 - 1) i;
		`, prRuns, prs)
	if err != nil {
		t.Fatal(err)
	}
	_, err = raw.Exec(t.Context(), `
		INSERT INTO review_runs (mode, trigger, diff_text) SELECT 'diff', 'api', 'd' || i FROM generate_series(1, $1) i`, diffs)
	if err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	var (
		mu      sync.Mutex
		claimed = map[string]string{} // run id -> worker
		active  = map[int]string{}    // pull request -> run id held
		done    atomic.Int64
		wg      sync.WaitGroup
	)
	for w := range workers {
		worker := fmt.Sprintf("worker-%d", w)
		wg.Go(func() {
			for done.Load() < total && ctx.Err() == nil {
				run, err := s.ClaimRun(ctx, worker, time.Minute)
				if err != nil {
					t.Errorf("%s: ClaimRun: %v", worker, err)
					return
				}
				if run == nil {
					time.Sleep(time.Millisecond)
					continue
				}
				mu.Lock()
				if other, ok := claimed[run.ID]; ok {
					t.Errorf("run %s claimed by %s and %s", run.ID, other, worker)
				}
				claimed[run.ID] = worker
				if run.Mode == store.ModePR {
					if other, ok := active[run.PRNumber]; ok {
						t.Errorf("pull request %d: runs %s and %s held at once", run.PRNumber, other, run.ID)
					}
					active[run.PRNumber] = run.ID
				}
				mu.Unlock()

				time.Sleep(100 * time.Microsecond) // widen the window a second holder would use

				// Release before finishing: once FinishRun commits another
				// worker may rightly take the pull request's next run.
				mu.Lock()
				delete(active, run.PRNumber)
				mu.Unlock()
				if err := s.FinishRun(ctx, run.ID, worker, store.Result{Status: store.StatusSucceeded}); err != nil {
					t.Errorf("%s: FinishRun: %v", worker, err)
					return
				}
				done.Add(1)
			}
		})
	}
	wg.Wait()
	if got := done.Load(); got != total {
		t.Fatalf("%d runs done, want %d", got, total)
	}

	var notDone, attemptsOverOne int
	err = raw.QueryRow(t.Context(), `SELECT count(*) FILTER (WHERE status <> 'succeeded'), count(*) FILTER (WHERE attempts <> 1)
		FROM review_runs`).Scan(&notDone, &attemptsOverOne)
	if err != nil {
		t.Fatal(err)
	}
	if notDone != 0 || attemptsOverOne != 0 {
		t.Errorf("%d runs not succeeded and %d runs with attempts other than 1, want none", notDone, attemptsOverOne)
	}
}

func TestClaimRunEmptyQueue(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	if run := claim(t, s, "w"); run != nil {
		t.Errorf("claimed %s from an empty queue", run.ID)
	}
	if _, err := s.ClaimRun(t.Context(), "w", 0); err == nil {
		t.Error("ClaimRun accepted a zero lease")
	}
}

func TestClaimRunSetsTheLease(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	queued := enqueue(t, s, prRun("o/r", 1, "a"))
	before := time.Now()
	run := claim(t, s, "w1")
	want := queued
	want.Status, want.LockedBy, want.Attempts = store.StatusRunning, "w1", 1
	if diff := cmp.Diff(want, *run, runVolatile); diff != "" {
		t.Errorf("claimed run (-want +got):\n%s", diff)
	}
	if run.StartedAt == nil || run.LeaseExpiresAt == nil {
		t.Fatalf("claimed run has started_at %v and lease_expires_at %v", run.StartedAt, run.LeaseExpiresAt)
	}
	// Database and test clocks are the same machine's; allow for slack.
	if lease := run.LeaseExpiresAt.Sub(before); lease < 50*time.Second || lease > 70*time.Second {
		t.Errorf("lease of %v, want about a minute", lease)
	}
}

// A worker that dies loses its run to the next claimer once the lease
// expires; after max_attempts the run is recorded failed.
func TestLeaseExpiryRecovery(t *testing.T) {
	t.Parallel()
	s, raw := newStore(t)
	queued := enqueue(t, s, prRun("o/r", 1, "a"))
	first := claim(t, s, "w1")
	if first == nil || first.ID != queued.ID {
		t.Fatalf("claimed %v, want %s", first, queued.ID)
	}
	// A run of the same pull request waits behind the running one (same
	// head, so the first is not cancelled).
	waiting := enqueue(t, s, func() store.NewRun { r := prRun("o/r", 1, "a"); r.Trigger = store.TriggerCommand; return r }())
	for attempt := 2; attempt <= store.DefaultMaxAttempts; attempt++ {
		expireLease(t, raw, queued.ID)
		worker := fmt.Sprintf("w%d", attempt)
		run := claim(t, s, worker)
		if run == nil || run.ID != queued.ID {
			t.Fatalf("attempt %d: claimed %v, want the expired run %s before the waiting one", attempt, run, queued.ID)
		}
		if run.Attempts != attempt || run.LockedBy != worker || !run.StartedAt.Equal(*first.StartedAt) {
			t.Errorf("attempt %d: attempts %d, locked by %s, started at %v; want %d, %s, %v",
				attempt, run.Attempts, run.LockedBy, run.StartedAt, attempt, worker, first.StartedAt)
		}
		// The previous holder lost it.
		previous := fmt.Sprintf("w%d", attempt-1)
		if _, err := s.RenewLease(t.Context(), queued.ID, previous, time.Minute); !errors.Is(err, store.ErrLeaseLost) {
			t.Errorf("RenewLease by %s = %v, want ErrLeaseLost", previous, err)
		}
		if err := s.FinishRun(t.Context(), queued.ID, previous, store.Result{Status: store.StatusSucceeded}); !errors.Is(err, store.ErrLeaseLost) {
			t.Errorf("FinishRun by %s = %v, want ErrLeaseLost", previous, err)
		}
		if err := s.RetryRun(t.Context(), queued.ID, previous, 0, "x"); !errors.Is(err, store.ErrLeaseLost) {
			t.Errorf("RetryRun by %s = %v, want ErrLeaseLost", previous, err)
		}
		if _, err := s.ClaimPost(t.Context(), queued.ID, previous); !errors.Is(err, store.ErrLeaseLost) {
			t.Errorf("ClaimPost by %s = %v, want ErrLeaseLost", previous, err)
		}
		if _, err := s.RenewLease(t.Context(), queued.ID, worker, time.Minute); err != nil {
			t.Errorf("RenewLease by the holder %s: %v", worker, err)
		}
	}

	// The last attempt dies too: the run is given up and the waiting run of
	// the pull request can go.
	expireLease(t, raw, queued.ID)
	reaped, err := s.ReapRuns(t.Context())
	if err != nil {
		t.Fatalf("ReapRuns: %v", err)
	}
	if len(reaped) != 1 || reaped[0].ID != queued.ID || reaped[0].Status != store.StatusFailed {
		t.Fatalf("ReapRuns = %+v, want the given-up run %s, failed", reaped, queued.ID)
	}
	if again, err := s.ReapRuns(t.Context()); err != nil || len(again) != 0 {
		t.Errorf("ReapRuns again = %+v, %v; want nothing", again, err)
	}
	next := claim(t, s, "w9")
	if next == nil || next.ID != waiting.ID {
		t.Fatalf("claimed %v after the run was given up, want the waiting run %s", next, waiting.ID)
	}
	got := getRun(t, s, queued.ID)
	want := store.Run{
		Status: store.StatusFailed, StatusReason: "gave up after 3 attempts",
		Error: "worker lost; gave up after 3 attempts", Attempts: 3, LockedBy: "w3",
	}
	ignore := cmpopts.IgnoreFields(store.Run{}, "Mode", "Trigger", "InstallationID", "Repository", "PRNumber",
		"HeadSHA", "BaseSHA", "Branch", "Options", "MaxAttempts")
	if diff := cmp.Diff(want, got, runVolatile, ignore); diff != "" {
		t.Errorf("given-up run (-want +got):\n%s", diff)
	}
	if got.FinishedAt == nil || got.LeaseExpiresAt != nil {
		t.Errorf("given-up run: finished_at %v, lease_expires_at %v; want set, nil", got.FinishedAt, got.LeaseExpiresAt)
	}
}

// A run a newer head cancelled whose worker died is recorded superseded,
// not run again.
func TestLeaseExpiryOfCancelledRun(t *testing.T) {
	t.Parallel()
	s, raw := newStore(t)
	old := enqueue(t, s, prRun("o/r", 1, "a"))
	claim(t, s, "w1")
	newer := enqueue(t, s, prRun("o/r", 1, "b"))
	expireLease(t, raw, old.ID)

	if run := claim(t, s, "w2"); run == nil || run.ID != newer.ID {
		t.Fatalf("claimed %v, want the newer run %s", run, newer.ID)
	}
	got := getRun(t, s, old.ID)
	if got.Status != store.StatusSuperseded || got.Attempts != 1 || got.FinishedAt == nil {
		t.Errorf("cancelled run whose worker died: status %s after %d attempts, finished %v; want superseded after 1, set",
			got.Status, got.Attempts, got.FinishedAt)
	}
}

func TestRetryRun(t *testing.T) {
	t.Parallel()
	s, raw := newStore(t)
	queued := enqueue(t, s, diffRun())
	makeDue := func() {
		t.Helper()
		if _, err := raw.Exec(t.Context(), `UPDATE review_runs SET run_after = now() WHERE id = $1`, queued.ID); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		attempt    int
		after      time.Duration
		wantStatus store.Status
		wantReason string
	}{
		{1, time.Hour, store.StatusQueued, "attempt 1 failed; retrying"},
		{2, 0, store.StatusQueued, "attempt 2 failed; retrying"},
		{3, time.Hour, store.StatusFailed, "gave up after 3 attempts"},
	}
	for _, tt := range tests {
		run := claim(t, s, "w")
		if run == nil || run.ID != queued.ID || run.Attempts != tt.attempt {
			t.Fatalf("attempt %d: claimed %+v", tt.attempt, run)
		}
		errMsg := fmt.Sprintf("github: 502 on attempt %d", tt.attempt)
		before := time.Now()
		if err := s.RetryRun(t.Context(), queued.ID, "w", tt.after, errMsg); err != nil {
			t.Fatal(err)
		}
		got := getRun(t, s, queued.ID)
		if got.Status != tt.wantStatus || got.StatusReason != tt.wantReason || got.Error != errMsg {
			t.Errorf("attempt %d: status %s (%q), error %q; want %s (%q), %q",
				tt.attempt, got.Status, got.StatusReason, got.Error, tt.wantStatus, tt.wantReason, errMsg)
		}
		if tt.wantStatus != store.StatusQueued {
			if got.FinishedAt == nil {
				t.Errorf("attempt %d: final run has no finished_at", tt.attempt)
			}
			continue
		}
		if got.LockedBy != "" || got.LeaseExpiresAt != nil {
			t.Errorf("attempt %d: queued again but still locked by %q until %v", tt.attempt, got.LockedBy, got.LeaseExpiresAt)
		}
		if tt.after > 0 {
			if wait := got.RunAfter.Sub(before); wait < tt.after-time.Minute {
				t.Errorf("attempt %d: due in %v, want about %v", tt.attempt, wait, tt.after)
			}
			if run := claim(t, s, "w"); run != nil {
				t.Fatalf("attempt %d: claimed %s before it was due", tt.attempt, run.ID)
			}
			makeDue()
		}
	}
}

func TestRetryRunOfCancelledRun(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	old := enqueue(t, s, prRun("o/r", 1, "a"))
	claim(t, s, "w")
	enqueue(t, s, prRun("o/r", 1, "b"))
	if err := s.RetryRun(t.Context(), old.ID, "w", 0, "timeout"); err != nil {
		t.Fatal(err)
	}
	if got := getRun(t, s, old.ID); got.Status != store.StatusSuperseded || got.FinishedAt == nil {
		t.Errorf("retried cancelled run: status %s, finished %v; want superseded, set", got.Status, got.FinishedAt)
	}
}

func testVerdict() *review.Verdict {
	finding := func(path string, line int, sev review.Severity, fp string) review.Finding {
		return review.Finding{
			FilePath: path, LineStart: line, LineEnd: line + 2, Side: review.SideRight, Severity: sev,
			Category: review.CategoryBug, Title: "nil dereference", Description: "x may be nil",
			Suggestion: "check x", VerificationStatus: review.Verified, Confidence: 0.9,
			CodeSnippet: "x.y()", Agent: "reviewer-1", Fingerprint: fp, Reason: "snippet matches",
		}
	}
	fp := finding("b.go", 3, review.SeverityInfo, "fp-false")
	fp.VerificationStatus, fp.Reason = review.FalsePositive, "code is not in the diff"
	return &review.Verdict{
		Verdict: review.DecisionRequestChanges, Summary: "One critical bug.", Confidence: 0.8,
		Files: []review.FileReview{
			{FilePath: "a.go", Language: "go", ChangeType: "modified", Findings: []review.Finding{
				finding("a.go", 10, review.SeverityCritical, "fp-a10"),
				finding("a.go", 20, review.SeverityWarning, "fp-a20"),
			}, PositiveNotes: []string{"clear names"}},
			{FilePath: "c.go", Language: "go", ChangeType: "added", Findings: []review.Finding{
				finding("c.go", 1, review.SeverityStyle, "fp-c1"),
			}},
		},
		Stats:            review.Stats{FilesChanged: 3, FilesReviewed: 2, FindingsTotal: 3, Critical: 1, InputTokens: 1000, OutputTokens: 200, TotalCost: 0.05},
		FalsePositives:   []review.Finding{fp},
		Recommendations:  []string{"add a test"},
		ReviewDurationMS: 1234,
		Agents: []review.AgentResult{
			{Agent: "reviewer-1", Stage: review.StageReviewer, Status: review.AgentSuccess, Issues: 3, ElapsedMS: 800, Turns: 4,
				Cost: review.CostInfo{InputTokens: 1000, OutputTokens: 200, TotalCost: 0.05}},
			{Agent: "reviewer-2", Stage: review.StageReviewer, Status: review.AgentTimeout, TimeoutSeconds: 120},
			{Agent: "verifier", Stage: review.StageVerifier, Status: review.AgentError, Error: "429 rate limited", ErrorType: "rate_limit"},
			{Agent: "planner", Stage: review.StagePlanner, Status: review.AgentTruncated, Issues: 1, Turns: 10},
		},
	}
}

func TestFinishRunStoresTheReview(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	queued := enqueue(t, s, prRun("o/r", 1, "a"))
	claim(t, s, "w")
	v := testVerdict()
	res := store.Result{
		Status: store.StatusSucceeded, Verdict: v, Agents: v.Agents, Model: "gpt-test",
		Cost: review.CostInfo{InputTokens: 1000, OutputTokens: 200, TotalCost: 0.05}, Duration: 1234 * time.Millisecond,
	}
	if err := s.FinishRun(t.Context(), queued.ID, "w", res); err != nil {
		t.Fatal(err)
	}

	got := getRun(t, s, queued.ID)
	want := queued
	want.Status, want.Attempts, want.LockedBy = store.StatusSucceeded, 1, "w"
	want.Verdict, want.Summary, want.Confidence, want.Result = v.Verdict, v.Summary, v.Confidence, v
	want.Model, want.InputTokens, want.OutputTokens, want.TotalCost = "gpt-test", 1000, 200, 0.05
	if diff := cmp.Diff(want, got, runVolatile); diff != "" {
		t.Errorf("finished run (-want +got):\n%s", diff)
	}
	if got.DurationMS != 1234 || got.FinishedAt == nil || got.LeaseExpiresAt != nil {
		t.Errorf("duration %d ms, finished_at %v, lease %v; want 1234, set, nil", got.DurationMS, got.FinishedAt, got.LeaseExpiresAt)
	}

	stored, err := s.Findings(t.Context(), queued.ID)
	if err != nil {
		t.Fatal(err)
	}
	var findings []review.Finding
	for _, f := range stored {
		findings = append(findings, f.Finding)
		if f.Posted != "no" || f.CommentID != 0 {
			t.Errorf("finding %s: posted %q (comment %d) before any posting", f.Fingerprint, f.Posted, f.CommentID)
		}
	}
	if diff := cmp.Diff(append(v.Findings(), v.FalsePositives...), findings); diff != "" {
		t.Errorf("stored findings (-want +got):\n%s", diff)
	}
	agents, err := s.AgentResults(t.Context(), queued.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(v.Agents, agents); diff != "" {
		t.Errorf("stored agent results (-want +got):\n%s", diff)
	}

	if err := s.FinishRun(t.Context(), queued.ID, "w", res); !errors.Is(err, store.ErrLeaseLost) {
		t.Errorf("second FinishRun = %v, want ErrLeaseLost", err)
	}
}

func TestFinishRunWithoutVerdict(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	queued := enqueue(t, s, diffRun())
	claim(t, s, "w")
	err := s.FinishRun(t.Context(), queued.ID, "w", store.Result{
		Status: store.StatusFailed, Error: "llm: 401 unauthorized",
		Agents: []review.AgentResult{{Agent: "planner", Status: review.AgentError, Error: "401", ErrorType: "auth"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	got := getRun(t, s, queued.ID)
	if got.Status != store.StatusFailed || got.Error != "llm: 401 unauthorized" || got.Result != nil || got.Verdict != "" {
		t.Errorf("failed run: status %s, error %q, result %v, verdict %q", got.Status, got.Error, got.Result, got.Verdict)
	}
	if got.StartedAt == nil || got.DurationMS < 0 {
		t.Errorf("failed run: started_at %v, duration %d ms", got.StartedAt, got.DurationMS)
	}
}

// A finish the database rejects changes nothing: the run stays running with
// no findings or agent results, and its holder can still finish it.
func TestFinishRunIsAtomic(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	withFinding := func(change func(*review.Finding)) store.Result {
		v := testVerdict()
		change(&v.Files[1].Findings[0]) // the third finding stored, after two good ones
		return store.Result{Status: store.StatusSucceeded, Verdict: v, Agents: v.Agents}
	}
	tests := []struct {
		name      string
		res       store.Result
		claimPost bool
		wantErr   string
	}{
		{"finding without fingerprint", withFinding(func(f *review.Finding) { f.Fingerprint = "" }), false, "findings_fingerprint_check"},
		{"unknown severity", withFinding(func(f *review.Finding) { f.Severity = "major" }), false, "findings_severity_check"},
		{"fingerprint twice", withFinding(func(f *review.Finding) { f.Fingerprint = "fp-a10" }), false, "findings_run_id_fingerprint_key"},
		{"finding without side", withFinding(func(f *review.Finding) { f.Side = "" }), false, "findings_side_check"},
		{"agent error without message", func() store.Result {
			v := testVerdict()
			v.Agents[2].Error = ""
			return store.Result{Status: store.StatusSucceeded, Verdict: v, Agents: v.Agents}
		}(), false, "agent_results_error_message"},
		{"verdict confidence out of range", func() store.Result {
			v := testVerdict()
			v.Confidence = 2
			return store.Result{Status: store.StatusSucceeded, Verdict: v}
		}(), false, "review_runs_confidence_check"},
		{"posting an unknown finding", func() store.Result {
			v := testVerdict()
			return store.Result{Status: store.StatusSucceeded, Verdict: v, Posted: &store.Posting{
				ReviewID: 1, Placements: map[string]review.Placement{"nope": {Where: review.PlacedBody}},
			}}
		}(), true, `place finding "nope": the run has no such finding`},
		{"posting a bad placement", store.Result{Status: store.StatusSucceeded, Verdict: testVerdict(), Posted: &store.Posting{
			ReviewID: 1, Placements: map[string]review.Placement{"fp-a10": {Where: "sideways"}},
		}}, true, "findings_posted_check"},
		{"posting another run's review", store.Result{Status: store.StatusSucceeded, Posted: &store.Posting{ReviewID: 77}}, true, "review_runs_posted_review_key"},
		{"posting without ClaimPost", func() store.Result {
			return store.Result{Status: store.StatusSucceeded, Posted: &store.Posting{ReviewID: 1}}
		}(), false, "review_runs_post_claimed"},
		{"status not final", store.Result{Status: store.StatusRunning}, false, `status "running" is not a final status`},
	}
	posted := enqueue(t, s, diffRun()) // the run that posted review 77
	claim(t, s, "w")
	if _, err := s.ClaimPost(t.Context(), posted.ID, "w"); err != nil {
		t.Fatal(err)
	}
	if err := s.FinishRun(t.Context(), posted.ID, "w", store.Result{Status: store.StatusSucceeded, Posted: &store.Posting{ReviewID: 77}}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			queued := enqueue(t, s, diffRun())
			if run := claim(t, s, "w-"+tt.name); run == nil || run.ID != queued.ID {
				t.Fatalf("claimed %v, want %s", run, queued.ID)
			}
			if tt.claimPost {
				if _, err := s.ClaimPost(t.Context(), queued.ID, "w-"+tt.name); err != nil {
					t.Fatal(err)
				}
			}
			err := s.FinishRun(t.Context(), queued.ID, "w-"+tt.name, tt.res)
			if err == nil {
				t.Fatal("FinishRun accepted a bad result")
			}
			if got := constraintOf(err); got != tt.wantErr && !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("error %q, want one about %q", err, tt.wantErr)
			}
			if got := getRun(t, s, queued.ID); got.Status != store.StatusRunning || got.Result != nil || got.FinishedAt != nil {
				t.Errorf("after a rejected finish: status %s, result %v, finished %v; want running, nil, nil", got.Status, got.Result, got.FinishedAt)
			}
			findings, err := s.Findings(t.Context(), queued.ID)
			if err != nil || len(findings) != 0 {
				t.Errorf("after a rejected finish: %d findings (%v), want none", len(findings), err)
			}
			agents, err := s.AgentResults(t.Context(), queued.ID)
			if err != nil || len(agents) != 0 {
				t.Errorf("after a rejected finish: %d agent results (%v), want none", len(agents), err)
			}
			if err := s.FinishRun(t.Context(), queued.ID, "w-"+tt.name, store.Result{Status: store.StatusFailed, Error: "bad result"}); err != nil {
				t.Errorf("finishing after a rejected finish: %v", err)
			}
		})
	}
}

func TestPostingOnce(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	queued := enqueue(t, s, prRun("o/r", 1, "a"))
	claim(t, s, "w1")

	started, err := s.ClaimPost(t.Context(), queued.ID, "w1")
	if err != nil || started {
		t.Fatalf("first ClaimPost = %t, %v; want false, nil", started, err)
	}
	started, err = s.ClaimPost(t.Context(), queued.ID, "w1")
	if err != nil || !started {
		t.Fatalf("second ClaimPost = %t, %v; want true, nil", started, err)
	}
	// Once posting started, a newer head does not stop the post.
	enqueue(t, s, prRun("o/r", 1, "b"))
	if started, err := s.ClaimPost(t.Context(), queued.ID, "w1"); err != nil || !started {
		t.Fatalf("ClaimPost after a cancel = %t, %v; want true, nil", started, err)
	}

	v := testVerdict()
	posting := &store.Posting{ReviewID: 555, Placements: map[string]review.Placement{
		"fp-a10": {Where: review.PlacedInline, CommentID: 9001},
		"fp-a20": {Where: review.PlacedBody},
		"fp-c1":  {Where: review.PlacedDuplicate},
	}}
	if err := s.FinishRun(t.Context(), queued.ID, "w1", store.Result{Status: store.StatusSucceeded, Verdict: v, Posted: posting}); err != nil {
		t.Fatal(err)
	}
	got := getRun(t, s, queued.ID)
	if got.PostedReviewID != 555 || got.PostStartedAt == nil || got.PostedAt == nil {
		t.Errorf("posted review %d, post started %v, posted %v", got.PostedReviewID, got.PostStartedAt, got.PostedAt)
	}
	findings, err := s.Findings(t.Context(), queued.ID)
	if err != nil {
		t.Fatal(err)
	}
	placed := map[string]review.Placement{}
	for _, f := range findings {
		placed[f.Fingerprint] = review.Placement{Where: f.Posted, CommentID: f.CommentID}
	}
	want := map[string]review.Placement{
		"fp-a10": {Where: "inline", CommentID: 9001}, "fp-a20": {Where: "body"},
		"fp-c1": {Where: "duplicate"}, "fp-false": {Where: "no"},
	}
	if diff := cmp.Diff(want, placed); diff != "" {
		t.Errorf("placements (-want +got):\n%s", diff)
	}

}

func TestClaimPostOfCancelledRun(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	old := enqueue(t, s, prRun("o/r", 1, "a"))
	claim(t, s, "w")
	enqueue(t, s, prRun("o/r", 1, "b"))
	if _, err := s.ClaimPost(t.Context(), old.ID, "w"); !errors.Is(err, store.ErrCancelled) {
		t.Errorf("ClaimPost of a cancelled run = %v, want ErrCancelled", err)
	}
	if got := getRun(t, s, old.ID); got.PostStartedAt != nil {
		t.Errorf("cancelled run has post_started_at %v", got.PostStartedAt)
	}
}

func TestQueueStats(t *testing.T) {
	t.Parallel()
	s, raw := newStore(t)
	check := func(wantQueued, wantRunning int, minAge, maxAge time.Duration) {
		t.Helper()
		queued, running, age, err := s.QueueStats(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if queued != wantQueued || running != wantRunning || age < minAge || age > maxAge {
			t.Errorf("QueueStats = %d queued, %d running, oldest %v; want %d, %d, %v..%v",
				queued, running, age, wantQueued, wantRunning, minAge, maxAge)
		}
	}
	check(0, 0, 0, 0)
	a := enqueue(t, s, diffRun())
	enqueue(t, s, diffRun())
	later := enqueue(t, s, diffRun())
	if _, err := raw.Exec(t.Context(), `UPDATE review_runs SET run_after = now() - interval '10 minutes' WHERE id = $1`, a.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(t.Context(), `UPDATE review_runs SET run_after = now() + interval '1 hour' WHERE id = $1`, later.ID); err != nil {
		t.Fatal(err)
	}
	check(3, 0, 10*time.Minute, 11*time.Minute)
	claim(t, s, "w") // takes a, the longest due
	check(2, 1, 0, time.Minute)
}
