package web

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/diff"
	"github.com/mergeguard/mergeguard/server/store"
)

// hostileDiff changes a file whose path and code are HTML.
const hostileDiff = `diff --git a/app/<b>x.go b/app/<b>x.go
index 1111111..2222222 100644
--- a/app/<b>x.go
+++ b/app/<b>x.go
@@ -1,9 +1,10 @@ func main() {
 line1
 line2
 line3
 line4
-old5
+new5 <script>alert(1)</script>
+new6
 line6
 line7
 line8
 line9
`

func TestHunkRows(t *testing.T) {
	t.Parallel() // each test has its own database and servers
	d, err := diff.ParseString(hostileDiff)
	if err != nil {
		t.Fatal(err)
	}
	file := d.Files[0]
	tests := []struct {
		name    string
		f       review.Finding
		want    []CodeRow
		section string
	}{
		{"added lines with context", review.Finding{LineStart: 5, LineEnd: 6, Side: review.SideRight}, []CodeRow{
			{Old: 3, New: 3, Kind: "ctx", Text: "line3"},
			{Old: 4, New: 4, Kind: "ctx", Text: "line4"},
			{Old: 5, Kind: "del", Text: "old5"},
			{New: 5, Kind: "add", Text: "new5 <script>alert(1)</script>", Cited: true},
			{New: 6, Kind: "add", Text: "new6", Cited: true},
			{Old: 6, New: 7, Kind: "ctx", Text: "line6"},
			{Old: 7, New: 8, Kind: "ctx", Text: "line7"},
			{Old: 8, New: 9, Kind: "ctx", Text: "line8"},
		}, "func main() {"},
		{"first line, context cut at the hunk's start", review.Finding{LineStart: 1, Side: review.SideRight}, []CodeRow{
			{Old: 1, New: 1, Kind: "ctx", Text: "line1", Cited: true},
			{Old: 2, New: 2, Kind: "ctx", Text: "line2"},
			{Old: 3, New: 3, Kind: "ctx", Text: "line3"},
			{Old: 4, New: 4, Kind: "ctx", Text: "line4"},
		}, "func main() {"},
		{"deleted line on the left", review.Finding{LineStart: 5, Side: review.SideLeft}, []CodeRow{
			{Old: 2, New: 2, Kind: "ctx", Text: "line2"},
			{Old: 3, New: 3, Kind: "ctx", Text: "line3"},
			{Old: 4, New: 4, Kind: "ctx", Text: "line4"},
			{Old: 5, Kind: "del", Text: "old5", Cited: true},
			{New: 5, Kind: "add", Text: "new5 <script>alert(1)</script>"},
			{New: 6, Kind: "add", Text: "new6"},
			{Old: 6, New: 7, Kind: "ctx", Text: "line6"},
		}, "func main() {"},
		{"line outside the diff", review.Finding{LineStart: 40, Side: review.SideRight}, nil, ""},
		{"no line", review.Finding{Side: review.SideRight}, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, section := hunkRows(file, tt.f)
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("rows (-want +got):\n%s", d)
			}
			if section != tt.section {
				t.Errorf("section %q, want %q", section, tt.section)
			}
		})
	}
}

func TestSuggestionRows(t *testing.T) {
	t.Parallel() // each test has its own database and servers
	code := []CodeRow{
		{Old: 4, New: 4, Kind: "ctx", Text: "line4"},
		{New: 5, Kind: "add", Text: "new5", Cited: true},
		{New: 6, Kind: "add", Text: "new6", Cited: true},
	}
	tests := []struct {
		name, suggestion string
		code             []CodeRow
		want             []CodeRow
	}{
		{"replaces the cited lines", "fixed5\r\nfixed6\n", code, []CodeRow{
			{New: 5, Kind: "del", Text: "new5"}, {New: 6, Kind: "del", Text: "new6"}, {Kind: "add", Text: "fixed5"}, {Kind: "add", Text: "fixed6"},
		}},
		{"fence dropped", "```go\nfixed\n```", code, []CodeRow{
			{New: 5, Kind: "del", Text: "new5"}, {New: 6, Kind: "del", Text: "new6"}, {Kind: "add", Text: "fixed"},
		}},
		{"no suggestion", " \n", code, nil},
		{"no cited code", "fixed", code[:1], nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if d := cmp.Diff(tt.want, suggestionRows(tt.code, tt.suggestion)); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func TestFormats(t *testing.T) {
	t.Parallel() // each test has its own database and servers
	for ms, want := range map[int64]string{0: "0.0 s", 4240: "4.2 s", 59_940: "59.9 s", 185_000: "3 min 05 s", 3_720_000: "1 h 02 min"} {
		if got := formatDuration(ms); got != want {
			t.Errorf("formatDuration(%d) = %q, want %q", ms, got, want)
		}
	}
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", -12345: "-12,345"} {
		if got := formatTokens(n); got != want {
			t.Errorf("formatTokens(%d) = %q, want %q", n, got, want)
		}
	}
}

// finish ends run with v, as a worker would.
func finish(t *testing.T, st *store.Store, id string, v review.Verdict) {
	t.Helper()
	ctx := t.Context()
	claimed, err := st.ClaimRun(ctx, "w", time.Minute)
	if err != nil || claimed == nil || claimed.ID != id {
		t.Fatalf("claim: %v %v", claimed, err)
	}
	if err := st.FinishRun(ctx, id, "w", store.Result{Status: store.StatusSucceeded, Verdict: &v}); err != nil {
		t.Fatal(err)
	}
}

// TestReviewPageShowsFindingsInTheirHunk: a diff run's finding is shown in
// its hunk, numbered, the cited lines highlighted, its suggestion as a
// diff; what the change and the model wrote is escaped (html/template
// writes the "+" mark as &#43;).
func TestReviewPageShowsFindingsInTheirHunk(t *testing.T) {
	t.Parallel() // each test has its own database and servers
	srv, st := newServer(t, "")
	text := hostileDiff
	opts, err := json.Marshal(review.Options{Title: "Fix <i>login</i>"})
	if err != nil {
		t.Fatal(err)
	}
	run, err := st.EnqueueRun(t.Context(), store.NewRun{Mode: store.ModeDiff, Trigger: store.TriggerAPI, DiffText: &text, Options: opts})
	if err != nil {
		t.Fatal(err)
	}
	f := review.Finding{FilePath: "app/<b>x.go", LineStart: 5, LineEnd: 6, Side: review.SideRight, Severity: review.SeverityCritical,
		Category: "security", Title: "XSS <img src=x onerror=alert(2)>", Description: "desc", Suggestion: "safe5\n</td><script>alert(3)</script>",
		VerificationStatus: review.Verified, Fingerprint: "fp1"}
	words := review.Finding{FilePath: "app/<b>x.go", LineStart: 1, LineEnd: 1, Side: review.SideRight, Severity: review.SeverityInfo,
		Category: "security", Title: "words", Suggestion: "Rotate <it>.", Agent: review.AnalyzerPrefix + "secrets",
		VerificationStatus: review.Verified, Fingerprint: "fp3"}
	finish(t, st, run.ID, review.Verdict{Verdict: review.DecisionRequestChanges,
		Files: []review.FileReview{{FilePath: f.FilePath, Findings: []review.Finding{f, words}}}, Stats: review.Stats{FindingsTotal: 2, Critical: 1, Info: 1}})

	code, body := get(t, srv.URL+"/reviews/"+run.ID, nil, "")
	if code != http.StatusOK {
		t.Fatalf("status %d", code)
	}
	for _, s := range []string{
		`data-server="1"`,
		`<tr class="ln-add cited"><td class="num"></td><td class="num">5</td><td class="mark">&#43;</td><td class="code">new5 &lt;script&gt;alert(1)&lt;/script&gt;</td></tr>`,
		`<tr class="ln-add cited"><td class="num"></td><td class="num">6</td><td class="mark">&#43;</td><td class="code">new6</td></tr>`,
		`<tr class="ln-del"><td class="num">5</td><td class="num"></td><td class="mark">-</td><td class="code">old5</td></tr>`,
		`<tr class="ln-ctx"><td class="num">8</td><td class="num">9</td><td class="mark"> </td><td class="code">line8</td></tr>`,
		// the suggestion: the cited lines removed, the suggestion added
		`<tr class="ln-del"><td class="num"></td><td class="num">5</td><td class="mark">-</td><td class="code">new5 &lt;script&gt;alert(1)&lt;/script&gt;</td></tr>`,
		`<tr class="ln-add"><td class="num"></td><td class="num"></td><td class="mark">&#43;</td><td class="code">&lt;/td&gt;&lt;script&gt;alert(3)&lt;/script&gt;</td></tr>`,
		`<code>app/&lt;b&gt;x.go:5–6</code>`,
		`XSS &lt;img src=x onerror=alert(2)&gt;`,
		`Fix &lt;i&gt;login&lt;/i&gt;`,
	} {
		if !strings.Contains(body, s) {
			t.Errorf("page lacks %q", s)
		}
	}
	for _, s := range []string{"<script>alert", "<img src=x", "<i>login", "code at the reviewed head", "on GitHub"} {
		if strings.Contains(body, s) {
			t.Errorf("page has %q", s)
		}
	}
	// A built-in analyzer's suggestion is words: shown as text.
	if !strings.Contains(body, `<pre class="suggestion"><code>Rotate &lt;it&gt;.</code></pre>`) {
		t.Error("the analyzer's suggestion is not shown as text")
	}
	// The list names the run by its title.
	if _, list := get(t, srv.URL+"/", nil, ""); !strings.Contains(list, `<a href="/reviews/`+run.ID+`">Fix &lt;i&gt;login&lt;/i&gt;</a>`) {
		t.Errorf("the list does not name the run by its title:\n%s", list)
	}
	// The fragment the live page fetches when the run ends is the same.
	code, frag := get(t, srv.URL+"/reviews/"+run.ID+"/findings", nil, "")
	if code != http.StatusOK || !strings.Contains(frag, `<td class="num">5</td><td class="mark">&#43;</td>`) || strings.Contains(frag, "<script>alert") {
		t.Errorf("findings fragment: %d\n%s", code, frag)
	}
}

// TestReviewPageLinksPRFindingsToGitHub: a pull request run's finding
// shows its snippet as the code at the reviewed head and links its lines
// on GitHub and the pull request's page.
func TestReviewPageLinksPRFindingsToGitHub(t *testing.T) {
	t.Parallel() // each test has its own database and servers
	srv, st := newServerWith(t, Deps{GitHubURL: "https://ghe.example/"})
	run, err := st.EnqueueRun(t.Context(), store.NewRun{Mode: store.ModePR, Trigger: store.TriggerWebhook,
		InstallationID: 1, Repository: "octo/hello", PRNumber: 7, HeadSHA: "0123456789abcdef"})
	if err != nil {
		t.Fatal(err)
	}
	f := review.Finding{FilePath: "src/a b.go", LineStart: 3, LineEnd: 4, Side: review.SideRight, Severity: review.SeverityWarning,
		Category: "bug", VerificationStatus: review.Verified, Title: "t", CodeSnippet: "x := 1\ny := <2>\n", Suggestion: "y := 2", Fingerprint: "fp2",
		Description: "First <b>paragraph</b>, see https://ghe.example/octo/hello/blob/main/x.go.\n\nSecond, not https://evil.example/x."}
	finish(t, st, run.ID, review.Verdict{Verdict: review.DecisionComment,
		Files: []review.FileReview{{FilePath: f.FilePath, Findings: []review.Finding{f}}}})

	code, body := get(t, srv.URL+"/reviews/"+run.ID, nil, "")
	if code != http.StatusOK {
		t.Fatalf("status %d", code)
	}
	for _, s := range []string{
		`href="https://ghe.example/octo/hello/blob/0123456789abcdef/src/a%20b.go#L3-L4"`,
		`href="/repos/octo/hello/pulls/7"`,
		"code at the reviewed head",
		`<tr class="ln-ctx cited"><td class="num"></td><td class="num">4</td><td class="mark"> </td><td class="code">y := &lt;2&gt;</td></tr>`,
		`<tr class="ln-del"><td class="num"></td><td class="num">3</td><td class="mark">-</td><td class="code">x := 1</td></tr>`,
		`<tr class="ln-add"><td class="num"></td><td class="num"></td><td class="mark">&#43;</td><td class="code">y := 2</td></tr>`,
		// The description in paragraphs, escaped, linking into the
		// repository only.
		`<p class="desc">First &lt;b&gt;paragraph&lt;/b&gt;, see <a href="https://ghe.example/octo/hello/blob/main/x.go" rel="nofollow noopener noreferrer">https://ghe.example/octo/hello/blob/main/x.go</a>.</p>`,
		`<p class="desc">Second, not https://evil.example/x.</p>`,
	} {
		if !strings.Contains(body, s) {
			t.Errorf("page lacks %q", s)
		}
	}
}

func TestReviewPagesOfUnknownOrUnfinishedRuns(t *testing.T) {
	t.Parallel() // each test has its own database and servers
	srv, st := newServer(t, "")
	text := hostileDiff
	run, err := st.EnqueueRun(t.Context(), store.NewRun{Mode: store.ModeDiff, Trigger: store.TriggerAPI, DiffText: &text})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path string
		code int
		has  string
	}{
		{"/reviews/not-an-id", http.StatusNotFound, "There is no review with that id."},
		{"/reviews/00000000-0000-0000-0000-000000000000", http.StatusNotFound, "<h1>Not found</h1>"},
		{"/reviews/00000000-0000-0000-0000-000000000000/findings", http.StatusNotFound, "Not found"},
		{"/reviews/" + run.ID, http.StatusOK, `<ul id="findings" class="findings">`},
		{"/reviews/" + run.ID + "/findings", http.StatusNoContent, ""},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			code, body := get(t, srv.URL+tt.path, nil, "")
			if code != tt.code || !strings.Contains(body, tt.has) {
				t.Errorf("%d, want %d with %q:\n%s", code, tt.code, tt.has, body)
			}
		})
	}
}
