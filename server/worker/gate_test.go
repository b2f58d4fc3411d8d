package worker_test

import (
	"maps"
	"strings"
	"testing"

	"github.com/mergeguard/mergeguard/github/githubtest"
	"github.com/mergeguard/mergeguard/server/store"
)

// TestTheAuthorCannotSkipTheGate: what the pull request's author controls
// (a title keyword, a lock file's name, a NUL byte, more files than
// max_files) keeps the model from a file at most: the secret scan reads
// every changed file and its finding fails the check. A skipped model
// review with nothing blocking completes the check neutral.
func TestTheAuthorCannotSkipTheGate(t *testing.T) {
	t.Parallel() // each test has its own database and fakes
	const key = "AWS_ACCESS_KEY_ID=AKIAZ7VRSQ5TJN2XMY4W\n"
	tests := []struct {
		name       string
		title      string
		added      map[string]string
		conclusion string
		modelCalls bool
	}{
		{"title keyword with a key", "[WIP] x", map[string]string{"deploy.sh": "#!/bin/sh\n" + key}, "failure", false},
		{"wip inside a word with a key", "Wipe stale sessions", map[string]string{"deploy.sh": "#!/bin/sh\n" + key}, "failure", true},
		{"key in a lock file", "Bump deps", map[string]string{"deep/dir/Cargo.lock": "[[package]]\n" + key}, "failure", false}, // no file for the model
		{"NUL on the last line of a long script", "Deploy", map[string]string{
			"deploy.sh": "#!/bin/sh\n" + key + strings.Repeat("echo padding line\n", 2000) + "# \x00\n"}, "failure", true},
		{"title keyword, nothing found", "WIP: docs", map[string]string{"docs/guide.md": "# Guide\n"}, "neutral", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, reviewer)
			p := pr(fixtureSHA, map[string]string{"README.md": "Hello\n"}, tt.added)
			p.Title = tt.title
			e.gh.AddPR(p)
			e.opened("d-1", fixtureSHA)
			e.start(e.store, e.options(), nil)
			run := e.waitDone(1)[0]
			if run.Status != store.StatusSucceeded {
				t.Fatalf("run: %s (%q %s), want succeeded", run.Status, run.StatusReason, run.Error)
			}
			checks := e.checks()
			if len(checks) != 1 || checks[0].Conclusion != tt.conclusion {
				t.Errorf("check runs %+v, want one %s", checks, tt.conclusion)
			}
			if called := e.llm.Calls() > 0; called != tt.modelCalls {
				t.Errorf("model called: %v, want %v", called, tt.modelCalls)
			}
			if n := len(e.gh.CallsTo(githubtest.RouteCreateReview)); n != 1 {
				t.Errorf("%d reviews posted, want 1", n)
			}
		})
	}
}

// TestMovingAKeyIntoALockFileKeepsTheCheckFailing: a key flagged in one
// file and moved into a lock file by the next push is found there by the
// incremental review: the check of the new head fails as the first did.
func TestMovingAKeyIntoALockFileKeepsTheCheckFailing(t *testing.T) {
	t.Parallel() // each test has its own database and fakes
	const key = "AWS_ACCESS_KEY_ID=AKIAZ7VRSQ5TJN2XMY4W\n"
	e := newEnv(t, reviewer)
	p := e.gh.AddPR(pr(fixtureSHA, map[string]string{"README.md": "Hello\n"}, map[string]string{"deploy.sh": "#!/bin/sh\n" + key}))
	e.start(e.store, e.options(), nil)
	e.opened("d-1", fixtureSHA)
	e.waitDone(1)
	if c := e.checks(); len(c) != 1 || c[0].Conclusion != "failure" {
		t.Fatalf("checks after the first review: %+v, want one failure", c)
	}
	files := maps.Clone(p.Head)
	files["deploy.sh"], files["config/yarn.lock"] = "#!/bin/sh\n", "# yarn lockfile v1\n"+key
	h2 := e.gh.Push(owner, repoName, prNumber, files, "Move the key")
	e.synchronize("d-2", fixtureSHA, h2, p.BaseSHA)
	e.waitDone(2)
	if c := e.checks(); len(c) != 2 || c[1].HeadSHA != h2 || c[1].Conclusion != "failure" {
		t.Errorf("check of the second head: %+v, want failure", c[len(c)-1])
	}
}

// TestATitleEditReevaluatesTheGate: renaming a pull request "[WIP] …"
// after the model found a blocking problem queues a review of the head
// whose model is skipped: the open finding still blocks, the check fails.
func TestATitleEditReevaluatesTheGate(t *testing.T) {
	t.Parallel() // each test has its own database and fakes
	e := newEnv(t, reviewer)
	e.gh.AddPR(standardPR(fixtureSHA))
	e.start(e.store, e.options(), nil)
	e.opened("d-1", fixtureSHA)
	e.waitDone(1)
	calls := e.llm.Calls()
	edit := func(id, from, to string) {
		e.gh.SetPullTitle(owner, repoName, prNumber, to)
		e.deliver("pull_request", id, githubtest.SetFields(t, githubtest.Payload(t, "pull_request/opened.payload.json"), map[string]any{
			"action": "edited", "pull_request.head.sha": fixtureSHA, "pull_request.title": to, "changes.title.from": from}))
	}
	edit("d-2", "Add user lookup", "[WIP] Add user lookup")
	e.waitDone(2)
	if c := e.checks(); len(c) != 2 || c[1].Conclusion != "failure" {
		t.Errorf("check after the title became [WIP]: %+v, want failure (the open finding still blocks)", c[len(c)-1])
	}
	if e.llm.Calls() != calls {
		t.Errorf("%d model calls for the [WIP] review, want none", e.llm.Calls()-calls)
	}
}

// TestABinaryFileIsReadBackForTheSecretScan: a file binary by GitHub's rule
// (a NUL in its first bytes), which GitHub shows as "Binary files … differ"
// with no patch, is read back from the head for the secret scan: its key
// fails the check, the finding in the review's body.
func TestABinaryFileIsReadBackForTheSecretScan(t *testing.T) {
	t.Parallel() // each test has its own database and fakes
	e := newEnv(t, reviewer)
	p := pr(fixtureSHA, map[string]string{"README.md": "Hello\n"}, map[string]string{"docs/guide.md": "# Guide\n"})
	p.Head["tool.bin"] = "\x7fELF\x00\x00\x01\nAWS_ACCESS_KEY_ID=AKIAZ7VRSQ5TJN2XMY4W\n"
	p.Diff += "diff --git a/tool.bin b/tool.bin\nnew file mode 100644\nindex 0000000..1111111\nBinary files /dev/null and b/tool.bin differ\n"
	e.gh.AddPR(p)
	e.opened("d-1", fixtureSHA)
	e.start(e.store, e.options(), nil)
	e.waitDone(1)
	if c := e.checks(); len(c) != 1 || c[0].Conclusion != "failure" {
		t.Errorf("check runs %+v, want one failure", c)
	}
	if rv := e.reviews(); len(rv) != 1 || !strings.Contains(rv[0].Body, "tool.bin") {
		t.Errorf("reviews %+v, want one naming tool.bin in its body", postedReviews(rv))
	}
}
