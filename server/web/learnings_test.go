package web

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/server/access"
	"github.com/mergeguard/mergeguard/server/api"
	"github.com/mergeguard/mergeguard/server/store"
	"github.com/mergeguard/mergeguard/server/store/storetest"
)

func addLearning(t *testing.T, st *store.Store, l review.Learning) review.Learning {
	t.Helper()
	l, err := st.AddLearning(t.Context(), l)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestLearningsPage: each learning with its provenance and its forms,
// what people wrote escaped; the pull request page links the page.
func TestLearningsPage(t *testing.T) {
	t.Parallel() // each test has its own database and servers
	srv, st := newServerWith(t, Deps{GitHubURL: "https://ghe.example.com/"})
	hostile := addLearning(t, st, review.Learning{Repository: "o/r", Instruction: `<script>alert("x")</script> is fine`,
		Path: `a/<b>/*`, Status: review.LearningProposed, PRNumber: 7, ThreadCommentID: 501, Fingerprint: "fp-a", Author: "<alice>"})
	plain := addLearning(t, st, review.Learning{Repository: "o/r", Instruction: "panics are fine in cmd/",
		Status: review.LearningActive, Author: "api"})
	addLearning(t, st, review.Learning{Repository: "o/other", Instruction: "not this repository's", Status: review.LearningActive, Author: "api"})
	finishPRRun(t, st, 7, "h1", store.Result{Status: store.StatusSucceeded})

	code, body := get(t, srv.URL+"/repos/O/R/learnings", nil, "")
	if code != 200 {
		t.Fatalf("status %d, want 200:\n%s", code, body)
	}
	hid, pid := strconv.FormatInt(hostile.ID, 10), strconv.FormatInt(plain.ID, 10)
	for _, s := range []string{
		`<h1>Learnings of O/R</h1>`,
		`<span class="lstatus lstatus-active">active</span> 1`,
		`<span class="lstatus lstatus-proposed">proposed</span> 1`,
		`<span class="lstatus lstatus-inactive">inactive</span> 0`,
		`<p class="instruction">&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; is fine</p>`,
		`<code>a/&lt;b&gt;/*</code>`,
		`by &lt;alice&gt; on <a href="/repos/o/r/pulls/7">pull request #7</a> (<a href="https://ghe.example.com/o/r/pull/7#discussion_r501">thread on GitHub</a>)`,
		`<form class="learning-form" method="post" data-learning="/api/repos/O/R/learnings/` + hid + `">`,
		`<textarea name="instruction" rows="3" maxlength="500" required>&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; is fine</textarea>`,
		`<input name="path" value="a/&lt;b&gt;/*"`,
		`<button type="submit" name="action" value="activate">Activate</button>`,
		`data-learning="/api/repos/O/R/learnings/` + pid + `"`,
		`<span class="muted">all files</span>`,
		`<button type="submit" name="action" value="deactivate">Deactivate</button>`,
		`<button type="submit" name="action" value="delete" class="danger">Delete</button>`,
	} {
		if !strings.Contains(body, s) {
			t.Errorf("page lacks %q", s)
		}
	}
	for _, s := range []string{"<script>alert", "a/<b>", "<alice>", "not this repository's"} {
		if strings.Contains(body, s) {
			t.Errorf("page holds %q", s)
		}
	}
	if _, pull := get(t, srv.URL+"/repos/o/r/pulls/7", nil, ""); !strings.Contains(pull, `<a href="/repos/o/r/learnings">Learnings of o/r</a>`) {
		t.Errorf("the pull request page does not link the learnings page:\n%s", pull)
	}
	if _, js := get(t, srv.URL+"/static/app.js", nil, ""); !strings.Contains(js, `form[data-learning]`) {
		t.Error("app.js does not handle the learnings forms")
	}

	for path, want := range map[string]string{
		"/repos/o/empty/learnings":                            "No learnings yet.",
		"/repos/o/%3Cscript%3E/learnings":                     "&#34;&lt;script&gt;&#34; is not a GitHub repository name",
		"/repos/o%20x/r/learnings":                            "&#34;o x&#34; is not a GitHub owner",
		"/repos/" + strings.Repeat("o", 101) + "/r/learnings": "is not a GitHub owner",
	} {
		code, body := get(t, srv.URL+path, nil, "")
		if wantCode := map[bool]int{true: 200, false: 404}[want == "No learnings yet."]; code != wantCode || !strings.Contains(body, want) {
			t.Errorf("%s: %d, want %d saying %q:\n%s", path, code, wantCode, want, body)
		}
	}
}

// TestLearningsPageNeedsToken: the page is behind the UI's guard.
func TestLearningsPageNeedsToken(t *testing.T) {
	t.Parallel() // each test has its own database and servers
	srv, st := newServer(t, "s3cret")
	if code, _ := get(t, srv.URL+"/repos/o/r/learnings", nil, ""); code != http.StatusUnauthorized {
		t.Errorf("without the token: %d, want 401", code)
	}
	if code, _ := get(t, srv.URL+"/repos/o/r/learnings", nil, tokenSession(t, st, "s3cret")); code != http.StatusOK {
		t.Errorf("with a token session: %d, want 200", code)
	}
}

// TestLearningsPageCSRF replays what the page's forms send and what a
// browser can be made to send without the page: with the UI and the API on
// one server, a change needs the CSRF token the page carries.
func TestLearningsPageCSRF(t *testing.T) {
	t.Parallel() // each test has its own database and servers
	st := storetest.New(t)
	l := addLearning(t, st, review.Learning{Repository: "o/r", Instruction: "x", Status: review.LearningProposed, Author: "a"})
	policy := access.Policy{Token: "s3cret"}.WithSessions(access.NewSessions("s3cret", "s3cret", st))
	ui, err := New(Deps{Runs: st, Logger: zerolog.Nop(), Access: policy})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	ui.Register(mux)
	api.New(api.Deps{Config: config.Default().API, Store: st, Logger: zerolog.Nop(), Access: policy}).Register(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	// The browser is signed in: its session cookie goes with every
	// request, the forged ones too.
	session := &http.Cookie{Name: access.SessionCookie, Value: tokenSession(t, st, "s3cret")}

	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+"/repos/o/r/learnings", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.AddCookie(session)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	page, err := io.ReadAll(res.Body)
	if err := errors.Join(err, res.Body.Close()); err != nil {
		t.Fatal(err)
	}
	var cookie *http.Cookie
	for _, c := range res.Cookies() {
		if c.Name == access.CSRFCookie {
			cookie = c
		}
	}
	meta := regexp.MustCompile(`<meta name="csrf-token" content="([0-9a-f]{64})">`).FindSubmatch(page)
	action := regexp.MustCompile(`data-learning="([^"]+)"`).FindSubmatch(page)
	if cookie == nil || meta == nil || action == nil {
		t.Fatalf("the page lacks its CSRF cookie, token or form:\n%s", page)
	}
	origin := map[string]string{"Origin": srv.URL, "Sec-Fetch-Site": "same-origin"}
	tests := []struct {
		name, method, token string
		header              map[string]string
		code                int
		want                review.LearningStatus // "" for deleted
	}{
		{"another site", "PATCH", string(meta[1]), map[string]string{"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"}, 403, review.LearningProposed},
		{"no CSRF token", "PATCH", "", origin, 403, review.LearningProposed},
		{"a wrong CSRF token", "PATCH", strings.Repeat("0", 64), origin, 403, review.LearningProposed},
		{"delete without the token", "DELETE", "", origin, 403, review.LearningProposed},
		{"the page's activation", "PATCH", string(meta[1]), origin, 200, review.LearningActive},
		{"the page's delete", "DELETE", string(meta[1]), origin, 204, ""},
	}
	for _, tt := range tests {
		body := ""
		if tt.method == "PATCH" {
			body = `{"status": "active"}`
		}
		req, err := http.NewRequestWithContext(t.Context(), tt.method, srv.URL+string(action[1]), strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		for k, v := range tt.header {
			req.Header.Set(k, v)
		}
		if tt.token != "" {
			req.Header.Set(access.CSRFHeader, tt.token)
		}
		req.AddCookie(cookie)
		req.AddCookie(session)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if err := res.Body.Close(); err != nil {
			t.Fatal(err)
		}
		if res.StatusCode != tt.code {
			t.Errorf("%s: %d, want %d", tt.name, res.StatusCode, tt.code)
		}
		got, err := st.Learning(t.Context(), "o/r", l.ID)
		switch {
		case tt.want == "" && !errors.Is(err, store.ErrNotFound):
			t.Errorf("%s: the learning is still there (%v)", tt.name, err)
		case tt.want != "" && (err != nil || got.Status != tt.want):
			t.Errorf("%s: learning %s, %v; want %s", tt.name, got.Status, err, tt.want)
		}
	}
}
