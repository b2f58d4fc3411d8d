package worker_test

import (
	"strings"
	"testing"

	"github.com/mergeguard/mergeguard/github/githubtest"
	"github.com/mergeguard/mergeguard/server/store"
)

// describeStart opens MergeGuard's section of a description.
const describeStart = "<!-- mergeguard:describe-start -->"

// TestDescribeCommand: /mergeguard describe from the webhook to the
// description. Without a review of the head it reviews first, then writes
// the walkthrough after the author's text; with one it writes that
// review's walkthrough without reviewing again or touching the head's
// check; a reader's describe does nothing.
func TestDescribeCommand(t *testing.T) {
	t.Parallel() // each test has its own database and fakes
	e := newEnv(t, reviewer)
	pr := e.gh.AddPR(standardPR(fixtureSHA))
	e.gh.SetPermission(owner, repoName, "alice", "write")
	e.gh.SetPermission(owner, repoName, "bob", "read")
	const author = "Adds users and division.\r\n\r\ncc @octocat"
	e.gh.SetPullBody(owner, repoName, prNumber, author)

	e.comment("c-1", "alice", "/mergeguard describe")
	e.start(e.store, e.options(), nil)
	first := e.waitDone(1)[0]
	if first.Status != store.StatusSucceeded || first.Trigger != store.TriggerCommand || first.HeadSHA != pr.HeadSHA {
		t.Fatalf("describe without a review: run %s %s at %s (%s), want a succeeded command review of %s", first.Trigger, first.Status, first.HeadSHA, first.Error, pr.HeadSHA)
	}
	if n := len(e.reviews()); n != 1 {
		t.Fatalf("%d reviews posted, want 1", n)
	}
	body := e.gh.PullBody(owner, repoName, prNumber)
	if !strings.HasPrefix(body, author+"\n\n"+describeStart+"\n") || !strings.Contains(body, "`store/users.go`") {
		t.Fatalf("description after describe:\n%s", body)
	}
	if strings.Count(body, "@") != strings.Count(author, "@") {
		t.Errorf("the walkthrough added a mention to the description:\n%s", body)
	}
	checks := len(e.checks())

	// The author drops MergeGuard's section; describe writes it again
	// from the review of the head, reviewing nothing.
	e.gh.SetPullBody(owner, repoName, prNumber, "Rewritten by the author.")
	patches := e.gh.CallCount(githubtest.RouteUpdatePull)
	e.comment("c-2", "alice", "/mergeguard describe")
	second := e.waitDone(2)[1]
	if second.Status != store.StatusSkipped || !strings.Contains(second.StatusReason, first.ID) {
		t.Errorf("describe with a review: run %s (%q), want skipped, described from run %s", second.Status, second.StatusReason, first.ID)
	}
	body = e.gh.PullBody(owner, repoName, prNumber)
	if !strings.HasPrefix(body, "Rewritten by the author.\n\n"+describeStart+"\n") || strings.Count(body, describeStart) != 1 {
		t.Errorf("description after the second describe:\n%s", body)
	}
	if n := e.gh.CallCount(githubtest.RouteUpdatePull) - patches; n != 1 {
		t.Errorf("%d description writes, want 1", n)
	}
	if n := len(e.reviews()); n != 1 {
		t.Errorf("%d reviews posted, want still 1", n)
	}
	if n := len(e.gh.CheckRuns(owner, repoName)); n != checks {
		t.Errorf("%d check runs, want still %d: a describe that reviews nothing leaves the head's check alone", n, checks)
	}

	// A reader's describe is refused at intake.
	e.comment("c-3", "bob", "/mergeguard describe")
	if n := len(e.runs()); n != 2 {
		t.Errorf("a reader's describe queued a run (%d runs)", n)
	}
	if got := e.gh.PullBody(owner, repoName, prNumber); got != body {
		t.Errorf("a reader's describe changed the description:\n%s", got)
	}

	var reactions []string
	for _, r := range e.gh.Reactions(owner, repoName) {
		reactions = append(reactions, r.Content)
	}
	if strings.Join(reactions, " ") != "eyes eyes" {
		t.Errorf("reactions %v, want eyes on each writer's describe", reactions)
	}
}
