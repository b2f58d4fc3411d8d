package worker_test

import (
	"maps"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mergeguard/mergeguard/github/githubtest"
	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/llm/llmtest"
	"github.com/mergeguard/mergeguard/server/store"
)

const (
	usersFixedGo = "package store\n\nimport (\n\t\"database/sql\"\n)\n\n" +
		"// FindUser returns the user with the given name.\n" +
		"func FindUser(db *sql.DB, name string) (*sql.Rows, error) {\n" +
		"\tq := \"SELECT id FROM users WHERE name = $1\"\n" +
		"\treturn db.Query(q, name)\n}\n"
	cacheGo = "package store\n\n// cache holds every user ever read.\nvar cache = map[string]string{} // grows without bound\n"
)

var unboundedCache = finding{FilePath: "store/cache.go", LineStart: 4, LineEnd: 4, Side: "RIGHT", Severity: "warning",
	Category: "performance", Title: "Unbounded cache", Description: "The cache grows with every user.",
	CodeSnippet: "var cache = map[string]string{} // grows without bound", Confidence: 0.8}

// codeReviewer answers like a model that reports a problem whenever its
// code is in the diff it is shown.
func codeReviewer(req llmtest.Request) llmtest.Response {
	prompt := ""
	for _, m := range req.Messages {
		prompt += m.Content
	}
	found := []finding{}
	for _, f := range []finding{sqlInjection, divByZero, unboundedCache} {
		if strings.Contains(prompt, f.CodeSnippet) {
			found = append(found, f)
		}
	}
	return llmtest.JSON(map[string]any{"findings": found, "positive_notes": []any{}})
}

// synchronize delivers the pull request's synchronize event for head.
func (e *env) synchronize(id, before, head, base string) {
	e.t.Helper()
	e.deliver("pull_request", id, githubtest.SetFields(e.t, githubtest.Payload(e.t, "pull_request/synchronize.payload.json"),
		map[string]any{"pull_request.head.sha": head, "pull_request.base.sha": base, "before": before, "after": head,
			"pull_request.number": prNumber, "number": prNumber, "installation.id": 1}))
}

// inlineByTitle counts the bot's inline comments across all reviews, by
// the finding title they start with.
func (e *env) inlineByTitle() map[string]int {
	out := map[string]int{}
	for _, rv := range e.reviews() {
		for _, c := range rv.Comments {
			if c.InReplyTo != 0 {
				continue
			}
			for _, title := range []string{sqlInjection.Title, divByZero.Title, unboundedCache.Title} {
				if strings.Contains(c.Body, title) {
					out[title]++
				}
			}
		}
	}
	return out
}

func (e *env) ledger() map[string]review.FindingState {
	e.t.Helper()
	entries, err := e.store.Ledger(e.t.Context(), repoFull, prNumber)
	if err != nil {
		e.t.Fatal(err)
	}
	out := map[string]review.FindingState{}
	for _, en := range entries {
		out[en.Finding.Title] = en.State
	}
	return out
}

// TestReviewsConverge follows one pull request over several pushes: a
// full first review, an incremental one that finds the critical fixed
// (its thread answered and resolved, the REQUEST_CHANGES dismissed) and
// posts the new warning once, a thread a person resolved never reposted,
// a push touching nothing flagged, and a force-push reviewed whole.
func TestReviewsConverge(t *testing.T) {
	t.Parallel()
	e := newEnv(t, codeReviewer)
	base := map[string]string{"README.md": "Hello\n"}
	p := e.gh.AddPR(pr(fixtureSHA, base, map[string]string{"store/users.go": usersGo, "mathx/div.go": divGo}))
	e.start(e.store, e.options(), nil)
	files := maps.Clone(p.Head)

	e.opened("d-1", fixtureSHA)
	first := e.waitDone(1)[0]
	if first.ReviewKind != review.ScopeFull || len(e.reviews()) != 1 || e.reviews()[0].State != "CHANGES_REQUESTED" {
		t.Fatalf("first review: kind %q, reviews %+v; want a full review requesting changes", first.ReviewKind, e.reviews())
	}
	if c := e.checks(); len(c) != 1 || c[0].Conclusion != "failure" || c[0].HeadSHA != fixtureSHA {
		t.Errorf("checks after the first review: %+v, want one failure at the head", c)
	}

	// Push: fix the injection, add a cache with a new warning.
	files["store/users.go"], files["store/cache.go"] = usersFixedGo, cacheGo
	h2 := e.gh.Push(owner, repoName, prNumber, files, "Use a placeholder; cache users")
	e.synchronize("d-2", fixtureSHA, h2, p.BaseSHA)
	second := e.waitDone(2)[1]
	if second.ReviewKind != review.ScopeIncremental || second.SinceSHA != fixtureSHA {
		t.Errorf("second review: %q since %q (%s), want incremental since the first head", second.ReviewKind, second.SinceSHA, second.KindReason)
	}
	rv := bodied(e.reviews()) // a reply in a thread is a review without a body
	if len(rv) != 2 || rv[0].State != "DISMISSED" || rv[1].State != "COMMENTED" {
		t.Errorf("reviews after the fix: %v, want the REQUEST_CHANGES dismissed and a comment", reviewStates(rv))
	}
	if body := rv[len(rv)-1].Body; !strings.Contains(body, "Incremental review") || !strings.Contains(body, "Fixed since last time") {
		t.Errorf("follow-up body does not read as one:\n%s", body)
	}
	threads := e.gh.Threads(owner, repoName, prNumber)
	var fixedThread *githubtest.Thread
	for i, th := range threads {
		if strings.Contains(th.Comments[0].Body, sqlInjection.Title) {
			fixedThread = &threads[i]
		}
	}
	if fixedThread == nil || !fixedThread.Resolved || len(fixedThread.Comments) != 2 ||
		fixedThread.Comments[1].Body != "Fixed in "+h2[:7]+"." {
		t.Errorf("the injection's thread: %+v, want resolved with one reply naming %s", fixedThread, h2[:7])
	}
	if diff := cmp.Diff(map[string]review.FindingState{sqlInjection.Title: review.FindingFixed,
		divByZero.Title: review.FindingOpen, unboundedCache.Title: review.FindingOpen}, e.ledger()); diff != "" {
		t.Errorf("ledger after the fix (-want +got):\n%s", diff)
	}
	if c := e.checks(); len(c) != 2 || c[1].Conclusion != "success" || len(c[1].Annotations) != 2 {
		t.Errorf("check of the second head: %+v, want success with the 2 open findings annotated", c[len(c)-1])
	}

	// A writer resolves the division's thread, and the pull request's
	// author, a reader, the cache's; then a push touches nothing flagged.
	e.gh.SetPermission(owner, repoName, "alice", "write")
	e.gh.SetPermission(owner, repoName, "mallory", "read")
	for _, th := range e.gh.Threads(owner, repoName, prNumber) {
		switch {
		case strings.Contains(th.Comments[0].Body, divByZero.Title):
			e.gh.ResolveThread(owner, repoName, prNumber, th.ID, "alice")
		case strings.Contains(th.Comments[0].Body, unboundedCache.Title):
			e.gh.ResolveThread(owner, repoName, prNumber, th.ID, "mallory")
		}
	}
	files["README.md"] = "Hello, world\n"
	h3 := e.gh.Push(owner, repoName, prNumber, files, "Say hello")
	e.synchronize("d-3", h2, h3, p.BaseSHA)
	third := e.waitDone(3)[2]
	if third.ReviewKind != review.ScopeIncremental {
		t.Errorf("third review: %q (%s), want incremental", third.ReviewKind, third.KindReason)
	}
	if got := e.ledger()[divByZero.Title]; got != review.FindingDismissed {
		t.Errorf("the division after alice resolved its thread: %s, want dismissed", got)
	}
	if got := e.ledger()[unboundedCache.Title]; got != review.FindingOpen {
		t.Errorf("the cache after a reader resolved its thread: %s, want open (readers dismiss nothing)", got)
	}

	// Force-push: a full review, and still nothing posted twice.
	files["mathx/div.go"] = divGo + "\n// Mod is a mod b.\nfunc Mod(a, b int) int { return a % b }\n"
	h4 := e.gh.ForcePush(owner, repoName, prNumber, files, "One commit")
	e.synchronize("d-4", h3, h4, p.BaseSHA)
	fourth := e.waitDone(4)[3]
	if fourth.ReviewKind != review.ScopeFull || !strings.Contains(fourth.KindReason, "force-pushed") {
		t.Errorf("fourth review: %q (%s), want full for the force-push", fourth.ReviewKind, fourth.KindReason)
	}
	for _, r := range e.waitDone(4) {
		if r.Status != store.StatusSucceeded {
			t.Errorf("run %s: %s (%s)", r.ID, r.Status, r.Error)
		}
	}
	if diff := cmp.Diff(map[string]int{sqlInjection.Title: 1, divByZero.Title: 1, unboundedCache.Title: 1}, e.inlineByTitle()); diff != "" {
		t.Errorf("inline comments by finding over 4 reviews (-want +got; none posted twice):\n%s", diff)
	}
}

// bodied are the reviews with a body: MergeGuard's reviews, not the
// reviews GitHub makes of replies in threads.
func bodied(rv []githubtest.Review) []githubtest.Review {
	var out []githubtest.Review
	for _, r := range rv {
		if r.Body != "" {
			out = append(out, r)
		}
	}
	return out
}

func reviewStates(rv []githubtest.Review) []string {
	out := make([]string, len(rv))
	for i, r := range rv {
		out[i] = r.State
	}
	return out
}

// TestAPICallsOfIncrementalReview counts the GitHub API calls of the
// incremental review of a 20-file pull request after a push of one commit
// changing 2 files: what the first review makes, plus the ledger's reads
// (review threads, the reactions of each open finding's comment, the
// comparison and its diff) and one head file read per touched file with
// open findings.
func TestAPICallsOfIncrementalReview(t *testing.T) {
	t.Parallel()
	e := newEnv(t, codeReviewer)
	p := e.gh.AddPR(twentyFiles(nil))
	e.start(e.store, e.options(), nil)
	e.opened("d-1", fixtureSHA)
	if run := e.waitDone(1)[0]; run.Status != store.StatusSucceeded {
		t.Fatalf("first run %s (%s)", run.Status, run.Error)
	}
	e.checks()
	e.gh.ResetCalls()
	files := maps.Clone(p.Head)
	files["store/users.go"] = usersFixedGo
	files["pkg/f03.go"] += "\n// G03 returns 4.\nfunc G03() int { return 4 }\n"
	head := e.gh.Push(owner, repoName, prNumber, files, "Fix the query; add G03")
	e.synchronize("d-2", fixtureSHA, head, p.BaseSHA)
	run := e.waitDone(2)[1]
	if run.ReviewKind != review.ScopeIncremental {
		t.Fatalf("second review %q (%s), want incremental", run.ReviewKind, run.KindReason)
	}
	e.checks()
	n, by := apiCalls(e.gh)
	t.Logf("incremental review: %d API calls: %v", n, by)
	// 10 of a first review, threads, reactions, compare ×2, reply, resolve,
	// dismiss, two head reads (the ledger's check of open findings), and
	// the code-aware context's head tree and archive (tarball and codeload).
	const limit = 21
	if n > limit {
		t.Errorf("%d API calls, want at most %d: %v", n, limit, by)
	}
	if by[githubtest.RouteCreateReview] != 1 {
		t.Errorf("%d reviews created, want 1", by[githubtest.RouteCreateReview])
	}
}
