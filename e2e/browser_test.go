package e2e

import (
	"context"
	"flag"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"

	"github.com/mergeguard/mergeguard/review/llm/llmtest"
	"github.com/mergeguard/mergeguard/server/store/storetest"
)

var update = flag.Bool("update", false, "rewrite the screenshots in docs/")

// Bounds of the test's steps.
const (
	browserTimeout = 60 * time.Second
	modelLatency   = 1500 * time.Millisecond
)

// chromePath finds the Chromium that scripts/ensure-chromium.sh installs:
// $CHROME_PATH, else /usr/bin/chromium. It skips the test only when
// MERGEGUARD_SKIP_BROWSER=1.
func chromePath(t *testing.T) string {
	t.Helper()
	if os.Getenv("MERGEGUARD_SKIP_BROWSER") == "1" {
		t.Skip("MERGEGUARD_SKIP_BROWSER=1")
	}
	p := os.Getenv("CHROME_PATH")
	if p == "" {
		p = "/usr/bin/chromium"
	}
	if fi, err := os.Stat(p); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
		t.Fatalf("no Chromium at %s: run `bash scripts/ensure-chromium.sh` (or set CHROME_PATH; "+
			"MERGEGUARD_SKIP_BROWSER=1 skips the browser tests)", p)
	}
	return p
}

// startServer builds cmd/mergeguard and runs `mergeguard serve` against a
// fresh database, without a GitHub App, with the LLM at llmURL, and waits
// until it is ready.
func startServer(t *testing.T, llmURL string) *replica {
	t.Helper()
	r := startReplica(t, buildBinary(t), "serve", storetest.URL(t), serveOptions{env: map[string]string{
		"OPENAI_BASE_URL":  llmURL,
		"OPENAI_API_KEY":   "test",
		"MERGEGUARD_MODEL": "gpt-4o-mini",
	}})
	r.waitReady(t)
	return r
}

// signIn opens the sign-in link with token, as an operator opens the one
// serve logs, and confirms it; the browser lands on next.
func (b *browser) signIn(t *testing.T, base, token, next string) {
	t.Helper()
	b.do(t, "open the sign-in link",
		chromedp.Navigate(base+"/signin?token="+url.QueryEscape(token)+"&next="+url.QueryEscape(next)),
		chromedp.WaitVisible(chromedp.ID("signin-link-submit")),
		chromedp.Click(chromedp.ID("signin-link-submit")))
	// Signed in, the browser is sent to next (a page that may have no
	// header, such as /setup).
	var loc string
	for deadline := time.Now().Add(30 * time.Second); loc != base+next; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("signing in did not lead to %s (at %s; page errors %q)", next, loc, b.pageErrors())
		}
		if l, err := chromedp.Run(b.ctx, chromedp.Location()); err == nil {
			loc = l
		}
	}
}

// browser is a headless Chromium tab whose JavaScript errors are recorded.
type browser struct {
	ctx context.Context

	mu     sync.Mutex
	errors []string
	live   bool // the test still runs: chromedp's errors may be logged
}

// logf returns chromedp's error logger: the test's log while it runs.
func (b *browser) logf(t *testing.T) func(string, ...any) {
	return func(format string, args ...any) {
		b.mu.Lock()
		defer b.mu.Unlock()
		if b.live {
			t.Logf("chromedp: "+format, args...)
		}
	}
}

func (b *browser) stopLogging() {
	b.mu.Lock()
	b.live = false
	b.mu.Unlock()
}

// stageWatch records the review page's stage list after every change the
// page could paint: one line per change, "planner=done reviewer=active ...",
// and the run's status badge likewise (window.__status). It is installed
// before the page's own script runs.
const stageWatch = `(function () {
  window.__stages = [];
  window.__status = [];
  function snap() {
    var b = document.getElementById("run-status");
    if (b && window.__status[window.__status.length - 1] !== b.textContent) window.__status.push(b.textContent);
    var s = Array.prototype.map.call(document.querySelectorAll(".stage"), function (e) {
      var st = ["active", "done", "failed"].filter(function (c) { return e.classList.contains(c); });
      return e.dataset.stage + "=" + (st.join("+") || "idle");
    }).join(" ");
    if (s && window.__stages[window.__stages.length - 1] !== s) window.__stages.push(s);
  }
  new MutationObserver(snap).observe(document, { subtree: true, childList: true, attributes: true, attributeFilter: ["class"] });
})();`

func newBrowser(t *testing.T, chrome string) *browser {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chrome),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelAlloc)
	b := &browser{live: true}
	ctx, cancel := chromedp.NewContext(actx, chromedp.WithErrorf(b.logf(t)))
	t.Cleanup(cancel)
	t.Cleanup(b.stopLogging) // runs first: chromedp may log while it shuts down
	// The first Run starts the browser; it must not carry the timeout.
	if err := chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		if _, err := cdp.Call(ctx, tg, cdplog.Enable, cdp.Empty{}); err != nil {
			return err
		}
		_, err := cdp.Call(ctx, tg, page.AddScriptToEvaluateOnNewDocument,
			page.AddScriptToEvaluateOnNewDocumentParams{Source: stageWatch})
		return err
	})); err != nil {
		t.Fatalf("start Chromium: %v", err)
	}
	if err := chromedp.Listen(ctx, b.record); err != nil {
		t.Fatal(err)
	}
	tctx, tcancel := context.WithTimeout(ctx, browserTimeout)
	t.Cleanup(tcancel)
	b.ctx = tctx
	return b
}

// record keeps the page's JavaScript exceptions, console errors and error
// log entries (CSP violations, failed requests).
func (b *browser) record(ev any) {
	var msg string
	switch e := ev.(type) {
	case *runtime.EventExceptionThrown:
		msg = "exception: " + (&chromedp.ExceptionError{ExceptionDetails: e.ExceptionDetails}).Error()
	case *runtime.EventConsoleAPICalled:
		if e.Type != runtime.ConsoleAPICalledTypeError {
			return
		}
		var parts []string
		for _, a := range e.Args {
			parts = append(parts, string(a.Value)+a.Description)
		}
		msg = "console.error: " + strings.Join(parts, " ")
	case *cdplog.EventEntryAdded:
		if e.Entry.Level != cdplog.EntryLevelError {
			return
		}
		msg = "log: " + e.Entry.Text + " " + e.Entry.URL
	default:
		return
	}
	b.mu.Lock()
	b.errors = append(b.errors, msg)
	b.mu.Unlock()
}

func (b *browser) pageErrors() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.errors)
}

func (b *browser) do(t *testing.T, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(b.ctx, steps...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func eval[T any](t *testing.T, b *browser, js string) T {
	t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("evaluate %q: %v", js, err)
	}
	return v
}

// docShot reports whether a screenshot is kept in docs/.
func docShot(name string) bool {
	return slices.Contains([]string{"new-review.png", "review-page-live.png", "review-page.png",
		"review-page-mobile.png", "review-list.png", "setup-form.png", "quality.png"}, name)
}

// screenshot saves a full-page PNG as name in the test's artifacts (go test
// -artifacts keeps them), and with -update in docs/ when it is a docShot.
func (b *browser) screenshot(t *testing.T, name string) {
	t.Helper()
	png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	dirs := []string{t.ArtifactDir()}
	if *update && docShot(name) {
		dirs = append(dirs, filepath.Join("..", "docs"))
	}
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, name), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// model is the fake LLM's script: the reviewer reads the file through a
// tool, then reports one finding.
func model(r llmtest.Request) llmtest.Response {
	if strings.HasPrefix(r.Messages[0].Content, "You write the walkthrough of a pull request") {
		return llmtest.JSON(map[string]any{"summary": "Adds a user lookup by name.", "files": []any{
			map[string]any{"file_path": "store/users.go", "group": "Storage", "line": "looks a user up by name"}}}).WithUsage(300, 40)
	}
	if len(r.ToolResults()) == 0 && r.HasTool("read_file_part") {
		return llmtest.ToolCalls(llmtest.Call("call_1", "read_file_part",
			map[string]any{"file_path": "store/users.go", "start_line": 1, "end_line": 10})).WithUsage(1200, 40)
	}
	return llmtest.JSON(map[string]any{
		"findings": []map[string]any{{
			"file_path": "store/users.go", "line_start": 8, "line_end": 8, "side": "RIGHT",
			"severity": "warning", "category": "security",
			"title":        "Query built by string concatenation",
			"description":  "name is concatenated into the SQL text, so a crafted name can change the query (SQL injection).",
			"suggestion":   "err := db.QueryRow(\"SELECT id FROM users WHERE name = $1\", name).Scan(&id)",
			"code_snippet": "err := db.QueryRow(\"SELECT id FROM users WHERE name = '\" + name + \"'\").Scan(&id)",
			"confidence":   0.9,
		}},
		"positive_notes": []any{},
	}).WithUsage(1500, 120)
}

// finding is a finding as the review page shows it.
type finding struct {
	Location string `json:"location"`
	Severity string `json:"severity"`
	Status   string `json:"status"`
	Title    string `json:"title"`
}

const readFindings = `Array.from(document.querySelectorAll("#findings li.finding")).map(function (li) {
  return {
    location: li.querySelector(".loc code").textContent,
    severity: li.querySelector(".badge").textContent,
    status: li.querySelector(".vstatus").textContent,
    title: li.querySelector(".title").textContent,
  };
})`

// readHunk reads the cited rows of the SQL finding's hunk and the rows of
// its suggestion as "cited NEW MARK TEXT" and "suggestion MARK TEXT".
const readHunk = `(function () {
  const li = Array.from(document.querySelectorAll("#findings li.finding")).find(function (l) { return l.querySelector(".loc code").textContent === "store/users.go:8"; });
  if (!li) return [];
  const row = function (tr) { return tr.querySelector(".mark").textContent + " " + tr.querySelector(".code").textContent; };
  return Array.from(li.querySelectorAll(".hunk-wrap:not(.suggestion-diff) tr.cited")).map(function (tr) { return "cited " + tr.querySelectorAll(".num")[1].textContent + " " + row(tr); })
    .concat(Array.from(li.querySelectorAll(".suggestion-diff tr")).map(function (tr) { return "suggestion " + row(tr); }));
})()`

// TestReviewInBrowser submits a diff through the form, watches the review
// page follow the pipeline live to its verdict, and checks the list page,
// as a person would in Chromium.
func TestReviewInBrowser(t *testing.T) {
	t.Parallel()
	chrome := chromePath(t)
	diffText, err := os.ReadFile(filepath.Join("testdata", "review.diff"))
	if err != nil {
		t.Fatal(err)
	}
	llm := llmtest.New(t, model, llmtest.WithLatency(modelLatency))
	srv := startServer(t, llm.URL())
	b := newBrowser(t, chrome)
	b.signIn(t, srv.url, e2eToken, "/new")

	// The form.
	b.do(t, "open the form",
		chromedp.Navigate(srv.url+"/new"),
		chromedp.WaitVisible(chromedp.ID("diff_text")))
	checkNav(t, b)
	wantOrder := []string{"Title (optional, names a diff review)", "title", "Unified diff", "diff_text"}
	if diff := cmp.Diff(wantOrder, eval[[]string](t, b, formOrder)); diff != "" {
		t.Errorf("the form's first labels and fields: the title's, then the diff's heading over its textarea (-want +got):\n%s", diff)
	}
	if got := eval[string](t, b, `document.querySelector("#focus-areas legend").textContent`); got != "Focus on" {
		t.Errorf("the focus checkboxes are labelled %q, want \"Focus on\"", got)
	}
	b.screenshot(t, "new-review.png")
	b.do(t, "submit the diff",
		chromedp.SetValue(chromedp.ID("title"), "Add the user lookup"),
		chromedp.SetValue(chromedp.ID("diff_text"), string(diffText)),
		chromedp.Click(chromedp.ID("submit-review")),
		chromedp.WaitVisible(chromedp.ID("stages")))
	loc, err := chromedp.Run(b.ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	id, ok := strings.CutPrefix(loc, srv.url+"/reviews/")
	if !ok || id == "" {
		t.Fatalf("after submitting, the browser is at %s, want %s/reviews/{id}", loc, srv.url)
	}

	// The review page follows the pipeline live: the reviewer waits for the
	// model while the activity log fills.
	if _, err := chromedp.Run(b.ctx, chromedp.Poll[bool](
		`document.querySelector('.stage.active[data-stage="reviewer"]') !== null && document.querySelectorAll("#activity li").length >= 4`,
		chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(30*time.Second))); err != nil {
		status := eval[string](t, b, `document.getElementById("run-status").textContent`)
		t.Fatalf("the reviewer stage was never shown at work (run status %q; a queued run means serve runs no worker): %v", status, err)
	}
	b.screenshot(t, "review-page-live.png")

	// Then it shows the verdict.
	if _, err := chromedp.Run(b.ctx, chromedp.Poll[bool](`!document.getElementById("verdict").hidden`,
		chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(45*time.Second))); err != nil {
		status := eval[string](t, b, `document.getElementById("run-status").textContent`)
		t.Fatalf("no verdict shown (run status %q): %v", status, err)
	}
	if got := eval[string](t, b, `document.getElementById("verdict-value").textContent`); got != "request_changes" {
		t.Errorf("verdict = %q, want request_changes", got)
	}
	checkStages(t, eval[[]string](t, b, `window.__stages`))
	// The server's rendering of the findings in their code replaces the
	// live list.
	if _, err := chromedp.Run(b.ctx, chromedp.Poll[bool](`document.getElementById("findings-box").dataset.server === "1"`,
		chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(10*time.Second))); err != nil {
		t.Fatalf("the findings were not shown in their code: %v", err)
	}

	got := eval[[]finding](t, b, readFindings)
	want := []finding{
		{Location: "config/aws.go:5", Severity: "critical", Status: "verified", Title: "Possible secret committed (aws-access-token)"},
		{Location: "main.go:6–10", Severity: "critical", Status: "verified", Title: "Unresolved merge conflict"},
		{Location: "store/users.go:8", Severity: "warning", Status: "verified", Title: "Query built by string concatenation"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("findings shown (-want +got):\n%s", diff)
	}
	// The model's finding in its hunk: the cited line highlighted with its
	// new number, the suggestion as a diff against it.
	hunk := eval[[]string](t, b, readHunk)
	wantHunk := []string{
		"cited 8 + \terr := db.QueryRow(\"SELECT id FROM users WHERE name = '\" + name + \"'\").Scan(&id)",
		"suggestion - \terr := db.QueryRow(\"SELECT id FROM users WHERE name = '\" + name + \"'\").Scan(&id)",
		"suggestion + err := db.QueryRow(\"SELECT id FROM users WHERE name = $1\", name).Scan(&id)",
	}
	if diff := cmp.Diff(wantHunk, hunk); diff != "" {
		t.Errorf("the SQL finding's hunk (-want +got):\n%s", diff)
	}
	b.screenshot(t, "review-page.png")

	// A phone shows the same page.
	b.atPhoneWidth(t, "verdict", "review page")
	checkRenderedFinished(t, eval[[]string](t, b, `window.__status`), eval[[]string](t, b, `window.__stages`))
	b.screenshot(t, "review-page-mobile.png")
	b.do(t, "back to desktop width", chromedp.EmulateViewport(1280, 900))

	// The list page shows the finished review.
	b.do(t, "open the list",
		chromedp.Navigate(srv.url+"/"),
		chromedp.WaitVisible(chromedp.CSS(`a[href="/reviews/`+id+`"]`)))
	row := eval[string](t, b, `document.querySelector('a[href="/reviews/`+id+`"]').closest("tr").innerText`)
	for _, s := range []string{"Add the user lookup", "succeeded", "request_changes"} {
		if !strings.Contains(row, s) {
			t.Errorf("list row %q lacks %q", row, s)
		}
	}
	b.screenshot(t, "review-list.png")

	// The list and the form fit a phone.
	for _, path := range []string{"/", "/new"} {
		b.do(t, "open "+path+" at phone width",
			chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2), chromedp.EmulateMobile),
			chromedp.Navigate(srv.url+path),
			chromedp.WaitVisible(chromedp.CSS("main h1")))
		if overflow := eval[int](t, b, `document.documentElement.scrollWidth - window.innerWidth`); overflow > 0 {
			t.Errorf("at 390px %s scrolls sideways by %dpx", path, overflow)
		}
		if path == "/" {
			if d := eval[string](t, b, `getComputedStyle(document.querySelector("table.runs tbody tr")).display`); d != "block" {
				t.Errorf("at 390px a run of the list is displayed %q, want a card (block)", d)
			}
			b.screenshot(t, "review-list-mobile.png")
		}
	}
	b.screenshot(t, "new-review-mobile.png")

	if errs := b.pageErrors(); len(errs) > 0 {
		t.Errorf("the pages reported errors:\n%s", strings.Join(errs, "\n"))
	}
	if llm.Calls() != 3 {
		t.Errorf("model called %d times, want 3 (a tool call, the findings, the walkthrough)", llm.Calls())
	}
}

// formOrder lists the new-review form's first four labels and fields in
// page order: a label's text, a field's id.
const formOrder = `Array.prototype.map.call(document.querySelectorAll("#new-review > label, #new-review > input, #new-review > textarea"),
  function (e) { return e.tagName === "LABEL" ? e.textContent.replace(/\s+/g, " ").trim() : e.id; }).slice(0, 4)`

// checkNav checks the header's navigation of an admin: the same links on
// every page, Setup among them.
func checkNav(t *testing.T, b *browser) {
	t.Helper()
	got := eval[[]string](t, b, `Array.prototype.map.call(document.querySelectorAll("header.top nav a"), function (a) { return a.textContent + " " + a.getAttribute("href"); })`)
	want := []string{"Reviews /", "Quality /quality", "New review /new", "Setup /setup", "Operator /operator"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("navigation (-want +got):\n%s", diff)
	}
}

// checkRenderedFinished checks a finished review's page as it was painted
// from its load, while the stream replayed the run's events: the badge
// never said anything but succeeded, and every stage was done throughout.
func checkRenderedFinished(t *testing.T, status, stages []string) {
	t.Helper()
	if diff := cmp.Diff([]string{"succeeded"}, status); diff != "" {
		t.Errorf("the finished run's status badge changed while the page loaded (-want +got):\n%s", diff)
	}
	for _, s := range stages {
		if s != "planner=done reviewer=done verifier=done reporter=done" {
			t.Errorf("the finished run's stages were painted %q, want every stage done throughout", s)
		}
	}
}

// checkStages checks the stage list as it was painted: never more than one
// stage active, stages becoming active in pipeline order (the reviewer,
// slowed by the model, seen for sure), and all done at the end.
func checkStages(t *testing.T, snaps []string) {
	t.Helper()
	order := []string{"planner", "reviewer", "verifier", "reporter"}
	var active []string
	for _, s := range snaps {
		var now []string
		for _, f := range strings.Fields(s) {
			if name, st, _ := strings.Cut(f, "="); st == "active" {
				now = append(now, name)
			}
		}
		if len(now) > 1 {
			t.Errorf("stages %v active at once in %q", now, s)
		}
		if len(now) == 1 && (len(active) == 0 || active[len(active)-1] != now[0]) {
			active = append(active, now[0])
		}
	}
	last := -1
	for _, a := range active {
		i := slices.Index(order, a)
		if i <= last {
			t.Errorf("active stage went %v, want pipeline order %v", active, order)
			break
		}
		last = i
	}
	if !slices.Contains(active, "reviewer") {
		t.Errorf("reviewer never shown active (active stages seen: %v)", active)
	}
	want := "planner=done reviewer=done verifier=done reporter=done"
	if len(snaps) == 0 || snaps[len(snaps)-1] != want {
		t.Errorf("final stages %v, want %q", snaps, want)
	}
	if t.Failed() {
		t.Logf("stage snapshots:\n%s", strings.Join(snaps, "\n"))
	}
}

// atPhoneWidth reloads the page at a phone's width (390 px), waits for
// the element with id, and fails the test when the page scrolls sideways.
func (b *browser) atPhoneWidth(t *testing.T, id, page string) {
	t.Helper()
	b.do(t, "reload at phone width",
		chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2), chromedp.EmulateMobile),
		chromedp.Reload(),
		chromedp.WaitVisible(chromedp.ID(id)))
	if overflow := eval[int](t, b, `document.documentElement.scrollWidth - window.innerWidth`); overflow > 0 {
		t.Errorf("at 390px the %s scrolls sideways by %dpx", page, overflow)
	}
}
