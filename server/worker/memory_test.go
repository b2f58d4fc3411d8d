package worker_test

import (
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/mergeguard/mergeguard/review/llm/llmtest"
)

// nitFile is errs/eN.go: its line 7 returns a capitalised error string.
func nitFile(n int) string {
	return fmt.Sprintf("package errs\n\nimport \"errors\"\n\n// Load%d loads item %d.\nfunc Load%d() error {\n\treturn errors.New(\"Failed to load item %d\")\n}\n", n, n, n, n)
}

// nitReviewer answers like a model that remarks on each capitalised error
// string it is shown, worded a little differently each time.
func nitReviewer(req llmtest.Request) llmtest.Response {
	prompt := ""
	for _, m := range req.Messages {
		prompt += m.Content
	}
	titles := []string{"Error string should not be capitalized", "Capitalized error string", "Error strings must not be capitalized"}
	found := []finding{}
	for n := 1; n <= 9; n++ {
		snippet := fmt.Sprintf("return errors.New(\"Failed to load item %d\")", n)
		if strings.Contains(prompt, snippet) {
			found = append(found, finding{FilePath: fmt.Sprintf("errs/e%d.go", n), LineStart: 7, LineEnd: 7, Side: "RIGHT",
				Severity: "info", Category: "quality", Title: titles[n%len(titles)], CodeSnippet: snippet, Confidence: 0.8,
				Description: fmt.Sprintf("Go error strings should not be capitalized; lowercase the message returned by Load%d.", n)})
		}
	}
	return llmtest.JSON(map[string]any{"findings": found, "positive_notes": []any{}})
}

// inlineOn counts the bot's inline comments that start a thread on path.
func (e *env) inlineOn(path string) int {
	n := 0
	for _, rv := range e.reviews() {
		for _, c := range rv.Comments {
			if c.InReplyTo == 0 && c.Path == path {
				n++
			}
		}
	}
	return n
}

// resolveAll resolves every thread of the pull request as login, one
// another person resolved after unresolving it.
func (e *env) resolveAll(login string) {
	for _, th := range e.gh.Threads(owner, repoName, prNumber) {
		if th.Resolved && th.ResolvedBy != login {
			e.gh.UnresolveThread(owner, repoName, prNumber, th.ID)
		}
		e.gh.ResolveThread(owner, repoName, prNumber, th.ID, login)
	}
}

// TestMemoryOfDismissals follows a nit over a pull request's pushes: the
// pull request's author (a reader) resolving its threads teaches the
// memory nothing, and the nit is posted again; once a writer has resolved
// three (memory.suppress_after), the next one is not posted, the review's
// body counts it and it is recorded with the writer's dismissals; once a
// writer revives it, the next one is posted again.
func TestMemoryOfDismissals(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nitReviewer)
	base := map[string]string{"README.md": "Hello\n"}
	p := e.gh.AddPR(pr(fixtureSHA, base, map[string]string{"errs/e1.go": nitFile(1), "errs/e2.go": nitFile(2), "errs/e3.go": nitFile(3)}))
	e.start(e.store, e.options(), nil)
	e.gh.SetPermission(owner, repoName, "alice", "write")
	e.gh.SetPermission(owner, repoName, "mallory", "read")
	files := maps.Clone(p.Head)
	before := fixtureSHA
	push := func(n int, id string) {
		t.Helper()
		files[fmt.Sprintf("errs/e%d.go", n)] = nitFile(n)
		head := e.gh.Push(owner, repoName, prNumber, files, fmt.Sprintf("Add e%d", n))
		e.synchronize(id, before, head, p.BaseSHA)
		before = head
	}

	e.opened("d-1", fixtureSHA)
	e.waitDone(1)
	for n := 1; n <= 3; n++ {
		if got := e.inlineOn(fmt.Sprintf("errs/e%d.go", n)); got != 1 {
			t.Fatalf("first review: %d comments on e%d.go, want 1", got, n)
		}
	}

	// The pull request's author resolves the three threads: readers
	// dismiss nothing, so the memory has nothing and e4's nit is posted.
	e.resolveAll("mallory")
	push(4, "d-2")
	e.waitDone(2)
	if got := e.inlineOn("errs/e4.go"); got != 1 {
		t.Errorf("after a reader's resolutions: %d comments on e4.go, want 1", got)
	}

	// A writer resolves them: e5's nit is similar to four dismissals.
	e.resolveAll("alice")
	push(5, "d-3")
	e.waitDone(3)
	if got := e.inlineOn("errs/e5.go"); got != 0 {
		t.Errorf("after a writer's resolutions: %d comments on e5.go, want 0 (suppressed)", got)
	}
	rv := bodied(e.reviews())
	if body := rv[len(rv)-1].Body; !strings.Contains(body, "1 finding not posted: similar to findings this repository") {
		t.Errorf("the review's body does not count the suppressed finding:\n%s", body)
	}
	sup, err := e.store.Suppressed(t.Context(), repoFull, prNumber)
	if err != nil || len(sup) != 1 || sup[0].Finding.FilePath != "errs/e5.go" || len(sup[0].Matches) != 4 {
		t.Fatalf("suppressed = %+v, %v; want e5's nit with the four dismissals", sup, err)
	}
	for _, m := range sup[0].Matches {
		if m.By != "alice" || m.How != "thread_resolved" || m.CommentID == 0 || m.PRNumber != prNumber {
			t.Errorf("match %+v, want alice's resolution of a posted comment", m)
		}
	}

	// A writer revives it: e6's nit is posted again.
	if ok, err := e.store.Revive(t.Context(), repoFull, prNumber, sup[0].Finding.Fingerprint, "alice"); err != nil || !ok {
		t.Fatalf("Revive = %t, %v", ok, err)
	}
	push(6, "d-4")
	e.waitDone(4)
	if got := e.inlineOn("errs/e6.go"); got != 1 {
		t.Errorf("after the revival: %d comments on e6.go, want 1", got)
	}
}
