package web

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/server/store"
	"github.com/mergeguard/mergeguard/server/store/storetest"
)

// outcomeEntry is a ledger entry of category cat in state (dismissed by a
// command when dismissed), reported by agent.
func outcomeEntry(fp string, cat review.Category, state review.FindingState, agent string) review.LedgerEntry {
	e := ledgerEntry(fp, "a.go", 1, review.SeverityWarning, fp, "h1")
	e.Finding.Category, e.Finding.Agent, e.State = cat, agent, state
	switch state {
	case review.FindingFixed:
		e.FixedSHA, e.LastSeenSHA = "h2", "h2"
	case review.FindingDismissed:
		e.StateHow, e.StateBy = review.DismissedCommand, "alice"
	}
	return e
}

// seedQuality records four closed pull requests in three ISO weeks:
//
//	o/r#1 merged 15 days ago: bug fixed, quality dismissed
//	o/r#2 merged 8 days ago: bug fixed, bug left open, shellcheck's dismissed
//	o/s#3 merged an hour ago: bug fixed, security fixed
//	o/s#4 closed unmerged an hour ago: bug left open (abandoned)
//
// that is 4 of 7 findings addressed (57.1%, 95% interval 25%-84.2%), 3
// merged pull requests each with an addressed finding, each run $0.25.
func seedQuality(t *testing.T, st *store.Store, ids map[string]int64) {
	t.Helper()
	now := time.Now().UTC()
	open, fixed, dismissed := review.FindingOpen, review.FindingFixed, review.FindingDismissed
	bug, quality, security := review.CategoryBug, review.CategoryQuality, review.CategorySecurity
	for _, pr := range []storetest.PR{
		{Repository: "o/r", Number: 1, Merged: true, At: now.Add(-15 * 24 * time.Hour), Ledger: []review.LedgerEntry{
			outcomeEntry("a", bug, fixed, "bugs"), outcomeEntry("b", quality, dismissed, "bugs")}},
		{Repository: "o/r", Number: 2, Merged: true, At: now.Add(-8 * 24 * time.Hour), Ledger: []review.LedgerEntry{
			outcomeEntry("a", bug, fixed, "bugs"), outcomeEntry("b", bug, open, "bugs"), outcomeEntry("c", quality, dismissed, "analyzer:shellcheck")}},
		{Repository: "o/s", Number: 3, Merged: true, At: now.Add(-time.Hour), Ledger: []review.LedgerEntry{
			outcomeEntry("a", bug, fixed, "bugs"), outcomeEntry("b", security, fixed, "bugs")}},
		{Repository: "o/s", Number: 4, At: now.Add(-time.Hour), Ledger: []review.LedgerEntry{outcomeEntry("a", bug, open, "bugs")}},
	} {
		pr.Model, pr.Cost, pr.RepositoryID = "gpt-4o", 0.25, ids[pr.Repository]
		storetest.Closed(t, st, pr)
	}
}

// svgMarks counts, per chart id of the page, its bars' rows or its weeks'
// points.
func svgMarks(page string) map[string]int {
	out := map[string]int{}
	for _, chart := range strings.Split(page, `<figure class="chart`)[1:] {
		id := regexp.MustCompile(`id="([^"]+)"`).FindStringSubmatch(chart)[1]
		out[id] = strings.Count(chart, `<g class="row`) + strings.Count(chart, `<g class="week"`)
	}
	return out
}

// TestQualityPage: the installation-wide and a repository's Quality pages
// show the report counted by hand (seedQuality): the headline figures and
// a chart mark per group; a window that is not one is refused, and the
// navigation links the page.
func TestQualityPage(t *testing.T) {
	t.Parallel() // each test has its own database and servers
	srv, st := newServer(t, "")
	seedQuality(t, st, nil)
	for _, tc := range []struct {
		path  string
		want  []string
		marks map[string]int
	}{
		{
			path: "/quality",
			want: []string{`<span class="big">57.1%</span><span class="what">addressed rate</span><span class="muted">95% interval 25%–84.2% · 4 of 7 findings</span>`,
				`<span class="big">3</span><span class="what">merged pull requests</span><span class="muted">1 closed unmerged · abandoned findings: 1</span>`,
				`<span class="big">2.33</span>`, `<span class="big">$0.2500</span>`, `<span class="big">100%</span><span class="what">of merged`,
				`<span>command 2</span>`, `href="/repos/o/r/quality">o/r</a> <span class="muted">40% of 5</span>`,
				`href="/repos/o/s/quality">o/s</a> <span class="muted">100% of 2</span>`, `<a href="/quality" id="quality-link">Quality</a>`},
			marks: map[string]int{"chart-week": 3, "chart-category": 3, "chart-source": 2, "chart-severity": 1, "chart-repository": 2},
		},
		{
			path:  "/repos/o/s/quality",
			want:  []string{"<h1>Quality of o/s</h1>", `95% interval 34.2%–100% · 2 of 2 findings`},
			marks: map[string]int{"chart-week": 1, "chart-category": 2, "chart-source": 1, "chart-severity": 1},
		},
		{
			path:  "/quality?since=" + time.Now().UTC().Add(-10*24*time.Hour).Format(time.DateOnly),
			want:  []string{`<span class="big">60%</span>`, `95% interval 23.1%–88.2% · 3 of 5 findings`},
			marks: map[string]int{"chart-week": 2, "chart-category": 3, "chart-source": 2, "chart-severity": 1, "chart-repository": 2},
		},
	} {
		code, body := get(t, srv.URL+tc.path, nil, "")
		if code != 200 {
			t.Fatalf("GET %s: %d\n%s", tc.path, code, body)
		}
		for _, w := range tc.want {
			if !strings.Contains(body, w) {
				t.Errorf("GET %s lacks %q", tc.path, w)
			}
		}
		if diff := cmp.Diff(tc.marks, svgMarks(body)); diff != "" {
			t.Errorf("GET %s: marks per chart (-want +got):\n%s", tc.path, diff)
		}
	}
	for path, want := range map[string]int{"/quality?since=yesterday": 400, "/quality?since=2000-01-01": 400, "/repos/o/nope/quality": 200} {
		if code, body := get(t, srv.URL+path, nil, ""); code != want {
			t.Errorf("GET %s: %d, want %d\n%s", path, code, want, body)
		}
	}
}

// TestQualityPageEmpty: with no closed pull request the page says so and
// draws no chart; with merged ones but no finding, it shows the figures
// and no chart.
func TestQualityPageEmpty(t *testing.T) {
	t.Parallel() // each test has its own database and servers
	srv, st := newServer(t, "")
	code, body := get(t, srv.URL+"/quality", nil, "")
	if code != 200 || !strings.Contains(body, `id="quality-empty">No closed pull requests yet since`) || strings.Contains(body, "<svg") {
		t.Errorf("GET /quality with nothing closed: %d\n%s", code, body)
	}
	storetest.Closed(t, st, storetest.PR{Repository: "o/r", Number: 1, Merged: true, At: time.Now().Add(-time.Hour)})
	code, body = get(t, srv.URL+"/quality", nil, "")
	if code != 200 || !strings.Contains(body, `id="quality-no-findings"`) || !strings.Contains(body, `<span class="big">0%</span>`) || strings.Contains(body, "<svg") {
		t.Errorf("GET /quality with a merged pull request and no finding: %d\n%s", code, body)
	}
}

// TestQualityPageArms: with two experiment arms in the window, the page
// draws their addressed rates and lists each arm's pull requests, rate,
// interval, findings and cost per pull request and median run; with one
// arm it shows neither.
func TestQualityPageArms(t *testing.T) {
	t.Parallel() // each test has its own database and servers
	srv, st := newServer(t, "")
	at := time.Now().Add(-time.Hour)
	for i := range 4 {
		pr := storetest.PR{Repository: "o/r", Number: i + 1, Model: "gpt-4o", Cost: 0.02, Merged: true, At: at, Took: 20 * time.Second,
			Ledger: []review.LedgerEntry{outcomeEntry("a", review.CategoryBug, review.FindingOpen, "bugs")}}
		if i%2 == 1 {
			pr.Arm, pr.Model, pr.Cost, pr.Took = "qwen", "qwen2.5-coder", 0.01, 40*time.Second
			pr.Ledger = []review.LedgerEntry{outcomeEntry("a", review.CategoryBug, review.FindingFixed, "bugs")}
		}
		storetest.Closed(t, st, pr)
		if i == 0 {
			if _, body := get(t, srv.URL+"/quality", nil, ""); strings.Contains(body, "chart-arm") || strings.Contains(body, "quality-arms") {
				t.Errorf("with one arm, the page compares arms")
			}
		}
	}
	_, body := get(t, srv.URL+"/quality", nil, "")
	if n := svgMarks(body)["chart-arm"]; n != 2 {
		t.Errorf("the arm chart has %d rows, want 2", n)
	}
	for _, want := range []string{
		`<tr data-arm="default"><td>default</td><td>2</td><td>0% <span class="muted">(0 of 2)</span></td><td>0%–65.8%</td><td>1.00</td><td>$0.0200</td><td>20.00 s</td></tr>`,
		`<tr data-arm="qwen"><td>qwen</td><td>2</td><td>100% <span class="muted">(2 of 2)</span></td><td>34.2%–100%</td><td>1.00</td><td>$0.0100</td><td>40.00 s</td></tr>`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("GET /quality lacks the arm row %s", want)
		}
	}
}

// TestQualityPageBoundsSources: 13 sources, one of them a hostile model
// name, draw 10 rows (the last "other (4)") and the name escaped.
func TestQualityPageBoundsSources(t *testing.T) {
	t.Parallel() // each test has its own database and servers
	srv, st := newServer(t, "")
	hostile := `<img src=x onerror=alert(1)>`
	for i := range 13 {
		model := fmt.Sprint("model-", i)
		if i == 0 {
			model = hostile
		}
		storetest.Closed(t, st, storetest.PR{Repository: "o/r", Number: i + 1, Model: model, Merged: true, At: time.Now().Add(-time.Hour),
			Ledger: []review.LedgerEntry{outcomeEntry("a", review.CategoryBug, review.FindingFixed, "bugs")}})
	}
	_, body := get(t, srv.URL+"/quality", nil, "")
	if n := svgMarks(body)["chart-source"]; n != MaxBars || !strings.Contains(body, ">other (4)</text>") {
		t.Errorf("the source chart has %d rows, want %d ending on other (4)", n, MaxBars)
	}
	if strings.Contains(body, hostile) || !strings.Contains(body, "&lt;img src=x onerror=alert(1)&gt;") {
		t.Errorf("the hostile model name is not escaped")
	}
}

// TestQualityPageVisibility: a person signed in with GitHub sees the
// report of the repositories GitHub lets them read, nothing of the others:
// installation-wide (acme/secret's findings are not counted) and per
// repository (404). Of a window with more than maxQualityRepos
// repositories, the page asks about the first by name and says how many
// it left out.
func TestQualityPageVisibility(t *testing.T) {
	t.Parallel() // each test has its own database and servers
	srv, gh, st, _ := gitHubUIStore(t)
	for { // the queued runs of gitHubUIStore: storetest.Reviewed claims its own next
		run, err := st.ClaimRun(t.Context(), "other", time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if run == nil {
			break
		}
	}
	at := time.Now().Add(-time.Hour)
	for i, repo := range []string{"acme/widgets", "acme/secret"} {
		owner, name, _ := strings.Cut(repo, "/")
		state := review.FindingFixed
		if repo == "acme/secret" {
			state = review.FindingOpen
		}
		storetest.Closed(t, st, storetest.PR{Repository: repo, RepositoryID: gh.RepoID(owner, name), Number: 10 + i, Model: "gpt-4o",
			Merged: true, At: at, Ledger: []review.LedgerEntry{outcomeEntry("a", review.CategoryBug, state, "bugs")}})
	}
	for i := range maxQualityRepos + 1 { // closings of repositories without runs, named after acme/*
		d := store.Delivery{ID: fmt.Sprint("zz-", i), Event: "pull_request", Action: "closed", InstallationID: 1, Repository: fmt.Sprintf("zz/r%03d", i)}
		if _, err := st.ClosePullRequest(t.Context(), d, store.Closing{Number: 1, Merged: true, At: at}); err != nil {
			t.Fatal(err)
		}
	}
	b := newBrowser(t, srv)
	b.signInWithGitHub("/")
	res, body := b.do("GET", "/quality", nil, nil)
	if !strings.Contains(body, `id="quality-hidden">3 repositories are left out of this page (it asks GitHub about the first 200 of the window)`) {
		t.Errorf("GET /quality as mona does not say 3 repositories were left out:\n%s", body)
	}
	if res.StatusCode != 200 || !strings.Contains(body, `95% interval 20.7%–100% · 1 of 1 findings`) ||
		!strings.Contains(body, `href="/repos/acme/widgets/quality"`) || strings.Contains(body, "acme/secret") || strings.Contains(body, "zz/r") {
		t.Errorf("GET /quality as mona: %d, want acme/widgets's report alone:\n%s", res.StatusCode, body)
	}
	for path, want := range map[string]int{"/repos/acme/widgets/quality": 200, "/repos/acme/secret/quality": 404} {
		if res, _ := b.do("GET", path, nil, nil); res.StatusCode != want {
			t.Errorf("GET %s as mona: %d, want %d", path, res.StatusCode, want)
		}
	}
}
