package e2e

import (
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mergeguard/mergeguard/github/githubtest"
	"github.com/mergeguard/mergeguard/review/llm/llmtest"
	"github.com/mergeguard/mergeguard/server/store/storetest"
)

// The code of the pull request TestPushesConverge follows, and the
// findings the model reports whenever their code is in the diff it is
// shown.
const (
	fixedUsersGo = "package store\n\nimport (\n\t\"database/sql\"\n)\n\n" +
		"// FindUser returns the user with the given name.\n" +
		"func FindUser(db *sql.DB, name string) (*sql.Rows, error) {\n" +
		"\tq := \"SELECT id FROM users WHERE name = $1\"\n" +
		"\treturn db.Query(q, name)\n}\n"
	divGo   = "package mathx\n\n// Div divides a by b.\nfunc Div(a, b int) int { return a / b }\n"
	cacheGo = "package store\n\n// cache holds every user ever read.\nvar cache = map[string]string{} // grows without bound\n"
)

var (
	divByZero = map[string]any{"file_path": "mathx/div.go", "line_start": 4, "line_end": 4, "side": "RIGHT",
		"severity": "warning", "category": "bug", "title": "Division by zero", "description": "b may be zero.",
		"code_snippet": "func Div(a, b int) int { return a / b }", "confidence": 0.8}
	unboundedCache = map[string]any{"file_path": "store/cache.go", "line_start": 4, "line_end": 4, "side": "RIGHT",
		"severity": "warning", "category": "performance", "title": "Unbounded cache", "description": "It grows with every user.",
		"code_snippet": "var cache = map[string]string{} // grows without bound", "confidence": 0.8}
)

// codeModel reports each finding whose code is in the prompt.
func codeModel(req llmtest.Request) llmtest.Response {
	var b strings.Builder
	for _, m := range req.Messages {
		b.WriteString(m.Content)
	}
	found := []any{}
	for _, f := range []map[string]any{sqlInjection, divByZero, unboundedCache} {
		if strings.Contains(b.String(), f["code_snippet"].(string)) {
			found = append(found, f)
		}
	}
	return llmtest.JSON(map[string]any{"findings": found, "positive_notes": []any{}})
}

// TestPushesConverge follows one pull request over ten pushes with the
// real binary, a real database, the fake GitHub and the fake model
// (issue 13): a full first review with a critical finding; a push fixing
// it and adding a warning, reviewed incrementally (the critical's thread
// answered and resolved, the REQUEST_CHANGES dismissed, the warning posted
// once, the check a success); a person resolving a thread through the
// pull_request_review_thread webhook; pushes touching nothing flagged; a
// force-push reviewed whole; and a run that fails, whose check completes
// as failure. No finding is ever posted twice.
func TestPushesConverge(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	app := newFakeApp(t)
	model := llmtest.New(t, codeModel)
	dbURL := storetest.Empty(t)
	env := app.serveEnv(model.URL(), 2)
	r := startReplica(t, bin, "replica", dbURL, serveOptions{env: env, config: workerConfig(5 * time.Second)})
	r.waitReady(t)
	db := openDB(t, dbURL)
	app.gh.SetPermission("acme", "shop", "alice", "write")

	pr := newPR("acme", "shop", 1, 1, "Look users up", sha("converge", 1))
	pr.Head["mathx/div.go"] = divGo
	pr.Diff += githubtest.AddedFileDiff("mathx/div.go", divGo)
	pr = app.gh.AddPR(pr)
	files := maps.Clone(pr.Head)
	deliver := func(id, action string) runRow {
		t.Helper()
		app.mustDeliver(t, r.url, githubtest.Delivery{Event: "pull_request", ID: id, Payload: payload(t, pr, action)})
		return waitRun(t, db, pr, pr.HeadSHA, 60*time.Second, "succeeded", "failed", "skipped")
	}
	push := func(i int, change func()) runRow {
		t.Helper()
		change()
		pr.HeadSHA = app.gh.Push("acme", "shop", 1, files, fmt.Sprintf("push %d", i))
		return deliver(fmt.Sprintf("push-%d", i), "synchronize")
	}

	first := deliver("open", "opened")
	if first.Status != "succeeded" || lastCheck(t, app).Conclusion != "failure" {
		t.Fatalf("first review %s (%s), check %+v; want succeeded, check failure", first.Status, first.Error, lastCheck(t, app))
	}

	second := push(1, func() { files["store/users.go"], files["store/cache.go"] = fixedUsersGo, cacheGo })
	kind, reason := runKind(t, db, second.ID)
	if kind != "incremental" {
		t.Errorf("review after the fix: %s (%s), want incremental", kind, reason)
	}
	states := reviewStates(app.gh.Reviews("acme", "shop", 1))
	if states[0] != "DISMISSED" {
		t.Errorf("reviews after the fix: %v, want the first (REQUEST_CHANGES) dismissed", states)
	}
	if c := lastCheck(t, app); c.Conclusion != "success" || c.HeadSHA != pr.HeadSHA {
		t.Errorf("check of the fixed head: %+v, want success", c)
	}
	if th := threadOf(app, "SQL injection"); !th.Resolved || len(th.Comments) != 2 || !strings.HasPrefix(th.Comments[1].Body, "Fixed in ") {
		t.Errorf("the injection's thread: %+v, want resolved with one reply", th)
	}

	// alice (a writer) resolves the division's thread on GitHub.
	div := threadOf(app, "Division by zero")
	app.gh.ResolveThread("acme", "shop", 1, div.ID, "alice")
	app.mustDeliver(t, r.url, githubtest.Delivery{Event: "pull_request_review_thread", ID: "thread-1",
		Payload: app.gh.ThreadEvent("acme", "shop", 1, div.ID, "resolved", "alice", installationID)})

	for i := 2; i <= 8; i++ { // pushes touching nothing flagged
		run := push(i, func() { files["README.md"] = fmt.Sprintf("Hello %d\n", i) })
		if kind, reason := runKind(t, db, run.ID); run.Status != "succeeded" || kind != "incremental" {
			t.Errorf("push %d: %s, %s (%s); want an incremental review", i, run.Status, kind, reason)
		}
	}

	files["mathx/div.go"] = divGo + "\n// Mod is a mod b.\nfunc Mod(a, b int) int { return a % b }\n"
	pr.HeadSHA = app.gh.ForcePush("acme", "shop", 1, files, "squash")
	forced := deliver("force-push", "synchronize")
	if kind, reason := runKind(t, db, forced.ID); kind != "full" || !strings.Contains(reason, "force-pushed") {
		t.Errorf("after a force-push: %s (%s), want a full review saying why", kind, reason)
	}

	// The tenth push: the base gets a broken .mergeguard.yml, the run fails.
	pr.BaseSHA = app.gh.MoveBase("acme", "shop", 1, map[string]string{"README.md": "Hello\n", ".mergeguard.yml": "enabled: maybe\n"}, "break the config")
	failed := push(10, func() { files["README.md"] = "Bye\n" })
	if failed.Status != "failed" || lastCheck(t, app).Conclusion != "failure" {
		t.Errorf("run on a broken configuration: %s, check %+v; want failed and a failure check", failed.Status, lastCheck(t, app))
	}

	posted := map[string]int{}
	for _, c := range app.gh.ReviewComments("acme", "shop", 1) {
		if c.InReplyTo != 0 {
			continue
		}
		for _, title := range []string{"SQL injection", "Division by zero", "Unbounded cache"} {
			if strings.Contains(c.Body, title) {
				posted[title]++
			}
		}
	}
	for _, title := range []string{"SQL injection", "Division by zero", "Unbounded cache"} {
		if posted[title] != 1 {
			t.Errorf("%q posted %d times over 11 reviews, want once", title, posted[title])
		}
	}
	var state string
	if err := db.QueryRow(t.Context(), `SELECT state || '/' || state_by FROM pr_findings
		WHERE repository = 'acme/shop' AND pr_number = 1 AND finding->>'title' = 'Division by zero'`).Scan(&state); err != nil {
		t.Fatal(err)
	}
	if state != "dismissed/alice" {
		t.Errorf("the division's ledger entry: %s, want dismissed/alice", state)
	}
}

// runKind is a run's review kind and why it was full.
func runKind(t *testing.T, db *pgxpool.Pool, id string) (kind, reason string) {
	t.Helper()
	if err := db.QueryRow(t.Context(), `SELECT review_kind, kind_reason FROM review_runs WHERE id = $1`, id).Scan(&kind, &reason); err != nil {
		t.Fatal(err)
	}
	return kind, reason
}

// lastCheck waits until the newest check run is completed and returns it.
func lastCheck(t *testing.T, app *fakeApp) githubtest.CheckRun {
	t.Helper()
	var c githubtest.CheckRun
	waitFor(t, 30*time.Second, "the newest check run completed", func() bool {
		runs := app.gh.CheckRuns("acme", "shop")
		if len(runs) == 0 {
			return false
		}
		c = runs[len(runs)-1]
		return c.Status == "completed"
	})
	return c
}

// threadOf is the review thread whose first comment names title.
func threadOf(app *fakeApp, title string) githubtest.Thread {
	for _, th := range app.gh.Threads("acme", "shop", 1) {
		if strings.Contains(th.Comments[0].Body, title) {
			return th
		}
	}
	return githubtest.Thread{}
}

func reviewStates(rv []githubtest.Review) []string {
	out := make([]string, 0, len(rv))
	for _, r := range rv {
		out = append(out, r.State)
	}
	return out
}
