package webhook_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mergeguard/mergeguard/github/githubtest"
	"github.com/mergeguard/mergeguard/github/hook"
	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/server/store"
)

const smallDiff = "diff --git a/README.md b/README.md\nindex 557db03..980a0d5 100644\n--- a/README.md\n+++ b/README.md\n@@ -1 +1 @@\n-Hello\n+Hello World\n"

// commentOn adds a comment by user to the fake's pull request
// Codertocat/Hello-World#2 and returns the issue_comment created delivery
// GitHub sends for it.
func (in *intake) commentOn(id string, user githubtest.User, body string) githubtest.Delivery {
	in.t.Helper()
	return in.commentOnPR(id, 2, user, body, nil)
}

// commentOnPR is commentOn for pull request number of
// Codertocat/Hello-World, with more payload fields replaced (set, may be
// nil), such as "issue.state".
func (in *intake) commentOnPR(id string, number int, user githubtest.User, body string, set map[string]any) githubtest.Delivery {
	in.t.Helper()
	commentID := in.gh.AddIssueComment("Codertocat", "Hello-World", number, githubtest.IssueComment{User: user, Body: body})
	fields := map[string]any{
		"comment.id":             commentID,
		"comment.body":           body,
		"comment.user.login":     user.Login,
		"comment.user.type":      user.Type,
		"installation.id":        1,
		"issue.number":           number,
		"repository.name":        "Hello-World",
		"repository.full_name":   "Codertocat/Hello-World",
		"repository.owner.login": "Codertocat",
	}
	for k, v := range set {
		fields[k] = v
	}
	payload := githubtest.SetFields(in.t, githubtest.Payload(in.t, "issue_comment/githubIssueCommentEvent.json"), fields)
	return githubtest.Delivery{Event: "issue_comment", ID: id, Payload: payload}
}

func TestCommentCommands(t *testing.T) {
	t.Parallel() // each test has its own database and fakes
	writer := githubtest.User{Login: "alice", ID: 11, Type: "User"}
	reader := githubtest.User{Login: "bob", ID: 12, Type: "User"}
	stranger := githubtest.User{Login: "eve", ID: 13, Type: "User"}
	bot := githubtest.User{Login: "mergeguard[bot]", ID: 9001, Type: "Bot"}
	otherBot := githubtest.User{Login: "dependabot[bot]", ID: 49699333, Type: "Bot"}

	type result struct {
		Outcome   string
		Runs      int
		Paused    bool
		Reactions []string
		Replies   []string
		// PermissionChecks counts the permission API calls.
		PermissionChecks int
		// HeadReads counts the pull request reads (a rerun names the head
		// it asks to review).
		HeadReads int
		// Full is set when the run queued is a forced full review.
		Full bool
		// Describe is set when the run queued writes the description.
		Describe bool
	}
	tests := []struct {
		name string
		user githubtest.User
		body string
		want result
	}{
		{"rerun by a writer", writer, "/mergeguard rerun", result{Outcome: "queued", Runs: 1, Reactions: []string{"eyes"}, PermissionChecks: 1, HeadReads: 1}},
		{"review by a writer", writer, "Looks odd.\n/mergeguard review\n", result{Outcome: "queued", Runs: 1, Reactions: []string{"eyes"}, PermissionChecks: 1, HeadReads: 1}},
		{"full-review by a writer", writer, "/mergeguard full-review", result{Outcome: "queued", Runs: 1, Reactions: []string{"eyes"}, PermissionChecks: 1, HeadReads: 1, Full: true}},
		{"rerun --full by a writer", writer, "/mergeguard rerun --full", result{Outcome: "queued", Runs: 1, Reactions: []string{"eyes"}, PermissionChecks: 1, HeadReads: 1, Full: true}},
		{"review --FULL by a writer", writer, "/mergeguard review --FULL", result{Outcome: "queued", Runs: 1, Reactions: []string{"eyes"}, PermissionChecks: 1, HeadReads: 1, Full: true}},
		{"describe by a writer", writer, "/mergeguard describe", result{Outcome: "queued", Runs: 1, Reactions: []string{"eyes"}, PermissionChecks: 1, HeadReads: 1, Describe: true}},
		{"describe by a reader", reader, "/mergeguard describe", result{Outcome: "ignored", PermissionChecks: 1}},
		{"describe by a stranger", stranger, "/mergeguard describe", result{Outcome: "ignored", PermissionChecks: 1}},
		{"full-review by a reader", reader, "/mergeguard full-review", result{Outcome: "ignored", PermissionChecks: 1}},
		{"rerun by a reader", reader, "/mergeguard rerun", result{Outcome: "ignored", PermissionChecks: 1}},
		{"rerun by a stranger", stranger, "/mergeguard rerun", result{Outcome: "ignored", PermissionChecks: 1}},
		{"pause by a writer", writer, "/mergeguard pause", result{Outcome: "applied", Paused: true, Reactions: []string{"+1"}, PermissionChecks: 1,
			Replies: []string{"Automatic reviews of this pull request are paused; `/mergeguard resume` restarts them, `/mergeguard rerun` still reviews on request."}}},
		{"resume by a writer", writer, "/mergeguard resume", result{Outcome: "applied", Reactions: []string{"+1"}, PermissionChecks: 1,
			Replies: []string{"Automatic reviews of this pull request are resumed."}}},
		{"help", writer, "/mergeguard help", result{Outcome: "replied", Reactions: []string{"+1"}, Replies: []string{hook.HelpText}, PermissionChecks: 1}},
		{"unknown command", writer, "/mergeguard frobnicate", result{Outcome: "replied", Reactions: []string{"+1"}, Replies: []string{hook.HelpText}, PermissionChecks: 1}},
		{"not a command", writer, "LGTM", result{Outcome: "ignored"}},
		{"quoted command", writer, "> /mergeguard rerun\nno thanks", result{Outcome: "ignored"}},
		{"our own comment", bot, "/mergeguard rerun", result{Outcome: "ignored"}},
		{"another bot", otherBot, "/mergeguard rerun", result{Outcome: "ignored"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			in := newIntake(t)
			pr := in.gh.AddPR(githubtest.PR{Owner: "Codertocat", Repo: "Hello-World", Number: 2,
				Base: map[string]string{"README.md": "Hello\n"}, Head: map[string]string{"README.md": "Hello World\n"}, Diff: smallDiff})
			in.gh.SetPermission("Codertocat", "Hello-World", writer.Login, "maintain")
			in.gh.SetPermission("Codertocat", "Hello-World", reader.Login, "read")
			in.gh.SetPermission("Codertocat", "Hello-World", bot.Login, "write")

			d := in.commentOn("c-1", tt.user, tt.body)
			if got := in.send(d); got != http.StatusOK {
				t.Fatalf("status %d, want 200", got)
			}
			paused, err := in.store.Paused(t.Context(), "Codertocat/Hello-World", 2)
			if err != nil {
				t.Fatal(err)
			}
			got := result{
				Outcome:          in.delivery("c-1").Outcome,
				Runs:             len(in.runs()),
				Paused:           paused,
				PermissionChecks: in.gh.CallCount(githubtest.RoutePermission),
				HeadReads:        in.gh.CallCount(githubtest.RoutePull),
			}
			for _, r := range in.gh.Reactions("Codertocat", "Hello-World") {
				got.Reactions = append(got.Reactions, r.Content)
			}
			for _, c := range in.gh.IssueComments("Codertocat", "Hello-World", 2)[1:] {
				got.Replies = append(got.Replies, c.Body)
			}
			for _, r := range in.runs() {
				got.Full, got.Describe = fullOptions(t, r), describeOptions(t, r)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			for _, r := range in.runs() {
				if r.Trigger != store.TriggerCommand || r.RequestedBy != tt.user.Login || r.Repository != "Codertocat/Hello-World" || r.PRNumber != 2 || r.InstallationID != 1 {
					t.Errorf("run %+v, want a command run of Codertocat/Hello-World#2 requested by %s", r, tt.user.Login)
				}
				if r.HeadSHA != pr.HeadSHA || r.BaseSHA != pr.BaseSHA || r.Branch != pr.HeadRef {
					t.Errorf("run of head %q base %q branch %q, want the pull request's %q, %q, %q", r.HeadSHA, r.BaseSHA, r.Branch, pr.HeadSHA, pr.BaseSHA, pr.HeadRef)
				}
			}

			// A redelivery changes nothing and calls nothing.
			calls := len(in.gh.Calls())
			if got := in.send(d); got != http.StatusOK {
				t.Fatalf("redelivery: status %d, want 200", got)
			}
			if n := len(in.runs()); n != tt.want.Runs {
				t.Errorf("redelivery: %d runs, want %d", n, tt.want.Runs)
			}
			if n := len(in.gh.Calls()) - calls; n != 0 {
				t.Errorf("redelivery made %d GitHub calls, want 0", n)
			}
		})
	}
}

func TestCommentOnAnIssueIsIgnored(t *testing.T) {
	t.Parallel() // each test has its own database and fakes
	in := newIntake(t)
	payload := githubtest.SetFields(t, githubtest.Payload(t, "issue_comment/created.with-installation.payload.json"),
		map[string]any{"comment.body": "/mergeguard rerun"})
	if got := in.send(githubtest.Delivery{Event: "issue_comment", ID: "issue", Payload: payload}); got != http.StatusOK {
		t.Fatalf("status %d, want 200", got)
	}
	if got := in.delivery("issue").Outcome; got != "ignored" {
		t.Errorf("outcome %q, want ignored", got)
	}
	if n := len(in.gh.Calls()); n != 0 {
		t.Errorf("%d GitHub calls, want 0", n)
	}
}

// TestPermissionCheckFailureIsRetriable: when GitHub cannot say whether the
// commenter may write, the delivery is answered 500 and not recorded, so
// GitHub's redelivery runs the command.
func TestPermissionCheckFailureIsRetriable(t *testing.T) {
	t.Parallel() // each test has its own database and fakes
	in := newIntake(t)
	in.gh.AddPR(githubtest.PR{Owner: "Codertocat", Repo: "Hello-World", Number: 2,
		Base: map[string]string{"README.md": "Hello\n"}, Head: map[string]string{"README.md": "Hello World\n"}, Diff: smallDiff})
	in.gh.SetPermission("Codertocat", "Hello-World", "alice", "write")
	for range 2 { // the request and the client's one retry
		in.gh.Inject(githubtest.RoutePermission, githubtest.Failure{Status: http.StatusBadGateway})
	}
	d := in.commentOn("c-1", githubtest.User{Login: "alice", ID: 11, Type: "User"}, "/mergeguard rerun")
	if got := in.send(d); got != http.StatusInternalServerError {
		t.Fatalf("status %d, want 500", got)
	}
	if n := in.count("webhook_deliveries", "true"); n != 0 {
		t.Fatalf("%d deliveries recorded after a failed permission check, want 0", n)
	}
	if got := in.send(d); got != http.StatusOK {
		t.Fatalf("redelivery: status %d, want 200", got)
	}
	if n := len(in.runs()); n != 1 {
		t.Errorf("%d runs after the redelivery, want 1", n)
	}
}

// TestHeadReadFailureIsRetriable: a rerun whose head GitHub cannot give is
// answered 500 and not recorded, so GitHub's redelivery queues it.
func TestHeadReadFailureIsRetriable(t *testing.T) {
	t.Parallel() // each test has its own database and fakes
	in := newIntake(t)
	pr := in.gh.AddPR(githubtest.PR{Owner: "Codertocat", Repo: "Hello-World", Number: 2,
		Base: map[string]string{"README.md": "Hello\n"}, Head: map[string]string{"README.md": "Hello World\n"}, Diff: smallDiff})
	in.gh.SetPermission("Codertocat", "Hello-World", "alice", "write")
	for range 2 { // the request and the client's one retry
		in.gh.Inject(githubtest.RoutePull, githubtest.Failure{Status: http.StatusBadGateway})
	}
	d := in.commentOn("c-1", githubtest.User{Login: "alice", ID: 11, Type: "User"}, "/mergeguard rerun")
	if got := in.send(d); got != http.StatusInternalServerError {
		t.Fatalf("status %d, want 500", got)
	}
	if n := in.count("webhook_deliveries", "true"); n != 0 {
		t.Fatalf("%d deliveries recorded after a failed head read, want 0", n)
	}
	if got := in.send(d); got != http.StatusOK {
		t.Fatalf("redelivery: status %d, want 200", got)
	}
	if runs := in.runs(); len(runs) != 1 || runs[0].HeadSHA != pr.HeadSHA {
		t.Errorf("runs after the redelivery: %+v, want one run of head %s", runs, pr.HeadSHA)
	}
}

// fullOptions reports whether run r is a forced full review: options
// {"full": true}, review.Options.Full.
func fullOptions(t *testing.T, r store.Run) bool {
	t.Helper()
	var o struct {
		Full bool `json:"full"`
	}
	if err := json.Unmarshal(r.Options, &o); err != nil {
		t.Fatalf("options of run %s: %v", r.ID, err)
	}
	return o.Full
}

// describeOptions reports whether run r writes the description: options
// {"describe": true}, review.Options.Describe.
func describeOptions(t *testing.T, r store.Run) bool {
	t.Helper()
	var o review.Options
	if err := json.Unmarshal(r.Options, &o); err != nil {
		t.Fatalf("options of run %s: %v", r.ID, err)
	}
	return o.Describe
}

// TestDescribeIsNotCoalescedAway: describe asked for while a review of
// the head is queued makes that run write the description, and says so;
// a second one adds nothing, and a full review keeps the description.
func TestDescribeIsNotCoalescedAway(t *testing.T) {
	t.Parallel() // each test has its own database and fakes
	in := newIntake(t)
	pr := in.gh.AddPR(githubtest.PR{Owner: "Codertocat", Repo: "Hello-World", Number: 2,
		Base: map[string]string{"README.md": "Hello\n"}, Head: map[string]string{"README.md": "Hello World\n"}, Diff: smallDiff})
	alice := githubtest.User{Login: "alice", ID: 11, Type: "User"}
	in.gh.SetPermission("Codertocat", "Hello-World", alice.Login, "write")
	short := pr.HeadSHA[:7]
	steps := []struct {
		body, outcome  string
		full, describe bool
		reply          string
	}{
		{"/mergeguard rerun", "queued", false, false, ""},
		{"/mergeguard describe", "coalesced", false, true, "A review of head `" + short + "` is already queued; it will now also write its walkthrough into this pull request's description."},
		{"/mergeguard describe", "coalesced", false, true, "A review of head `" + short + "` is already queued; this command adds nothing."},
		{"/mergeguard full-review", "coalesced", true, true, "A review of head `" + short + "` is already queued; it will now be a full review."},
	}
	for i, step := range steps {
		id := fmt.Sprintf("c-%d", i)
		if got := in.send(in.commentOn(id, alice, step.body)); got != http.StatusOK {
			t.Fatalf("%s: status %d, want 200", step.body, got)
		}
		runs := in.runs()
		if len(runs) != 1 {
			t.Fatalf("%s: %d runs, want 1", step.body, len(runs))
		}
		got := []any{in.delivery(id).Outcome, fullOptions(t, runs[0]), describeOptions(t, runs[0]), lastReply(in)}
		if diff := cmp.Diff([]any{step.outcome, step.full, step.describe, step.reply}, got); diff != "" {
			t.Errorf("step %d %s (-want +got):\n%s", i, step.body, diff)
		}
	}
}

// TestFullReviewIsNotCoalescedAway: a full review asked for while a rerun
// of the head is queued makes that run a full review, and says so; a
// second one adds nothing.
func TestFullReviewIsNotCoalescedAway(t *testing.T) {
	t.Parallel() // each test has its own database and fakes
	in := newIntake(t)
	pr := in.gh.AddPR(githubtest.PR{Owner: "Codertocat", Repo: "Hello-World", Number: 2,
		Base: map[string]string{"README.md": "Hello\n"}, Head: map[string]string{"README.md": "Hello World\n"}, Diff: smallDiff})
	alice := githubtest.User{Login: "alice", ID: 11, Type: "User"}
	in.gh.SetPermission("Codertocat", "Hello-World", alice.Login, "write")
	short := pr.HeadSHA[:7]
	steps := []struct {
		body, outcome string
		full          bool
		reply         string
	}{
		{"/mergeguard rerun", "queued", false, ""},
		{"/mergeguard full-review", "coalesced", true, "A review of head `" + short + "` is already queued; it will now be a full review."},
		{"/mergeguard rerun --full", "coalesced", true, "A review of head `" + short + "` is already queued; this command adds nothing."},
		{"/mergeguard rerun", "coalesced", true, "A review of head `" + short + "` is already queued; this command adds nothing."},
	}
	for i, step := range steps {
		id := fmt.Sprintf("c-%d", i)
		if got := in.send(in.commentOn(id, alice, step.body)); got != http.StatusOK {
			t.Fatalf("%s: status %d, want 200", step.body, got)
		}
		runs := in.runs()
		if len(runs) != 1 {
			t.Fatalf("%s: %d runs, want 1", step.body, len(runs))
		}
		got := []any{in.delivery(id).Outcome, fullOptions(t, runs[0]), lastReply(in)}
		if diff := cmp.Diff([]any{step.outcome, step.full, step.reply}, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", step.body, diff)
		}
	}
}

// lastReply is the body of the last comment on Codertocat/Hello-World#2
// when MergeGuard wrote it, "" otherwise.
func lastReply(in *intake) string {
	comments := in.gh.IssueComments("Codertocat", "Hello-World", 2)
	if last := comments[len(comments)-1]; last.User.Type == "Bot" {
		return last.Body
	}
	return ""
}

// TestConversationCommands: /mergeguard ask in the conversation queues an
// answer of the question (without reading the head: the worker does);
// ignore and learn there are answered that they work in a MergeGuard
// review thread.
func TestConversationCommands(t *testing.T) {
	t.Parallel() // each test has its own database and fakes
	type result struct {
		Outcome   string
		Question  *review.Question
		Reactions []string
		Replies   []string
		HeadReads int
	}
	tests := []struct {
		name string
		user githubtest.User
		body string
		want result
	}{
		{"ask by a writer", alice, "/mergeguard ask Why does this touch the README?\nAnd is it tested?",
			result{Outcome: "queued", Question: &review.Question{Kind: "ask", Author: "alice", Writer: true,
				Body: "Why does this touch the README?\nAnd is it tested?"}, Reactions: []string{"eyes"}}},
		{"ask without a question", alice, "/mergeguard ask",
			result{Outcome: "replied", Reactions: []string{"+1"}, Replies: []string{"Write the question after the command, for example: /mergeguard ask why is this a bug?"}}},
		{"ask by a reader", bob, "/mergeguard ask why?", result{Outcome: "ignored"}},
		{"ignore in the conversation", alice, "/mergeguard ignore",
			result{Outcome: "replied", Reactions: []string{"+1"}, Replies: []string{"/mergeguard ignore works in a MergeGuard review thread: reply with it to the comment of the finding."}}},
		{"learn in the conversation", alice, "/mergeguard learn",
			result{Outcome: "replied", Reactions: []string{"+1"}, Replies: []string{"/mergeguard learn works in a MergeGuard review thread: reply with it to the comment of the finding."}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			in := newIntake(t)
			in.gh.AddPR(githubtest.PR{Owner: "Codertocat", Repo: "Hello-World", Number: 2,
				Base: map[string]string{"README.md": "Hello\n"}, Head: map[string]string{"README.md": "Hello World\n"}, Diff: smallDiff})
			in.gh.SetPermission("Codertocat", "Hello-World", alice.Login, "write")
			in.gh.SetPermission("Codertocat", "Hello-World", bob.Login, "triage")
			d := in.commentOn("c-1", tt.user, tt.body)
			if got := in.send(d); got != http.StatusOK {
				t.Fatalf("status %d, want 200", got)
			}
			got := result{Outcome: in.delivery("c-1").Outcome, HeadReads: in.gh.CallCount(githubtest.RoutePull)}
			for _, r := range in.gh.Reactions("Codertocat", "Hello-World") {
				got.Reactions = append(got.Reactions, r.Content)
			}
			comments := in.gh.IssueComments("Codertocat", "Hello-World", 2)
			for _, c := range comments[1:] {
				got.Replies = append(got.Replies, c.Body)
			}
			for _, r := range in.runs() {
				q := question(t, r)
				if q.CommentID != comments[0].ID || r.Trigger != store.TriggerCommand || r.RequestedBy != "alice" || r.HeadSHA != "" || r.PRNumber != 2 {
					t.Errorf("answer run %+v asked by comment %d, want one requested by alice's command %d", r, q.CommentID, comments[0].ID)
				}
				q.CommentID = 0
				got.Question = &q
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
