package webhook_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mergeguard/mergeguard/github/githubtest"
	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/server/store"
)

// threadFixture is pull request Codertocat/Hello-World#2 on the fake with
// one review thread started by author, and a finding open on the ledger
// posted as the thread's first comment.
type threadFixture struct {
	in       *intake
	threadID string
	// commentID is the thread's first comment; head the pull request's.
	commentID int64
	head      string
}

func newThreadFixture(t *testing.T, author githubtest.User) threadFixture {
	t.Helper()
	in := newIntake(t)
	pr := in.gh.AddPR(githubtest.PR{Owner: "Codertocat", Repo: "Hello-World", Number: 2,
		Base: map[string]string{"README.md": "Hello\n"}, Head: map[string]string{"README.md": "Hello World\n"}, Diff: smallDiff})
	in.gh.SetPermission("Codertocat", "Hello-World", "alice", "write")
	in.gh.SetPermission("Codertocat", "Hello-World", "bob", "read")
	in.gh.AddReview("Codertocat", "Hello-World", 2, githubtest.Review{User: author, State: "COMMENTED",
		Comments: []githubtest.ReviewComment{{Path: "README.md", Line: 1, Side: "RIGHT", Body: "A finding."}}})
	comments := in.gh.ReviewComments("Codertocat", "Hello-World", 2)
	if len(comments) != 1 {
		t.Fatalf("%d review comments, want 1", len(comments))
	}
	commentID := comments[0].ID
	threadID := in.gh.ThreadOf("Codertocat", "Hello-World", 2, commentID)

	// The finding, on the ledger by a finished review of the head.
	run, err := in.store.EnqueueRun(t.Context(), store.NewRun{Mode: store.ModePR, Trigger: store.TriggerWebhook, InstallationID: 1,
		Repository: "Codertocat/Hello-World", PRNumber: 2, HeadSHA: pr.HeadSHA, BaseSHA: pr.BaseSHA, Branch: pr.HeadRef})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := in.store.ClaimRun(t.Context(), "w", time.Minute); err != nil {
		t.Fatal(err)
	}
	e := review.LedgerEntry{Finding: review.Finding{FilePath: "README.md", LineStart: 1, LineEnd: 1, Side: review.SideRight,
		Severity: review.SeverityCritical, Category: review.CategoryBug, Title: "A finding", VerificationStatus: review.Verified,
		Confidence: 0.9, CodeSnippet: "Hello World", Fingerprint: "fp-1"},
		State: review.FindingOpen, FirstSeenSHA: pr.HeadSHA, LastSeenSHA: pr.HeadSHA, CommentID: commentID, ThreadID: threadID}
	err = in.store.FinishRun(t.Context(), run.ID, "w", store.Result{Status: store.StatusSucceeded, Ledger: []review.LedgerEntry{e},
		Scope: review.Scope{Kind: review.ScopeFull, Reason: "first review"}})
	if err != nil {
		t.Fatal(err)
	}
	in.gh.ResetCalls()
	return threadFixture{in: in, threadID: threadID, commentID: commentID, head: pr.HeadSHA}
}

// event is the pull_request_review_thread delivery of the fixture's
// thread, action by sender.
func (f threadFixture) event(id, action string, sender githubtest.User) githubtest.Delivery {
	payload := f.in.gh.ThreadEvent("Codertocat", "Hello-World", 2, f.threadID, action, sender.Login, 1)
	payload = githubtest.SetFields(f.in.t, payload, map[string]any{"sender.type": sender.Type})
	return githubtest.Delivery{Event: "pull_request_review_thread", ID: id, Payload: payload}
}

// state is the fixture's finding on the ledger: its state and by whom.
func (f threadFixture) state() string {
	f.in.t.Helper()
	entries, err := f.in.store.Ledger(f.in.t.Context(), "Codertocat/Hello-World", 2)
	if err != nil {
		f.in.t.Fatal(err)
	}
	if len(entries) != 1 {
		f.in.t.Fatalf("%d ledger entries, want 1", len(entries))
	}
	return string(entries[0].State) + " " + entries[0].StateHow + " " + entries[0].StateBy
}

func TestReviewThreadResolved(t *testing.T) {
	t.Parallel() // each test has its own database and fakes
	bot := githubtest.User{Login: "mergeguard[bot]", ID: 9001, Type: "Bot"}
	writer := githubtest.User{Login: "alice", ID: 11, Type: "User"}
	author := githubtest.User{Login: "bob", ID: 12, Type: "User"} // the pull request's author, a reader
	otherBot := githubtest.User{Login: "dependabot[bot]", ID: 49699333, Type: "Bot"}
	type result struct {
		Outcome, Detail, Finding string
		PermissionChecks         int
	}
	tests := []struct {
		name           string
		thread, sender githubtest.User
		action         string
		want           result
	}{
		{"a writer resolves MergeGuard's thread", bot, writer, "resolved",
			result{"applied", "thread resolved: finding dismissed", "dismissed thread_resolved alice", 1}},
		{"the author without write access resolves it", bot, author, "resolved",
			result{"ignored", "bob has no write permission", "open  ", 1}},
		{"MergeGuard resolves its own thread", bot, bot, "resolved",
			result{"ignored", "resolved by MergeGuard itself", "open  ", 0}},
		{"another bot resolves it", bot, otherBot, "resolved",
			result{"ignored", "resolved by bot dependabot[bot]", "open  ", 0}},
		{"a writer resolves a person's thread", writer, writer, "resolved",
			result{"ignored", "not MergeGuard's thread", "open  ", 0}},
		{"a writer unresolves a thread never resolved", bot, writer, "unresolved",
			result{"ignored", "thread unresolved: no finding of it dismissed by resolving its thread", "open  ", 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newThreadFixture(t, tt.thread)
			d := f.event("t-1", tt.action, tt.sender)
			if got := f.in.send(d); got != http.StatusOK {
				t.Fatalf("status %d, want 200", got)
			}
			got := result{f.in.delivery("t-1").Outcome, f.in.detail("t-1"), f.state(), f.in.gh.CallCount(githubtest.RoutePermission)}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if n := len(f.in.runs()); n != 1 {
				t.Errorf("%d runs, want only the fixture's: a thread queues no review", n)
			}

			// A redelivery changes nothing and calls nothing.
			calls := len(f.in.gh.Calls())
			if got := f.in.send(d); got != http.StatusOK {
				t.Fatalf("redelivery: status %d, want 200", got)
			}
			if got := f.state(); got != tt.want.Finding {
				t.Errorf("after a redelivery the finding is %q, want %q", got, tt.want.Finding)
			}
			if n := len(f.in.gh.Calls()) - calls; n != 0 {
				t.Errorf("redelivery made %d GitHub calls, want 0", n)
			}
		})
	}
}

// TestReviewThreadUnresolved: a writer unresolving a thread reopens the
// finding its resolution dismissed; a redelivery of the resolution then
// does not dismiss it again.
func TestReviewThreadUnresolved(t *testing.T) {
	t.Parallel() // each test has its own database and fakes
	writer := githubtest.User{Login: "alice", ID: 11, Type: "User"}
	f := newThreadFixture(t, githubtest.User{Login: "mergeguard[bot]", ID: 9001, Type: "Bot"})
	resolved := f.event("t-1", "resolved", writer)
	steps := []struct {
		d                githubtest.Delivery
		outcome, finding string
	}{
		{resolved, "applied", "dismissed thread_resolved alice"},
		{f.event("t-2", "unresolved", writer), "applied", "open  alice"},
		{resolved, "applied", "open  alice"}, // a redelivery of t-1
	}
	for i, step := range steps {
		if got := f.in.send(step.d); got != http.StatusOK {
			t.Fatalf("step %d: status %d, want 200", i, got)
		}
		if got := f.in.delivery(step.d.ID).Outcome; got != step.outcome {
			t.Errorf("step %d: outcome %q, want %q", i, got, step.outcome)
		}
		if got := f.state(); got != step.finding {
			t.Errorf("step %d: finding %q, want %q", i, got, step.finding)
		}
	}
	if got := f.in.detail("t-2"); got != "thread unresolved: finding open again" {
		t.Errorf("detail of the unresolution %q", got)
	}
}

// TestReviewThreadRealPayload: GitHub's own example payload is a thread a
// person started, which MergeGuard leaves alone without asking GitHub.
func TestReviewThreadRealPayload(t *testing.T) {
	t.Parallel() // each test has its own database and fakes
	in := newIntake(t)
	for _, action := range []string{"resolved", "unresolved"} {
		payload := githubtest.Payload(t, "pull_request_review_thread/"+action+".payload.json")
		if got := in.send(githubtest.Delivery{Event: "pull_request_review_thread", ID: action, Payload: payload}); got != http.StatusOK {
			t.Fatalf("%s: status %d, want 200", action, got)
		}
		got := delivery{"pull_request_review_thread", action, "ignored"}
		if diff := cmp.Diff(got, in.delivery(action)); diff != "" {
			t.Errorf("%s: delivery (-want +got):\n%s", action, diff)
		}
		if got := in.detail(action); got != "not MergeGuard's thread" {
			t.Errorf("%s: detail %q", action, got)
		}
	}
	if n := len(in.gh.Calls()); n != 0 {
		t.Errorf("%d GitHub calls, want 0", n)
	}
}

// TestReviewThreadPermissionFailureIsRetriable: when GitHub cannot say
// whether the sender may write, nothing is recorded or changed and the
// delivery is answered 500; its redelivery applies it.
func TestReviewThreadPermissionFailureIsRetriable(t *testing.T) {
	t.Parallel() // each test has its own database and fakes
	f := newThreadFixture(t, githubtest.User{Login: "mergeguard[bot]", ID: 9001, Type: "Bot"})
	for range 2 { // the request and the client's one retry
		f.in.gh.Inject(githubtest.RoutePermission, githubtest.Failure{Status: http.StatusBadGateway})
	}
	d := f.event("t-1", "resolved", githubtest.User{Login: "alice", ID: 11, Type: "User"})
	if got := f.in.send(d); got != http.StatusInternalServerError {
		t.Fatalf("status %d, want 500", got)
	}
	if got := f.state(); got != "open  " {
		t.Errorf("finding %q after a failed permission check, want open", got)
	}
	if got := f.in.send(d); got != http.StatusOK {
		t.Fatalf("redelivery: status %d, want 200", got)
	}
	if got := f.state(); got != "dismissed thread_resolved alice" {
		t.Errorf("finding %q after the redelivery, want dismissed by alice", got)
	}
}
