package worker_test

import (
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/mergeguard/mergeguard/github/githubtest"
	"github.com/mergeguard/mergeguard/review"
)

const awsKey = "AKIAZ7VRSQ5TJN2XMY4W"

// keyThread is the review thread of the secret's finding.
func (e *env) keyThread() *githubtest.Thread {
	e.t.Helper()
	for _, th := range e.gh.Threads(owner, repoName, prNumber) {
		if strings.Contains(th.Comments[0].Body, "Possible secret committed") {
			return &th
		}
	}
	return nil
}

// secretState is the ledger state of the pull request's secret finding.
func (e *env) secretState() review.FindingState {
	e.t.Helper()
	for title, state := range e.ledger() {
		if strings.HasPrefix(title, "Possible secret committed") {
			return state
		}
	}
	return ""
}

// TestPushedSecretStaysExposed: a key split into two literals, then
// removed, is not fixed: it was pushed, so it is exposed, its thread gets
// one reply naming the commit that carried it, and the check keeps failing
// until a writer dismisses it; then the head's check completes success and
// the REQUEST_CHANGES reviews are dismissed at once.
func TestPushedSecretStaysExposed(t *testing.T) {
	t.Parallel()
	e := newEnv(t, codeReviewer)
	p := e.gh.AddPR(pr(fixtureSHA, map[string]string{"README.md": "Hello\n"},
		map[string]string{"deploy/cfg.py": "import os\nAWS_KEY = \"" + awsKey + "\"\n"}))
	e.start(e.store, e.options(), nil)
	files := maps.Clone(p.Head)

	e.opened("d-1", fixtureSHA)
	e.waitDone(1)
	if c := e.checks(); len(c) != 1 || c[0].Conclusion != "failure" {
		t.Fatalf("checks after the key was pushed: %+v, want one failure", c)
	}
	steps := []struct {
		name, cfg string
	}{
		{"split into two literals", "import os\nAWS_KEY = \"AKIAZ7VRSQ\" \"5TJN2XMY4W\"\n"},
		{"removed", "import os\nAWS_KEY = os.environ[\"AWS_KEY\"]\n"},
	}
	before := fixtureSHA
	for i, st := range steps {
		files["deploy/cfg.py"] = st.cfg
		head := e.gh.Push(owner, repoName, prNumber, files, st.name)
		e.synchronize(fmt.Sprintf("d-%d", i+2), before, head, p.BaseSHA)
		e.waitDone(i + 2)
		before = head
		if got := e.secretState(); got != review.FindingExposed {
			t.Errorf("%s: the secret is %q, want exposed", st.name, got)
		}
		if c := e.checks(); c[len(c)-1].Conclusion != "failure" || c[len(c)-1].HeadSHA != head {
			t.Errorf("%s: check %+v, want failure at %s", st.name, c[len(c)-1], head)
		}
		rv := bodied(e.reviews())
		if body := rv[len(rv)-1].Body; !strings.Contains(body, "exposed secrets: 1") || !strings.Contains(body, "pushed in `"+fixtureSHA[:7]+"`") {
			t.Errorf("%s: the review body does not count the exposed secret:\n%s", st.name, body)
		}
		th := e.keyThread()
		if th == nil || th.Resolved || len(th.Comments) != 2 ||
			!strings.Contains(th.Comments[1].Body, fixtureSHA[:7]) || !strings.Contains(th.Comments[1].Body, "rotate") {
			t.Errorf("%s: the secret's thread %+v, want unresolved with one reply naming %s and asking to rotate", st.name, th, fixtureSHA[:7])
		}
	}

	// A writer dismisses it (/mergeguard ignore, the UI or the API): the
	// gate opens at once, without a push.
	var fp string
	entries, err := e.store.Ledger(t.Context(), repoFull, prNumber)
	if err != nil {
		t.Fatal(err)
	}
	for _, en := range entries {
		if en.State == review.FindingExposed {
			fp = en.Finding.Fingerprint
		}
	}
	if ok, err := e.store.DismissFinding(t.Context(), repoFull, prNumber, fp, "alice", review.DismissedCommand); err != nil || !ok {
		t.Fatalf("DismissFinding = %t, %v", ok, err)
	}
	checks := len(e.checks())
	e.waitFor("the check of the head completed success", func() bool {
		c := e.gh.CheckRuns(owner, repoName)
		return len(c) == checks && c[len(c)-1].Conclusion == "success" && c[len(c)-1].HeadSHA == before
	})
	e.waitFor("the REQUEST_CHANGES reviews dismissed", func() bool {
		for _, rv := range e.reviews() {
			if rv.State == "CHANGES_REQUESTED" {
				return false
			}
		}
		return true
	})
	if n := len(e.runs()); n != 3 {
		t.Errorf("%d runs, want 3: the gate opened without a review", n)
	}
}

// TestExposedReplyOnce: a run attempt that finds the rotation reply of an
// earlier attempt in the thread does not post it again.
func TestExposedReplyOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t, codeReviewer)
	p := e.gh.AddPR(pr(fixtureSHA, map[string]string{"README.md": "Hello\n"},
		map[string]string{"deploy/cfg.py": "import os\nAWS_KEY = \"" + awsKey + "\"\n"}))
	e.start(e.store, e.options(), nil)
	e.opened("d-1", fixtureSHA)
	e.waitDone(1)
	th := e.keyThread()
	if th == nil {
		t.Fatal("no thread of the secret")
	}
	earlier := "This secret is no longer in the pull request's diff, but commit " + fixtureSHA[:7] + " pushed it."
	e.gh.Reply(owner, repoName, prNumber, th.Comments[0].ID, githubtest.User{Login: "mergeguard[bot]", ID: 9001, Type: "Bot"}, earlier)

	files := maps.Clone(p.Head)
	files["deploy/cfg.py"] = "import os\n"
	head := e.gh.Push(owner, repoName, prNumber, files, "remove the key")
	e.synchronize("d-2", fixtureSHA, head, p.BaseSHA)
	e.waitDone(2)
	if got := e.secretState(); got != review.FindingExposed {
		t.Fatalf("the secret is %q, want exposed", got)
	}
	if th := e.keyThread(); len(th.Comments) != 2 {
		t.Errorf("the secret's thread has %d comments, want the finding and the one earlier reply", len(th.Comments))
	}
}

// TestThumbsDownDismissesExposed: a writer's 👎 on an exposed secret's
// comment is an explicit dismissal, read before the next review.
func TestThumbsDownDismissesExposed(t *testing.T) {
	t.Parallel()
	e := newEnv(t, codeReviewer)
	p := e.gh.AddPR(pr(fixtureSHA, map[string]string{"README.md": "Hello\n"},
		map[string]string{"deploy/cfg.py": "import os\nAWS_KEY = \"" + awsKey + "\"\n"}))
	e.gh.SetPermission(owner, repoName, "alice", "write")
	e.start(e.store, e.options(), nil)
	e.opened("d-1", fixtureSHA)
	e.waitDone(1)
	files := maps.Clone(p.Head)
	files["deploy/cfg.py"] = "import os\n"
	h2 := e.gh.Push(owner, repoName, prNumber, files, "remove the key")
	e.synchronize("d-2", fixtureSHA, h2, p.BaseSHA)
	e.waitDone(2)
	if got := e.secretState(); got != review.FindingExposed {
		t.Fatalf("the secret is %q, want exposed", got)
	}
	e.gh.React(owner, repoName, e.keyThread().Comments[0].ID, githubtest.User{Login: "alice", Type: "User"}, "-1")
	files["README.md"] = "Hello again\n"
	h3 := e.gh.Push(owner, repoName, prNumber, files, "touch the readme")
	e.synchronize("d-3", h2, h3, p.BaseSHA)
	e.waitDone(3)
	if got := e.secretState(); got != review.FindingDismissed {
		t.Errorf("after a writer's 👎 the secret is %q, want dismissed", got)
	}
	if c := e.checks(); c[len(c)-1].Conclusion != "success" || c[len(c)-1].HeadSHA != h3 {
		t.Errorf("check %+v, want success at %s", c[len(c)-1], h3)
	}
}
