package worker_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mergeguard/mergeguard/github/githubtest"
	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/llm/llmtest"
	"github.com/mergeguard/mergeguard/review/task"
	"github.com/mergeguard/mergeguard/server/store"
	"github.com/mergeguard/mergeguard/server/worker"
)

const (
	headA = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	headB = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
)

// posted is what a test checks of a posted review.
type posted struct {
	CommitID string
	State    string
	Inline   []string // path:line of each inline comment
}

func postedReviews(rs []githubtest.Review) []posted {
	var out []posted
	for _, r := range rs {
		p := posted{CommitID: r.CommitID, State: r.State}
		for _, c := range r.Comments {
			p.Inline = append(p.Inline, c.Path+":"+strconv.Itoa(c.Line))
		}
		slices.Sort(p.Inline)
		out = append(out, p)
	}
	return out
}

// gate holds the fake LLM's first request until released.
type gate struct {
	calls   atomic.Int64
	entered chan struct{}
	release chan struct{}
	once    sync.Once
}

func newGate() *gate {
	return &gate{entered: make(chan struct{}), release: make(chan struct{})}
}

// answer wraps an answer function: the first request waits for Open.
func (g *gate) answer(next func(llmtest.Request) llmtest.Response) func(llmtest.Request) llmtest.Response {
	return func(req llmtest.Request) llmtest.Response {
		if g.calls.Add(1) == 1 {
			close(g.entered)
			<-g.release
		}
		return next(req)
	}
}

// Open lets the held request (and every later one) through.
func (g *gate) Open() { g.once.Do(func() { close(g.release) }) }

// waitEntered waits until the first LLM request is held.
func (g *gate) waitEntered(t *testing.T) {
	t.Helper()
	select {
	case <-g.entered:
	case <-time.After(30 * time.Second):
		t.Fatal("timed out waiting for the LLM request")
	}
}

// newGatedEnv is an env whose fake LLM holds the first request; the gate
// opens when the test ends (before the fake closes).
func newGatedEnv(t *testing.T) (*env, *gate) {
	g := newGate()
	e := newEnv(t, g.answer(reviewer))
	t.Cleanup(g.Open)
	return e, g
}

func TestReviewsAnOpenedPullRequest(t *testing.T) {
	t.Parallel() // each test has its own database and fakes
	e := newEnv(t, reviewer)
	e.gh.AddPR(standardPR(fixtureSHA))
	e.opened("d-1", fixtureSHA)
	e.start(e.store, e.options(), nil)

	run := e.waitDone(1)[0]
	if run.Status != store.StatusSucceeded || run.Verdict != review.DecisionRequestChanges || run.PostedReviewID == 0 {
		t.Fatalf("run: status %s verdict %q review %d (%s), want succeeded, request_changes, posted", run.Status, run.Verdict, run.PostedReviewID, run.Error)
	}
	want := []posted{{CommitID: fixtureSHA, State: "CHANGES_REQUESTED", Inline: []string{"mathx/div.go:4", "store/users.go:10"}}}
	if diff := cmp.Diff(want, postedReviews(e.reviews())); diff != "" {
		t.Errorf("reviews (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"SQL injection": "inline", "Division by zero": "inline"}, e.findings(run.ID)); diff != "" {
		t.Errorf("stored findings (-want +got):\n%s", diff)
	}
	if run.InputTokens == 0 {
		t.Error("run recorded no token usage")
	}
	agents, err := e.store.AgentResults(t.Context(), run.ID)
	if err != nil || len(agents) == 0 {
		t.Errorf("agent results: %v, %v; want some", agents, err)
	}
	events, err := e.store.Events(t.Context(), run.ID, 0, 1000)
	if err != nil || len(events) == 0 || events[len(events)-1].Type != review.EventPipelineCompleted {
		t.Errorf("events: %d (%v), want a log ending in pipeline.completed", len(events), err)
	}
}

func TestRedeliveredWebhookReviewsOnce(t *testing.T) {
	t.Parallel() // each test has its own database and fakes
	e := newEnv(t, reviewer)
	e.gh.AddPR(standardPR(fixtureSHA))
	for range 5 {
		e.opened("same-delivery", fixtureSHA)
	}
	e.start(e.store, e.options(), nil)
	e.waitDone(1)
	for range 5 { // and while the review is done
		e.opened("same-delivery", fixtureSHA)
	}
	if n := len(e.runs()); n != 1 {
		t.Errorf("%d runs, want 1", n)
	}
	if n := len(e.reviews()); n != 1 {
		t.Errorf("%d reviews posted, want 1", n)
	}
}

func TestSynchronizeSupersedesTheRunningReview(t *testing.T) {
	t.Parallel() // each test has its own database and fakes
	e, g := newGatedEnv(t)
	e.gh.AddPR(standardPR(headA))
	e.opened("d-open", headA)
	e.start(e.store, e.options(), nil)
	g.waitEntered(t) // the review of head A is with the model

	e.gh.SetHeadSHA(owner, repoName, prNumber, headB)
	e.deliver("pull_request", "d-sync", githubtest.SetFields(t, githubtest.Payload(t, "pull_request/synchronize.payload.json"),
		map[string]any{"pull_request.head.sha": headB, "after": headB}))

	runs := e.waitDone(2)
	if runs[0].HeadSHA != headA || runs[0].Status != store.StatusSuperseded || runs[0].PostStartedAt != nil {
		t.Errorf("run of head A: %s, post started %v; want superseded, never posting", runs[0].Status, runs[0].PostStartedAt)
	}
	if runs[1].HeadSHA != headB || runs[1].Status != store.StatusSucceeded {
		t.Errorf("run of head B: %s (%s), want succeeded", runs[1].Status, runs[1].Error)
	}
	rs := postedReviews(e.reviews())
	if len(rs) != 1 || rs[0].CommitID != headB {
		t.Errorf("reviews %+v, want one review of head B", rs)
	}
	conclusions := map[string]string{}
	for _, c := range e.checks() {
		conclusions[c.HeadSHA] = c.Conclusion
	}
	if diff := cmp.Diff(map[string]string{headA: "cancelled", headB: "failure"}, conclusions); diff != "" {
		t.Errorf("check conclusions by head (-want +got; the superseded head's check is cancelled):\n%s", diff)
	}
}

// severable is a worker's connection to the database that the test can
// cut, as when the worker's machine dies: every call fails from then on.
// Setting cutAt cuts it at the first call of that method.
type severable struct {
	worker.Store
	cutAt string
	cut   atomic.Bool
}

var errCut = errors.New("connection to the database lost")

func (s *severable) check(method string) error {
	if method == s.cutAt {
		s.cut.Store(true)
	}
	if s.cut.Load() {
		return errCut
	}
	return nil
}

func (s *severable) ReapRuns(ctx context.Context) ([]store.Run, error) {
	if err := s.check("ReapRuns"); err != nil {
		return nil, err
	}
	return s.Store.ReapRuns(ctx)
}

func (s *severable) ClaimRun(ctx context.Context, workerID string, lease time.Duration) (*store.Run, error) {
	if err := s.check("ClaimRun"); err != nil {
		return nil, err
	}
	return s.Store.ClaimRun(ctx, workerID, lease)
}

func (s *severable) RenewLease(ctx context.Context, runID, workerID string, lease time.Duration) (bool, error) {
	if err := s.check("RenewLease"); err != nil {
		return false, err
	}
	return s.Store.RenewLease(ctx, runID, workerID, lease)
}

func (s *severable) RetryRun(ctx context.Context, runID, workerID string, after time.Duration, msg string) error {
	if err := s.check("RetryRun"); err != nil {
		return err
	}
	return s.Store.RetryRun(ctx, runID, workerID, after, msg)
}

func (s *severable) SetRunHead(ctx context.Context, runID, workerID string, head review.PullHead) error {
	if err := s.check("SetRunHead"); err != nil {
		return err
	}
	return s.Store.SetRunHead(ctx, runID, workerID, head)
}

func (s *severable) FinishRun(ctx context.Context, runID, workerID string, res store.Result) error {
	if err := s.check("FinishRun"); err != nil {
		return err
	}
	return s.Store.FinishRun(ctx, runID, workerID, res)
}

func (s *severable) ClaimPost(ctx context.Context, runID, workerID string) (bool, error) {
	if err := s.check("ClaimPost"); err != nil {
		return false, err
	}
	return s.Store.ClaimPost(ctx, runID, workerID)
}

func (s *severable) AppendEvent(ctx context.Context, runID string, ev review.Event) (int, error) {
	if err := s.check("AppendEvent"); err != nil {
		return 0, err
	}
	return s.Store.AppendEvent(ctx, runID, ev)
}

// TestKilledWorkersRunIsTakenOver kills a worker mid-run (it loses the
// database, then its pool stops without a grace period): once the lease
// expires another worker takes the run over, and one review is posted.
func TestKilledWorkersRunIsTakenOver(t *testing.T) {
	t.Parallel() // each test has its own database and fakes
	tests := []struct {
		name   string
		cutAt  string // the dying worker's call that finds the database gone; "" cuts while the model thinks
		last   bool   // the run is on its last attempt
		want   ending
		posted int // create-review calls
	}{
		{name: "while the model thinks", want: reviewedOnRetry, posted: 1},
		{name: "after posting, before recording the run", cutAt: "FinishRun", want: reviewedOnRetry, posted: 1},
		{name: "on its last attempt: given up, and the pull request told", last: true,
			want: ending{Status: store.StatusFailed, Attempts: 1, Told: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e, g := newGatedEnv(t)
			e.gh.AddPR(standardPR(fixtureSHA))
			e.opened("d-1", fixtureSHA)
			if tt.last {
				if _, err := e.raw.Exec(t.Context(), `UPDATE review_runs SET max_attempts = 1`); err != nil {
					t.Fatal(err)
				}
			}

			dying := &severable{Store: e.store, cutAt: tt.cutAt}
			cfg := e.options()
			cfg.ID, cfg.Workers, cfg.ShutdownGrace = "dying", 1, 0
			kill := e.start(dying, cfg, nil)
			if tt.cutAt == "" {
				g.waitEntered(t)
				dying.cut.Store(true) // the worker loses the database mid-review...
			} else {
				g.Open()
				e.waitFor("the dying worker's cut", dying.cut.Load)
			}
			kill() // ...and stops without recording anything
			g.Open()
			if got := e.runs()[0]; got.Status != store.StatusRunning || got.LockedBy != "dying/0" {
				t.Fatalf("after the kill the run is %s held by %q, want still running under the dead worker's lease", got.Status, got.LockedBy)
			}

			cfg = e.options()
			cfg.ID = "survivor"
			e.start(e.store, cfg, nil)
			run := e.checkEnding(tt.want)
			if run.Status == store.StatusSucceeded && !strings.HasPrefix(run.LockedBy, "survivor/") {
				t.Errorf("run finished by %q, want the survivor", run.LockedBy)
			}
			if n := e.gh.CallCount(githubtest.RouteCreateReview); n != tt.posted {
				t.Errorf("%d create-review calls, want %d", n, tt.posted)
			}
		})
	}
}

func TestRerunCommand(t *testing.T) {
	t.Parallel() // each test has its own database and fakes
	e := newEnv(t, reviewer)
	pr := e.gh.AddPR(standardPR(fixtureSHA))
	e.gh.SetPermission(owner, repoName, "alice", "write")
	e.gh.SetPermission(owner, repoName, "bob", "read")
	e.opened("d-1", fixtureSHA)
	e.start(e.store, e.options(), nil)
	first := e.waitDone(1)[0]

	e.comment("c-reader", "bob", "/mergeguard rerun")
	if n := len(e.runs()); n != 1 {
		t.Fatalf("a reader's rerun queued a run (%d runs)", n)
	}
	e.comment("c-writer", "alice", "/mergeguard rerun")
	runs := e.waitDone(2)
	second := runs[1]
	if second.Trigger != store.TriggerCommand || second.RequestedBy != "alice" || second.Status != store.StatusSucceeded {
		t.Fatalf("rerun: %s by %q %s (%s), want a succeeded command run by alice", second.Trigger, second.RequestedBy, second.Status, second.Error)
	}
	for _, r := range runs {
		if got := (review.PullHead{SHA: r.HeadSHA, BaseSHA: r.BaseSHA, Branch: r.Branch}); got != reviewedHead(pr) {
			t.Errorf("%s run recorded %+v, want the reviewed %+v", r.Trigger, got, reviewedHead(pr))
		}
	}
	rs := postedReviews(e.reviews())
	if len(rs) != 2 {
		t.Fatalf("%d reviews, want 2", len(rs))
	}
	if len(rs[1].Inline) != 0 {
		t.Errorf("the rerun repeated inline comments %v", rs[1].Inline)
	}
	if diff := cmp.Diff(map[string]string{"SQL injection": "inline", "Division by zero": "inline"}, e.findings(first.ID)); diff != "" {
		t.Errorf("first run's findings (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"SQL injection": "duplicate", "Division by zero": "duplicate"}, e.findings(second.ID)); diff != "" {
		t.Errorf("rerun's findings (-want +got):\n%s", diff)
	}
	var reactions []string
	for _, r := range e.gh.Reactions(owner, repoName) {
		reactions = append(reactions, r.Content)
	}
	if diff := cmp.Diff([]string{"eyes"}, reactions); diff != "" {
		t.Errorf("reactions (-want +got):\n%s", diff)
	}
}

// reviewedHead is the revision of pr a review reads.
func reviewedHead(pr githubtest.PR) review.PullHead {
	return review.PullHead{SHA: pr.HeadSHA, BaseSHA: pr.BaseSHA, Branch: pr.HeadRef}
}

// TestRerunWaitsForTheRunningReviewOfItsHead: a rerun asked while the
// review of the same head runs does not cancel it; it runs next, on that
// head.
func TestRerunWaitsForTheRunningReviewOfItsHead(t *testing.T) {
	t.Parallel() // each test has its own database and fakes
	e, g := newGatedEnv(t)
	pr := e.gh.AddPR(standardPR(fixtureSHA))
	e.gh.SetPermission(owner, repoName, "alice", "write")
	e.opened("d-1", fixtureSHA)
	e.start(e.store, e.options(), nil)
	g.waitEntered(t) // the review of the head is with the model

	e.comment("c-rerun", "alice", "/mergeguard rerun")
	if runs := e.runs(); len(runs) != 2 || runs[1].Status != store.StatusQueued {
		t.Fatalf("after the rerun: %s; want the rerun queued", e.describeRuns())
	}
	g.Open()
	runs := e.waitDone(2)
	for _, r := range runs {
		if r.Status != store.StatusSucceeded {
			t.Errorf("%s run: %s (%s %s), want succeeded", r.Trigger, r.Status, r.StatusReason, r.Error)
		}
		if got := (review.PullHead{SHA: r.HeadSHA, BaseSHA: r.BaseSHA, Branch: r.Branch}); got != reviewedHead(pr) {
			t.Errorf("%s run recorded %+v, want the reviewed %+v", r.Trigger, got, reviewedHead(pr))
		}
	}
	if rs := postedReviews(e.reviews()); len(rs) != 2 || rs[0].CommitID != fixtureSHA || rs[1].CommitID != fixtureSHA {
		t.Errorf("reviews %+v, want two reviews of head %s", rs, short(fixtureSHA))
	}
}

func short(sha string) string { return sha[:7] }

func TestBrokenRepoConfigFailsTheRun(t *testing.T) {
	t.Parallel() // each test has its own database and fakes
	e := newEnv(t, reviewer)
	e.gh.AddPR(pr(fixtureSHA,
		map[string]string{"README.md": "Hello\n", ".mergeguard.yml": "enabled: true\nauto_review:\n  drafts: false\n  draftz: true\n"},
		map[string]string{"store/users.go": usersGo}))
	e.opened("d-1", fixtureSHA)
	e.start(e.store, e.options(), nil)
	run := e.waitDone(1)[0]
	if run.Status != store.StatusFailed || !strings.Contains(run.Error, ".mergeguard.yml:4") {
		t.Errorf("run: %s (%q), want failed naming .mergeguard.yml:4", run.Status, run.Error)
	}
	comments := e.botComments(1)
	if len(comments) != 1 || !strings.Contains(comments[0].Body, ".mergeguard.yml:4") || !strings.Contains(comments[0].Body, "draftz") {
		t.Errorf("comments %+v, want one naming the line and the key", comments)
	}
	if n := e.llm.Calls(); n != 0 {
		t.Errorf("%d LLM calls, want 0", n)
	}
	if c := e.checks(); len(c) != 1 || c[0].Conclusion != "failure" || c[0].Requests != 2 || !strings.Contains(c[0].Summary, ".mergeguard.yml:4") {
		t.Errorf("check runs %+v, want one created in progress and completed as failure, naming the reason", c)
	}
}

func TestSkippedRuns(t *testing.T) {
	t.Parallel() // each test has its own database and fakes
	tests := []struct {
		name   string
		setup  func(e *env, p *githubtest.PR)
		reason string
		// before says the skip is decided before any GitHub call.
		before bool
	}{
		{"bot author", func(_ *env, p *githubtest.PR) {
			p.User = githubtest.User{Login: "dependabot[bot]", ID: 49699333, Type: "Bot"}
		}, "opened by bot", false},
		{"draft", func(_ *env, p *githubtest.PR) { p.Draft = true }, "draft pull request", false},
		{"paused", func(e *env, _ *githubtest.PR) {
			if err := e.store.SetPaused(e.t.Context(), repoFull, prNumber, true, "alice"); err != nil {
				e.t.Fatal(err)
			}
		}, "paused", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, reviewer)
			p := standardPR(fixtureSHA)
			tt.setup(e, &p)
			e.gh.AddPR(p)
			e.opened("d-1", fixtureSHA)
			e.start(e.store, e.options(), nil)
			run := e.waitDone(1)[0]
			if run.Status != store.StatusSkipped || !strings.Contains(run.StatusReason, tt.reason) {
				t.Errorf("run: %s (%q), want skipped for %q", run.Status, run.StatusReason, tt.reason)
			}
			if n := len(e.reviews()); n != 0 {
				t.Errorf("%d reviews posted, want 0", n)
			}
			if n := e.llm.Calls(); n != 0 {
				t.Errorf("%d LLM calls, want 0", n)
			}
			checks := e.checks() // the check completes after the run is recorded
			if len(checks) != 1 || checks[0].Conclusion != "neutral" || !strings.Contains(checks[0].Summary, tt.reason) {
				t.Errorf("check runs %+v, want one neutral naming %q", checks, tt.reason)
			}
			if n, by := apiCalls(e.gh); tt.before && (n != 1 || by[githubtest.RouteCreateCheck] != 1) {
				t.Errorf("%d GitHub API calls, want the completed check only: %v", n, by)
			}
		})
	}
}

func TestBudgets(t *testing.T) {
	t.Parallel() // each test has its own database and fakes
	t.Run("installation's daily budget used up", func(t *testing.T) {
		e := newEnv(t, reviewer)
		e.gh.AddPR(standardPR(fixtureSHA))
		_, err := e.raw.Exec(t.Context(), `INSERT INTO review_runs (mode, trigger, status, installation_id, repository, pr_number,
			input_tokens, output_tokens, finished_at) VALUES ('pr', 'webhook', 'succeeded', 1, 'o/r', 9, 900, 200, now())`)
		if err != nil {
			t.Fatal(err)
		}
		e.opened("d-1", fixtureSHA)
		cfg := e.options()
		cfg.Budgets.InstallationDailyMaxTokens = 1000
		e.start(e.store, cfg, nil)
		run := e.waitDone(2)[1]
		if run.Status != store.StatusSkipped || !strings.Contains(run.StatusReason, "daily budget of 1000 tokens") {
			t.Errorf("run: %s (%q), want skipped for the daily budget", run.Status, run.StatusReason)
		}
		comments := e.botComments(1)
		if len(comments) != 1 || !strings.Contains(comments[0].Body, "daily budget") {
			t.Errorf("comments %+v, want one about the budget", comments)
		}
		if n := e.llm.Calls(); n != 0 {
			t.Errorf("%d LLM calls, want 0", n)
		}
		_, by := apiCalls(e.gh)
		if diff := cmp.Diff(map[string]int{githubtest.RouteCreateIssueComment: 1, githubtest.RouteCreateCheck: 1}, by); diff != "" {
			t.Errorf("GitHub API calls: the skip notice and the neutral check only (-want +got):\n%s", diff)
		}
	})
	t.Run("review's token budget used up", func(t *testing.T) {
		e := newEnv(t, reviewer)
		e.gh.AddPR(standardPR(fixtureSHA))
		e.opened("d-1", fixtureSHA)
		cfg := e.options()
		cfg.Budgets.ReviewMaxTokens = 10
		e.start(e.store, cfg, nil)
		run := e.waitDone(1)[0]
		if run.Status != store.StatusSkipped || !strings.Contains(run.StatusReason, "per-review budget of 10 tokens") {
			t.Errorf("run: %s (%q), want skipped for the review budget", run.Status, run.StatusReason)
		}
		if n := len(e.reviews()); n != 0 {
			t.Errorf("%d reviews posted, want 0", n)
		}
		comments := e.botComments(1)
		if len(comments) != 1 || !strings.Contains(comments[0].Body, "per-review budget") {
			t.Errorf("comments %+v, want one about the budget", comments)
		}
	})
}

// panicking is a reviewer with a bug.
type panicking struct{}

func (panicking) Run(context.Context, task.Request) (*task.Result, error) {
	panic("index out of range")
}

func TestPanicIsRecordedAsFailure(t *testing.T) {
	t.Parallel() // each test has its own database and fakes
	e := newEnv(t, reviewer)
	e.gh.AddPR(standardPR(fixtureSHA))
	e.opened("d-1", fixtureSHA)
	e.start(e.store, e.options(), panicking{})
	run := e.waitDone(1)[0]
	if run.Status != store.StatusFailed || !strings.Contains(run.Error, "panic: index out of range") || run.Attempts != 1 {
		t.Errorf("run: %s after %d attempts (%q), want failed at once with the panic", run.Status, run.Attempts, run.Error)
	}
	if n := len(e.botComments(1)); n != 1 {
		t.Errorf("%d comments, want 1 saying the review could not be completed", n)
	}
}

// TestRunTimeout: a review that outlasts workers.run_timeout (a model that
// never answers, a poison input) is stopped, recorded failed with the reason
// and not retried, and the pull request is told.
func TestRunTimeout(t *testing.T) {
	t.Parallel() // each test has its own database and fakes
	e, _ := newGatedEnv(t)
	e.gh.AddPR(standardPR(fixtureSHA))
	e.opened("d-1", fixtureSHA)
	cfg := e.options()
	// The model never answers. Wherever the deadline falls (in the
	// analyzers on a loaded machine, in a GitHub call, or on the model) the
	// run ends the same: the deadline is the cause, whatever error it made.
	cfg.RunTimeout = 1500 * time.Millisecond
	cfg.Lease = 20 * time.Second // no takeover (a second attempt) on a loaded machine
	e.start(e.store, cfg, nil)
	run := e.waitDone(1)[0]
	if run.Status != store.StatusFailed || !strings.Contains(run.Error, "took longer than the run timeout") || run.Attempts != 1 {
		t.Errorf("run: %s after %d attempts (%q), want failed at once for the run timeout", run.Status, run.Attempts, run.Error)
	}
	comments := e.botComments(1)
	if len(comments) != 1 || !strings.Contains(comments[0].Body, "took longer than the time a review may take") {
		t.Errorf("comments %+v, want one saying the review took too long", comments)
	}
	if n := len(e.reviews()); n != 0 {
		t.Errorf("%d reviews posted, want none", n)
	}
}

func TestShutdown(t *testing.T) {
	t.Parallel() // each test has its own database and fakes
	t.Run("running review finishes within the grace period", func(t *testing.T) {
		e, g := newGatedEnv(t)
		e.gh.AddPR(standardPR(fixtureSHA))
		e.opened("d-1", fixtureSHA)
		stop := e.start(e.store, e.options(), nil)
		g.waitEntered(t)
		time.AfterFunc(200*time.Millisecond, g.Open)
		stop()
		if run := e.runs()[0]; run.Status != store.StatusSucceeded {
			t.Errorf("run: %s (%s), want succeeded before the pool stopped", run.Status, run.Error)
		}
	})
	t.Run("running review past the grace period is queued again, its attempt spent", func(t *testing.T) {
		e, g := newGatedEnv(t)
		e.gh.AddPR(standardPR(fixtureSHA))
		e.opened("d-1", fixtureSHA)
		cfg := e.options()
		cfg.ShutdownGrace = 100 * time.Millisecond
		stop := e.start(e.store, cfg, nil)
		g.waitEntered(t)
		stop()
		// A run that does not stop within the grace period spends its
		// attempt: a poison input that pins a worker ends failed after
		// max_attempts instead of coming back after every restart.
		if run := e.runs()[0]; run.Status != store.StatusQueued || run.LockedBy != "" || run.Attempts != 1 {
			t.Fatalf("run after shutdown: %s held by %q after %d attempts, want queued again after 1 attempt", run.Status, run.LockedBy, run.Attempts)
		}
		g.Open()
		e.start(e.store, e.options(), nil)
		if run := e.waitDone(1)[0]; run.Status != store.StatusSucceeded || len(e.reviews()) != 1 {
			t.Errorf("run: %s with %d reviews, want succeeded with one review", run.Status, len(e.reviews()))
		}
	})
}

// twentyFiles is a pull request adding 20 files, one with the SQL
// injection, to a base holding README.md and base.
func twentyFiles(base map[string]string) githubtest.PR {
	added := map[string]string{"store/users.go": usersGo}
	for i := range 19 {
		added[fmt.Sprintf("pkg/f%02d.go", i)] = fmt.Sprintf("package pkg\n\n// F%02d returns %d.\nfunc F%02d() int { return %d }\n", i, i, i, i)
	}
	files := map[string]string{"README.md": "Hello\n"}
	maps.Copy(files, base)
	return pr(fixtureSHA, files, added)
}

// apiCalls counts the GitHub API calls of the fake's log by route, without
// installation tokens.
func apiCalls(gh *githubtest.Server) (int, map[string]int) {
	by := map[string]int{}
	n := 0
	for _, c := range gh.Calls() {
		if c.Route == githubtest.RouteAccessToken {
			continue
		}
		by[c.Route]++
		n++
	}
	return n, by
}

// TestAPICallsPerReview counts the GitHub API calls of the first review of
// a 20-file pull request, from the webhook to the posted review: 13 (the
// pull request, its diff, the base tree for .mergeguard.yml and
// conventions, the head re-read before posting, Publish's reviews,
// comments, create and created comments, the check run created and
// completed, and for the code-aware context the head tree and the head
// archive: its tarball call and the codeload download, which then answer
// every head read, the model's tools included), plus one per convention
// file the base holds (its blob).
func TestAPICallsPerReview(t *testing.T) {
	t.Parallel() // each test has its own database and fakes
	tests := []struct {
		name  string
		base  map[string]string // files of the base besides README.md
		reads []string          // files the model reads with read_file_part
	}{
		{name: "no tool calls"},
		{name: "model reads two files", reads: []string{"pkg/f01.go", "pkg/f02.go"}},
		{name: "repository with conventions", base: map[string]string{
			".mergeguard.yml": "instructions: Prefer small functions.\n",
			"AGENTS.md":       "Wrap errors with %w.\n",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var asked atomic.Bool
			e := newEnv(t, func(req llmtest.Request) llmtest.Response {
				if len(tt.reads) > 0 && len(req.ToolResults()) == 0 && asked.CompareAndSwap(false, true) {
					var calls []llmtest.ToolCall
					for i, p := range tt.reads {
						calls = append(calls, llmtest.Call(fmt.Sprintf("call_%d", i), "read_file_part", map[string]string{"file_path": p}))
					}
					return llmtest.ToolCalls(calls...)
				}
				return reviewer(req)
			})
			e.gh.AddPR(twentyFiles(tt.base))
			e.opened("d-1", fixtureSHA)
			e.start(e.store, e.options(), nil)
			if run := e.waitDone(1)[0]; run.Status != store.StatusSucceeded {
				t.Fatalf("run %s (%s), want succeeded", run.Status, run.Error)
			}
			n, by := apiCalls(e.gh)
			t.Logf("%d API calls: %v", n, by)
			if limit := 13 + len(tt.base); n > limit {
				t.Errorf("%d API calls, want at most %d: %v", n, limit, by)
			}
		})
	}
}

func TestReviewsADiffRun(t *testing.T) {
	t.Parallel() // each test has its own database and fakes
	e := newEnv(t, reviewer)
	diffText := githubtest.AddedFileDiff("mathx/div.go", divGo) + githubtest.AddedFileDiff("store/users.go", usersGo)
	queued, err := e.store.EnqueueRun(t.Context(), store.NewRun{
		Mode: store.ModeDiff, Trigger: store.TriggerAPI, DiffText: &diffText,
		Options: []byte(`{"severity_threshold": "CRITICAL", "focus_areas": ["Security"]}`),
	})
	if err != nil {
		t.Fatal(err)
	}
	e.start(e.store, e.options(), nil)
	run := e.waitDone(1)[0]
	if run.ID != queued.ID || run.Status != store.StatusSucceeded || run.Verdict != review.DecisionRequestChanges {
		t.Fatalf("run: %s verdict %q (%s), want succeeded with request_changes", run.Status, run.Verdict, run.Error)
	}
	reported := map[string]string{}
	for _, f := range run.Result.Findings() {
		reported[f.Title] = string(f.Severity)
	}
	if diff := cmp.Diff(map[string]string{"SQL injection": "critical"}, reported); diff != "" {
		t.Errorf("reported findings under the run's options (-want +got):\n%s", diff)
	}
	if n, _ := apiCalls(e.gh); n != 0 {
		t.Errorf("%d GitHub API calls for a diff run, want 0", n)
	}
}

// TestFileGitHubHidesAsBinaryIsReviewed: a pull request commits
// `*.py -diff`, so GitHub's diff shows its settings.py — an AWS key and
// os.system(input()) — as "Binary files … differ". The review reads the
// file back, the secret makes it request changes, and the finding is in the
// review body (GitHub has no diff lines to comment on), with no 422.
func TestFileGitHubHidesAsBinaryIsReviewed(t *testing.T) {
	t.Parallel() // each test has its own database and fakes
	e := newEnv(t, reviewer)
	settings := "import os\nAWS_KEY = \"AKIAZ7VRSQ5TJN2XMY4W\"\nos.system(input())\n"
	p := pr(fixtureSHA, map[string]string{"README.md": "Hello\n"}, map[string]string{".gitattributes": "*.py -diff\n"})
	p.Head["settings.py"] = settings
	p.Diff += "diff --git a/settings.py b/settings.py\nnew file mode 100644\nindex 0000000..1111111\nBinary files /dev/null and b/settings.py differ\n"
	e.gh.AddPR(p)
	e.opened("d-1", fixtureSHA)
	e.start(e.store, e.options(), nil)
	run := e.waitDone(1)[0]
	if run.Status != store.StatusSucceeded || run.Verdict != review.DecisionRequestChanges {
		t.Fatalf("run: %s, verdict %q (%s), want succeeded with request_changes", run.Status, run.Verdict, run.Error)
	}
	reviews := e.reviews()
	if len(reviews) != 1 || !strings.Contains(reviews[0].Body, "settings.py") || len(reviews[0].Comments) != 0 {
		t.Errorf("reviews %+v, want one naming settings.py in its body and no inline comment", postedReviews(reviews))
	}
	if n := len(e.gh.CallsTo(githubtest.RouteCreateReview)); n != 1 {
		t.Errorf("%d create-review calls, want 1 (nothing for GitHub to refuse)", n)
	}
}
