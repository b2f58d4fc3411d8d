package web

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/server/access"
	"github.com/mergeguard/mergeguard/server/store"
	"github.com/mergeguard/mergeguard/server/store/storetest"
)

// newServer serves the UI with the API token token; "" serves it to a
// browser signed in as the token holder (see newServerWith).
func newServer(t *testing.T, token string) (*httptest.Server, *store.Store) {
	t.Helper()
	return newServerWith(t, Deps{Access: access.Policy{Token: token}})
}

// holderToken is the API token of the servers whose tests are about what
// the pages show, not who may see them.
const holderToken = "holder-token"

// tokenSession returns the value of a session cookie opened with token,
// recorded in st.
func tokenSession(t *testing.T, st *store.Store, token string) string {
	t.Helper()
	v, err := access.NewSessions(token, token, st).TokenSession(t.Context(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// newServerWith serves the UI with d over a new store (d.Runs), its
// sessions recorded there. Without a token in d.Access, the server has
// holderToken and every request that carries no session cookie gets one
// of the token holder, as a signed-in browser sends it: the tests of the
// pages' content and of CSRF keep a viewer who may see everything.
func newServerWith(t *testing.T, d Deps) (*httptest.Server, *store.Store) {
	t.Helper()
	st := storetest.New(t)
	d.Runs, d.Logger = st, zerolog.Nop()
	holder := d.Access.Token == ""
	if holder {
		d.Access.Token = holderToken
	}
	d.Access = d.Access.WithSessions(access.NewSessions(d.Access.Token, d.Access.Token, st))
	ui, err := New(d)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	ui.Register(mux)
	var h http.Handler = mux
	if holder {
		h = signedIn(mux, tokenSession(t, st, holderToken))
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv, st
}

// signedIn adds the session cookie value to requests that carry none.
func signedIn(h http.Handler, value string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := r.Cookie(access.SessionCookie); err != nil {
			r.AddCookie(&http.Cookie{Name: access.SessionCookie, Value: value})
		}
		h.ServeHTTP(w, r)
	})
}

func get(t *testing.T, url string, header map[string]string, cookie string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	if h := header["Host"]; h != "" {
		req.Host = h
	}
	if cookie != "" {
		req.AddCookie(&http.Cookie{Name: access.SessionCookie, Value: cookie})
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(res.Body)
	if err := errors.Join(err, res.Body.Close()); err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, string(b)
}

func TestPages(t *testing.T) {
	t.Parallel() // each test has its own database and servers
	srv, st := newServer(t, "")
	ctx := t.Context()
	run, err := st.EnqueueRun(ctx, store.NewRun{Mode: store.ModePR, Trigger: store.TriggerWebhook,
		InstallationID: 1, Repository: "octo/hello", PRNumber: 7, HeadSHA: "0123456789abcdef"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.ClaimRun(ctx, "w", time.Minute); err != nil {
		t.Fatal(err)
	}
	v := review.Verdict{Verdict: review.DecisionRequestChanges, Summary: "s", Stats: review.Stats{Critical: 2, Warning: 1}}
	if err := st.FinishRun(ctx, run.ID, "w", store.Result{Status: store.StatusSucceeded, Verdict: &v}); err != nil {
		t.Fatal(err)
	}
	text := "diff --git a/x b/x\n"
	if _, err := st.EnqueueRun(ctx, store.NewRun{Mode: store.ModeDiff, Trigger: store.TriggerAPI, DiffText: &text}); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		path string
		code int
		has  []string
		not  []string
	}{
		{"/", 200, []string{"octo/hello", `href="https://github.com/octo/hello/pull/7"`, "01234567", "request_changes",
			`<span class="badge sev-critical" title="2 critical">2</span>`, "status-queued", ">diff<"}, nil},
		{"/?repo=octo/hello", 200, []string{"octo/hello"}, []string{"status-queued"}},
		{"/?status=queued", 200, []string{"status-queued"}, []string{"octo/hello"}},
		{"/reviews/" + run.ID, 200, []string{`data-id="` + run.ID + `"`, `data-stage="planner"`, `data-stage="reporter"`, `id="walkthrough-box"`, "#7"}, nil},
		{"/reviews/00000000-0000-0000-0000-000000000000", 404, nil, nil},
		{"/new", 200, []string{`name="diff_text"`, `value="security"`, `<option value="info" selected>`}, nil},
		{"/static/app.js", 200, []string{"/api/review", "/stream", "showWalkthrough"}, []string{"Authorization", "localStorage"}},
		{"/static/app.css", 200, []string{".stages"}, nil},
		{"/static/favicon.svg", 200, []string{"<svg"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			code, body := get(t, srv.URL+tt.path, nil, "")
			if code != tt.code {
				t.Fatalf("status %d, want %d", code, tt.code)
			}
			for _, s := range tt.has {
				if !strings.Contains(body, s) {
					t.Errorf("page lacks %q", s)
				}
			}
			for _, s := range tt.not {
				if strings.Contains(body, s) {
					t.Errorf("page has %q", s)
				}
			}
		})
	}
}

func TestPagesNeedTokenFromAfar(t *testing.T) {
	t.Parallel() // each test has its own database and servers
	srv, st := newServer(t, "s3cret")
	remote := map[string]string{"X-Forwarded-For": "198.51.100.4"}
	if code, _ := get(t, srv.URL+"/", remote, ""); code != http.StatusUnauthorized {
		t.Errorf("remote without cookie: %d, want 401", code)
	}
	if code, _ := get(t, srv.URL+"/", remote, "wrong"); code != http.StatusUnauthorized {
		t.Errorf("remote with wrong cookie: %d, want 401", code)
	}
	if code, _ := get(t, srv.URL+"/", remote, "s3cret"); code != http.StatusUnauthorized {
		t.Errorf("remote with the raw token as cookie: %d, want 401 (only sessions count)", code)
	}
	if code, _ := get(t, srv.URL+"/", remote, tokenSession(t, st, "s3cret")); code != http.StatusOK {
		t.Errorf("remote with a session: %d, want 200", code)
	}
	if code, _ := get(t, srv.URL+"/", remote, tokenSession(t, st, "other")); code != http.StatusUnauthorized {
		t.Errorf("remote with a session of another token: %d, want 401", code)
	}
	// A reverse proxy on the same host without X-Forwarded-For: loopback
	// is no exemption once a token is set.
	code, body := get(t, srv.URL+"/", nil, "")
	if code != http.StatusUnauthorized {
		t.Errorf("local without cookie: %d, want 401", code)
	}
	if !strings.Contains(body, `href="/signin?next=%2F"`) || strings.Contains(body, "<table") {
		t.Errorf("the 401 page should link to the sign-in page and show nothing else:\n%s", body)
	}
	if code, _ := get(t, srv.URL+"/reviews/00000000-0000-0000-0000-000000000000", nil, ""); code != http.StatusUnauthorized {
		t.Errorf("local review page without cookie: %d, want 401", code)
	}
	if code, _ := get(t, srv.URL+"/new", map[string]string{"Authorization": "bearer s3cret"}, ""); code != http.StatusOK {
		t.Errorf("bearer in lower case: %d, want 200", code)
	}
	if code, _ := get(t, srv.URL+"/", nil, tokenSession(t, st, "s3cret")); code != http.StatusOK {
		t.Errorf("local with a session: %d, want 200", code)
	}
}

// TestPagesWithoutTokenServeNobody: with no API token there is no
// anonymous admin: a request from loopback to localhost (a reverse proxy
// on the same host sends every client's that way) gets nothing, nor does
// a page of another site whose name resolves to 127.0.0.1.
func TestPagesWithoutTokenServeNobody(t *testing.T) {
	t.Parallel() // each test has its own database and servers
	ui, err := New(Deps{Runs: storetest.New(t), Logger: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	ui.Register(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	for _, host := range []string{"", "localhost:8080", "127.0.0.1", "rebind.attacker.example"} {
		for _, path := range []string{"/", "/new", "/operator"} {
			if code, _ := get(t, srv.URL+path, map[string]string{"Host": host}, ""); code != http.StatusUnauthorized {
				t.Errorf("Host %q, %s: %d, want 401", host, path, code)
			}
		}
	}
}

// TestPagesCarryCSRFToken: a page sets the double-submit cookie and
// embeds the same token for its script, which sends it back.
func TestPagesCarryCSRFToken(t *testing.T) {
	t.Parallel() // each test has its own database and servers
	srv, _ := newServer(t, "")
	res, err := http.Get(srv.URL + "/new")
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(res.Body)
	if err := errors.Join(err, res.Body.Close()); err != nil {
		t.Fatal(err)
	}
	var tok string
	for _, c := range res.Cookies() {
		if c.Name == access.CSRFCookie {
			tok = c.Value
		}
	}
	if tok == "" || !strings.Contains(string(b), `<meta name="csrf-token" content="`+tok+`">`) {
		t.Errorf("cookie token %q not embedded in the page:\n%s", tok, b)
	}
	if _, js := get(t, srv.URL+"/static/app.js", nil, ""); !strings.Contains(js, `"X-CSRF-Token"`) {
		t.Error("app.js does not send the X-CSRF-Token header")
	}
}

// TestUIRefusesCrossSitePosts: a state-changing request to a UI route
// from another site is refused before anything else.
func TestUIRefusesCrossSitePosts(t *testing.T) {
	t.Parallel() // each test has its own database and servers
	srv, _ := newServer(t, "")
	ui, err := New(Deps{Runs: nil, Logger: zerolog.Nop(), Access: access.Policy{Token: "s3cret"}})
	if err != nil {
		t.Fatal(err)
	}
	reached := false
	h := ui.guard(func(http.ResponseWriter, *http.Request) { reached = true })
	for _, tt := range []struct {
		name   string
		header map[string]string
		code   int
	}{
		{"cross-site", map[string]string{"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"}, http.StatusForbidden},
		{"same origin without CSRF token", map[string]string{"Origin": srv.URL, "Sec-Fetch-Site": "same-origin"}, http.StatusForbidden},
	} {
		r := httptest.NewRequest(http.MethodPost, "/anything", strings.NewReader("x=1"))
		r.RemoteAddr, r.Host = "127.0.0.1:1", strings.TrimPrefix(srv.URL, "http://")
		r.Header.Set("Authorization", "Bearer s3cret")
		for k, v := range tt.header {
			r.Header.Set(k, v)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != tt.code || reached {
			t.Errorf("%s: %d (handler reached: %v), want %d", tt.name, w.Code, reached, tt.code)
		}
	}
}
