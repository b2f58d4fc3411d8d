package web

import (
	"errors"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/rs/zerolog"

	"github.com/mergeguard/mergeguard/github"
	"github.com/mergeguard/mergeguard/github/githubtest"
	"github.com/mergeguard/mergeguard/github/oauth"
	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/server/access"
	"github.com/mergeguard/mergeguard/server/store"
	"github.com/mergeguard/mergeguard/server/store/storetest"
)

func TestSafeNext(t *testing.T) {
	t.Parallel() // each test has its own database and servers
	tests := map[string]string{
		"":                              "/",
		"/":                             "/",
		"/reviews/abc":                  "/reviews/abc",
		"/repos/o/r/pulls/1?x=1#f":      "/repos/o/r/pulls/1?x=1#f",
		"/?repo=o%2Fr&status=done":      "/?repo=o%2Fr&status=done",
		"//evil.example/":               "/",
		"/\\evil.example":               "/",
		"\\\\evil.example":              "/",
		"https://evil.example/":         "/",
		"http:/evil.example":            "/",
		"javascript:alert(1)":           "/",
		"evil.example":                  "/",
		"/\t/evil.example":              "/",
		"/\n/evil.example":              "/",
		"/%2F%2Fevil.example":           "/%2F%2Fevil.example", // a path of this site
		"/" + strings.Repeat("a", 3000): "/",
	}
	for in, want := range tests {
		if got := SafeNext(in); got != want {
			t.Errorf("SafeNext(%q) = %q, want %q", in, got, want)
		}
	}
}

// browserClient is a browser seen through a proxy: it keeps cookies,
// follows no redirects and sends X-Forwarded-For, so no request is local.
type browserClient struct {
	t   *testing.T
	c   *http.Client
	srv string
}

type forwarded struct{ next http.RoundTripper }

func (f forwarded) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-Forwarded-For", "198.51.100.7")
	return f.next.RoundTrip(r)
}

func newBrowser(t *testing.T, srv *httptest.Server) *browserClient {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	c := &http.Client{Jar: jar, Transport: forwarded{srv.Client().Transport},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return &browserClient{t: t, c: c, srv: srv.URL}
}

// do sends a request (a form when form is set) and returns the answer
// with its body read.
func (b *browserClient) do(method, target string, form url.Values, header map[string]string) (*http.Response, string) {
	b.t.Helper()
	if strings.HasPrefix(target, "/") {
		target = b.srv + target
	}
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(b.t.Context(), method, target, body)
	if err != nil {
		b.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := b.c.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	out, err := io.ReadAll(res.Body)
	if err := errors.Join(err, res.Body.Close()); err != nil {
		b.t.Fatal(err)
	}
	return res, string(out)
}

var csrfField = regexp.MustCompile(`name="csrf_token" value="([0-9a-f]{64})"`)

// csrf loads the sign-in page and returns the CSRF token of its form.
func (b *browserClient) csrf() string {
	b.t.Helper()
	_, page := b.do("GET", "/signin", nil, nil)
	m := csrfField.FindStringSubmatch(page)
	if m == nil {
		b.t.Fatalf("the sign-in page has no CSRF field:\n%s", page)
	}
	return m[1]
}

func sessionCookie(res *http.Response) *http.Cookie {
	for _, c := range res.Cookies() {
		if c.Name == access.SessionCookie {
			return c
		}
	}
	return nil
}

func TestTokenSignIn(t *testing.T) {
	t.Parallel() // each test has its own database and servers
	srv, _ := newServer(t, "s3cret")
	same := map[string]string{"Origin": srv.URL, "Sec-Fetch-Site": "same-origin"}
	tests := []struct {
		name     string
		csrf     bool
		token    string
		header   map[string]string
		code     int
		location string
	}{
		{"no CSRF token", false, "s3cret", same, 403, ""},
		{"another site", true, "s3cret", map[string]string{"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"}, 403, ""},
		{"wrong token", true, "nope", same, 401, ""},
		{"empty token", true, "", same, 401, ""},
		{"the token", true, "s3cret", same, 303, "/reviews/x?y=1"},
		{"the token, script without browser headers", true, "s3cret", nil, 303, "/reviews/x?y=1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBrowser(t, srv)
			form := url.Values{"token": {tt.token}, "next": {"/reviews/x?y=1"}}
			tok := b.csrf()
			if tt.csrf {
				form.Set(access.CSRFField, tok)
			}
			res, _ := b.do("POST", "/signin", form, tt.header)
			if res.StatusCode != tt.code || res.Header.Get("Location") != tt.location {
				t.Fatalf("POST /signin: %d to %q, want %d to %q", res.StatusCode, res.Header.Get("Location"), tt.code, tt.location)
			}
			c := sessionCookie(res)
			if tt.code != 303 {
				if c != nil {
					t.Errorf("a refused sign-in set a session cookie")
				}
				return
			}
			if c == nil || !c.HttpOnly || c.Secure || c.SameSite != http.SameSiteStrictMode || c.Path != "/" || c.MaxAge <= 0 {
				t.Fatalf("session cookie %+v, want HttpOnly, not Secure over plain HTTP, SameSite=Strict, Path=/", c)
			}
			if strings.Contains(c.Value, "s3cret") {
				t.Errorf("the cookie holds the token: %q", c.Value)
			}
			if res, body := b.do("GET", "/new", nil, nil); res.StatusCode != 200 || !strings.Contains(body, `id="signout-btn"`) {
				t.Errorf("signed in, GET /new: %d, want 200 with a sign-out button", res.StatusCode)
			}
		})
	}
}

func TestSignInRedirectsOnlyHome(t *testing.T) {
	t.Parallel() // each test has its own database and servers
	srv, _ := newServer(t, "s3cret")
	for _, next := range []string{"//evil.example/x", "https://evil.example/", "/\\evil.example"} {
		b := newBrowser(t, srv)
		form := url.Values{"token": {"s3cret"}, "next": {next}, access.CSRFField: {b.csrf()}}
		if res, _ := b.do("POST", "/signin", form, nil); res.Header.Get("Location") != "/" {
			t.Errorf("next %q: redirected to %q, want /", next, res.Header.Get("Location"))
		}
	}
	b := newBrowser(t, srv)
	if res, body := b.do("GET", "/reviews/x?y=1", nil, nil); res.StatusCode != 401 || !strings.Contains(body, `href="/signin?next=%2Freviews%2Fx%3Fy%3D1"`) {
		t.Errorf("the 401 page: %d, want a link to the sign-in page coming back here:\n%s", res.StatusCode, body)
	}
}

func TestSignInOverTLSIsSecure(t *testing.T) {
	t.Parallel() // each test has its own database and servers
	st := storetest.New(t)
	ui, err := New(Deps{Runs: st, Logger: zerolog.Nop(), Access: access.Policy{Token: "s3cret"}.WithSessions(access.NewSessions("s3cret", "s3cret", st))})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	ui.Register(mux)
	srv := httptest.NewTLSServer(mux)
	t.Cleanup(srv.Close)
	b := newBrowser(t, srv)
	res, _ := b.do("POST", "/signin", url.Values{"token": {"s3cret"}, access.CSRFField: {b.csrf()}}, nil)
	if c := sessionCookie(res); c == nil || !c.Secure || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode {
		t.Errorf("session cookie over TLS %+v, want Secure, HttpOnly, SameSite=Strict", c)
	}
}

func TestSignOut(t *testing.T) {
	t.Parallel() // each test has its own database and servers
	srv, _ := newServer(t, "s3cret")
	b := newBrowser(t, srv)
	b.do("POST", "/signin", url.Values{"token": {"s3cret"}, access.CSRFField: {b.csrf()}}, nil)
	if res, _ := b.do("GET", "/", nil, nil); res.StatusCode != 200 {
		t.Fatalf("signed in: %d", res.StatusCode)
	}
	if res, _ := b.do("POST", "/signout", url.Values{}, nil); res.StatusCode != 403 {
		t.Errorf("sign-out without the CSRF token: %d, want 403", res.StatusCode)
	}
	if res, _ := b.do("GET", "/", nil, nil); res.StatusCode != 200 {
		t.Errorf("a refused sign-out signed out: %d", res.StatusCode)
	}
	res, _ := b.do("POST", "/signout", url.Values{access.CSRFField: {b.csrf()}}, nil)
	if c := sessionCookie(res); res.StatusCode != 303 || c == nil || c.MaxAge >= 0 {
		t.Errorf("sign-out: %d, cookie %+v; want 303 and the cookie removed", res.StatusCode, c)
	}
	if res, _ := b.do("GET", "/", nil, nil); res.StatusCode != 401 {
		t.Errorf("signed out: %d, want 401", res.StatusCode)
	}
}

// TestHeaderSaysWhoIsSignedIn: the header's sign-in link, name and
// sign-out button follow who is signed in, on the sign-in page too; an
// admin's navigation leads to Setup.
func TestHeaderSaysWhoIsSignedIn(t *testing.T) {
	t.Parallel() // each test has its own database and servers
	srv, _ := newServer(t, "s3cret")
	nobody, holder := newBrowser(t, srv), newBrowser(t, srv)
	holder.do("POST", "/signin", url.Values{"token": {"s3cret"}, access.CSRFField: {holder.csrf()}}, nil)
	tests := []struct {
		name    string
		b       *browserClient
		path    string
		want    []string
		notWant []string
	}{
		{"nobody on /signin", nobody, "/signin", []string{`id="signin-link"`},
			[]string{`id="signout-btn"`, `id="who"`, "signed in as", `id="setup-link"`}},
		{"nobody refused", nobody, "/", []string{`id="signin-link"`}, []string{`id="signout-btn"`, `id="who"`}},
		{"token holder on /signin", holder, "/signin", []string{`id="signout-btn"`, "You are signed in as token holder."}, []string{`id="signin-link"`}},
		{"token holder", holder, "/", []string{`id="signout-btn"`, `<a href="/setup" id="setup-link">Setup</a>`}, []string{`id="signin-link"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, body := tt.b.do("GET", tt.path, nil, nil)
			for _, s := range tt.want {
				if !strings.Contains(body, s) {
					t.Errorf("GET %s lacks %q", tt.path, s)
				}
			}
			for _, s := range tt.notWant {
				if strings.Contains(body, s) {
					t.Errorf("GET %s shows %q", tt.path, s)
				}
			}
		})
	}
}

// reviewData stands for the API's review handlers.
type reviewData struct{}

func (reviewData) Review(w http.ResponseWriter, r *http.Request) {
	_, _ = io.WriteString(w, "verdict of "+r.PathValue("id"))
}

func (reviewData) Stream(w http.ResponseWriter, r *http.Request) {
	_, _ = io.WriteString(w, "stream of "+r.PathValue("id"))
}

// gitHubUI serves the UI with Sign in with GitHub against a fake GitHub,
// and runs of several repositories.
func gitHubUI(t *testing.T) (*httptest.Server, *githubtest.Server, map[string]string) {
	t.Helper()
	srv, gh, _, runs := gitHubUIStore(t)
	return srv, gh, runs
}

// gitHubUIStore is gitHubUI with its store. Each run of a repository
// carries the fake's id of that repository, as the webhook stores it.
func gitHubUIStore(t *testing.T) (*httptest.Server, *githubtest.Server, *store.Store, map[string]string) {
	t.Helper()
	gh := githubtest.New(t)
	gh.RequireAuth()
	st := storetest.New(t)
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	gh.SetOAuthApp("Iv1.client", "oauth-secret", srv.URL+"/signin/github/callback")
	ui, err := New(Deps{Runs: st, Logger: zerolog.Nop(),
		Access:   access.Policy{Token: "s3cret"}.WithSessions(access.NewSessions("a-secret-key-of-thirty-two-chars", "s3cret", st)),
		GitHub:   oauth.New(gh.WebURL(), gh.URL(), github.ClientOptions{}),
		OAuthApp: StaticOAuthApp{ClientID: "Iv1.client", ClientSecret: "oauth-secret"}, PublicURL: srv.URL,
		Reviews: reviewData{}})
	if err != nil {
		t.Fatal(err)
	}
	ui.Register(mux)
	runs := map[string]string{}
	for _, repo := range []string{"acme/widgets", "acme/secret", "owned/tools", "other/open", ""} {
		nr := store.NewRun{Mode: store.ModePR, Trigger: store.TriggerWebhook, InstallationID: 1, Repository: repo, PRNumber: 3, HeadSHA: "abc"}
		if owner, name, ok := strings.Cut(repo, "/"); ok {
			nr.RepositoryID = gh.RepoID(owner, name)
		}
		if repo == "" {
			text := "diff --git a/x b/x\n"
			nr = store.NewRun{Mode: store.ModeDiff, Trigger: store.TriggerAPI, DiffText: &text}
		}
		run, err := st.EnqueueRun(t.Context(), nr)
		if err != nil {
			t.Fatal(err)
		}
		runs[repo] = run.ID
	}
	mona := githubtest.User{Login: "mona", ID: 77}
	gh.SignInBrowser(mona)
	gh.SetPermission("acme", "widgets", "mona", "read")
	gh.SetPermission("acme", "secret", "hubot", "write")
	gh.SetPermission("owned", "tools", "hubot", "write")
	gh.SetOrgMember("owned", "mona", "admin")
	gh.SetOrgMember("acme", "mona", "member")
	gh.SetPublic("other", "open", true)
	return srv, gh, st, runs
}

// signInWithGitHub goes through the OAuth flow as a browser and returns
// the callback's answer.
func (b *browserClient) signInWithGitHub(next string) (*http.Response, string) {
	b.t.Helper()
	res, _ := b.do("GET", "/signin/github?next="+url.QueryEscape(next), nil, nil)
	if res.StatusCode != http.StatusFound {
		b.t.Fatalf("GET /signin/github: %d, want a redirect to GitHub", res.StatusCode)
	}
	res, _ = b.do("GET", res.Header.Get("Location"), nil, nil)
	if res.StatusCode != http.StatusFound {
		b.t.Fatalf("GitHub's authorize page: %d, want a redirect back", res.StatusCode)
	}
	return b.do("GET", res.Header.Get("Location"), nil, nil)
}

func TestGitHubSignInSeesOnlyReadableRepositories(t *testing.T) {
	t.Parallel() // each test has its own database and servers
	srv, gh, runs := gitHubUI(t)
	b := newBrowser(t, srv)
	res, body := b.signInWithGitHub("/repos/acme/widgets/pulls/3")
	c := sessionCookie(res)
	if res.StatusCode != 200 || c == nil || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || !strings.Contains(body, `url=/repos/acme/widgets/pulls/3`) {
		t.Fatalf("callback: %d, cookie %+v, want 200 going on to the next page:\n%s", res.StatusCode, c, body)
	}
	if strings.Contains(c.Value, "ghu_") {
		t.Errorf("the session cookie shows the user token: %q", c.Value)
	}

	_, index := b.do("GET", "/", nil, nil)
	got := map[string]bool{}
	for repo, id := range runs {
		got[repo] = strings.Contains(index, `/reviews/`+id)
	}
	want := map[string]bool{"acme/widgets": true, "owned/tools": true, "other/open": true, "acme/secret": false, "": false}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("runs listed (-want +got):\n%s", diff)
	}
	if !strings.Contains(index, `id="who">mona<`) || strings.Contains(index, `href="/new"`) {
		t.Errorf("the page should name mona and offer no new review")
	}
	pages := map[string]int{
		"/reviews/" + runs["acme/widgets"]:              200,
		"/reviews/" + runs["acme/secret"]:               404,
		"/reviews/" + runs[""]:                          404,
		"/reviews/" + runs["acme/secret"] + "/findings": 404,
		"/reviews/" + runs["owned/tools"]:               200,
		"/repos/acme/widgets/pulls/3":                   200,
		"/repos/acme/secret/pulls/3":                    404,
		"/repos/acme/widgets/learnings":                 200,
		"/repos/acme/secret/learnings":                  404,
		"/new":                                          403,
	}
	for path, want := range pages {
		if res, _ := b.do("GET", path, nil, nil); res.StatusCode != want {
			t.Errorf("GET %s: %d, want %d", path, res.StatusCode, want)
		}
	}
	if _, body := b.do("GET", "/repos/acme/widgets/learnings", nil, nil); !strings.Contains(body, "you read them") {
		t.Errorf("the learnings page should be read-only for a GitHub user:\n%s", body)
	}
	// GitHub was asked once per repository, by its id (never by a name):
	// answers are kept a minute.
	if n := gh.CallCount(githubtest.RouteRepo) + gh.CallCount(githubtest.RouteOrgMembership); n != 0 {
		t.Errorf("GitHub was asked %d times by repository or organisation name, want 0", n)
	}
	before := gh.CallCount(githubtest.RouteRepoByID)
	b.do("GET", "/", nil, nil)
	if after := gh.CallCount(githubtest.RouteRepoByID); after != before {
		t.Errorf("a second page load asked GitHub %d more times, want 0", after-before)
	}
}

// TestGitHubSignInVisibilityFollowsTheRepositoryID: a private repository
// with a run, a finding and a learning is renamed and a public repository
// takes its old name. A person who can read only the public one sees
// nothing of the private one: visibility is decided by GitHub's id of the
// run's repository, never by the name the run was stored under. The
// learnings kept under a name that served two repositories are for admins
// only.
func TestGitHubSignInVisibilityFollowsTheRepositoryID(t *testing.T) {
	t.Parallel() // each test has its own database and servers
	srv, gh, st, runs := gitHubUIStore(t)
	// Private acme/app (hubot's), reviewed while it had that name.
	gh.SetPermission("acme", "app", "hubot", "write")
	private, err := st.EnqueueRun(t.Context(), store.NewRun{Mode: store.ModePR, Trigger: store.TriggerWebhook, InstallationID: 1,
		Repository: "acme/app", RepositoryID: gh.RepoID("acme", "app"), PRNumber: 9, HeadSHA: "def"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.AddLearning(t.Context(), review.Learning{Repository: "acme/app", Instruction: "the vault key lives in cmd/keys.go",
		Path: "cmd/**", Status: review.LearningActive, Author: "hubot", RunID: private.ID}); err != nil {
		t.Fatal(err)
	}
	// Renamed; a public repository takes the old name.
	gh.RenameRepo("acme", "app", "acme", "app-old")
	gh.SetPublic("acme", "app", true)
	if gh.RepoID("acme", "app") == private.RepositoryID {
		t.Fatal("the fake kept the id with the name")
	}
	// The public one is reviewed under the name too (pull request 10).
	public, err := st.EnqueueRun(t.Context(), store.NewRun{Mode: store.ModePR, Trigger: store.TriggerWebhook, InstallationID: 1,
		Repository: "acme/app", RepositoryID: gh.RepoID("acme", "app"), PRNumber: 10, HeadSHA: "fed"})
	if err != nil {
		t.Fatal(err)
	}
	b := newBrowser(t, srv)
	b.signInWithGitHub("/")
	pages := map[string]int{
		"/reviews/" + public.ID:                200,
		"/repos/acme/app/pulls/10":             200,
		"/reviews/" + private.ID:               404,
		"/reviews/" + private.ID + "/findings": 404,
		"/repos/acme/app/pulls/9":              404,
		"/repos/acme/app/learnings":            404,
		"/reviews/" + runs["acme/widgets"]:     200,
		"/repos/acme/widgets/pulls/3":          200,
	}
	for path, want := range pages {
		if res, body := b.do("GET", path, nil, nil); res.StatusCode != want || (want == 404 && strings.Contains(body, "vault key")) {
			t.Errorf("GET %s: %d, want %d", path, res.StatusCode, want)
		}
	}
	_, index := b.do("GET", "/", nil, nil)
	if strings.Contains(index, "/reviews/"+private.ID) {
		t.Error("the index lists the private repository's run under the name a public repository now has")
	}
	if !strings.Contains(index, "/reviews/"+public.ID) {
		t.Error("the index does not list the public repository's run")
	}
}

func TestGitHubSignInRefusesForeignState(t *testing.T) {
	t.Parallel() // each test has its own database and servers
	srv, _, _ := gitHubUI(t)
	b := newBrowser(t, srv)
	res, _ := b.do("GET", "/signin/github", nil, nil)
	authorize, err := url.Parse(res.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	if got := authorize.Query().Get("redirect_uri"); got != srv.URL+"/signin/github/callback" {
		t.Errorf("redirect_uri %q, want the public URL's callback", got)
	}
	res, _ = b.do("GET", res.Header.Get("Location"), nil, nil)
	back, err := url.Parse(res.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	// Another browser (no state cookie), and this one with a forged state.
	other := newBrowser(t, srv)
	if res, _ := other.do("GET", back.String(), nil, nil); res.StatusCode != 400 || sessionCookie(res) != nil {
		t.Errorf("callback in another browser: %d, want 400 and no session", res.StatusCode)
	}
	q := back.Query()
	q.Set("state", strings.Repeat("0", 64))
	back.RawQuery = q.Encode()
	if res, _ := b.do("GET", back.String(), nil, nil); res.StatusCode != 400 || sessionCookie(res) != nil {
		t.Errorf("callback with a forged state: %d, want 400 and no session", res.StatusCode)
	}
}

// TestSignInThrottled: wrong tokens at POST /signin from one address are
// answered 401 up to the limit, then 429 with Retry-After, even for the
// right token, until the delay is over.
func TestSignInThrottled(t *testing.T) {
	t.Parallel() // each test has its own database and servers
	srv, _ := newServer(t, "s3cret")
	b := newBrowser(t, srv)
	tok := b.csrf()
	var codes []int
	for range 12 {
		res, _ := b.do("POST", "/signin", url.Values{"token": {"nope"}, access.CSRFField: {tok}}, nil)
		codes = append(codes, res.StatusCode)
		if res.StatusCode == http.StatusTooManyRequests && res.Header.Get("Retry-After") == "" {
			t.Errorf("429 without Retry-After")
		}
	}
	want := []int{401, 401, 401, 401, 401, 401, 401, 401, 401, 401, 429, 429}
	if d := cmp.Diff(want, codes); d != "" {
		t.Errorf("answers to 12 wrong tokens (-want +got):\n%s", d)
	}
	if res, _ := b.do("POST", "/signin", url.Values{"token": {"s3cret"}, access.CSRFField: {tok}}, nil); res.StatusCode != http.StatusTooManyRequests {
		t.Errorf("the right token while throttled: %d, want 429", res.StatusCode)
	}
}

// TestSignOutRevokes: a copy of the session cookie taken before sign-out
// opens nothing after it.
func TestSignOutRevokes(t *testing.T) {
	t.Parallel() // each test has its own database and servers
	srv, _ := newServer(t, "s3cret")
	b := newBrowser(t, srv)
	res, _ := b.do("POST", "/signin", url.Values{"token": {"s3cret"}, access.CSRFField: {b.csrf()}}, nil)
	copied := sessionCookie(res)
	if copied == nil {
		t.Fatalf("sign-in set no session cookie: %d", res.StatusCode)
	}
	b.do("POST", "/signout", url.Values{access.CSRFField: {b.csrf()}}, nil)
	thief := newBrowser(t, srv)
	if res, _ := thief.do("GET", "/", nil, map[string]string{"Cookie": access.SessionCookie + "=" + copied.Value}); res.StatusCode != http.StatusUnauthorized {
		t.Errorf("the copied cookie after sign-out: %d, want 401", res.StatusCode)
	}
}

// TestSignInLink: the link the server logs (/signin?token=...) moves the
// token out of the address bar at once and signs in only after a
// confirming post (no login CSRF by opening a link); the link's cookie is
// used once; a wrong link's token counts as a failure.
func TestSignInLink(t *testing.T) {
	t.Parallel() // each test has its own database and servers
	srv, _ := newServer(t, "s3cret")
	b := newBrowser(t, srv)
	res, _ := b.do("GET", "/signin?token=s3cret&next=%2Fnew", nil, nil)
	if loc := res.Header.Get("Location"); res.StatusCode != http.StatusSeeOther || loc != "/signin?next=%2Fnew" || sessionCookie(res) != nil {
		t.Fatalf("GET the link: %d to %q (session %v), want 303 to /signin?next=%%2Fnew without a session", res.StatusCode, loc, sessionCookie(res))
	}
	if res.Header.Get("Referrer-Policy") != "no-referrer" {
		t.Errorf("the link's answer lets the token leak in Referer")
	}
	if res, _ := b.do("GET", "/new", nil, nil); res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("opening the link signed in: GET /new = %d", res.StatusCode)
	}
	_, page := b.do("GET", "/signin?next=%2Fnew", nil, nil)
	if !strings.Contains(page, `id="signin-link-form"`) || strings.Contains(page, "s3cret") {
		t.Fatalf("the page after the link: want the confirming form, without the token:\n%s", page)
	}
	form := url.Values{"link": {"1"}, "next": {"/new"}, access.CSRFField: {csrfField.FindStringSubmatch(page)[1]}}
	res, _ = b.do("POST", "/signin", form, nil)
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/new" || sessionCookie(res) == nil {
		t.Fatalf("confirming: %d to %q, want 303 to /new with a session", res.StatusCode, res.Header.Get("Location"))
	}
	if _, page := b.do("GET", "/signin", nil, nil); strings.Contains(page, `id="signin-link-form"`) {
		t.Errorf("the link's cookie outlived its use")
	}

	wrong := newBrowser(t, srv)
	wrong.do("GET", "/signin?token=guess", nil, nil)
	if res, _ := wrong.do("POST", "/signin", url.Values{"link": {"1"}, access.CSRFField: {wrong.csrf()}}, nil); res.StatusCode != http.StatusUnauthorized {
		t.Errorf("confirming a wrong link: %d, want 401", res.StatusCode)
	}
}

// TestSignEveryoneOut: the operator page's button (a CSRF-protected post
// of a token holder) ends every session: the token holder's, another
// browser's and a GitHub user's.
func TestSignEveryoneOut(t *testing.T) {
	t.Parallel() // each test has its own database and servers
	srv, st := newServer(t, "s3cret")
	admin, other := newBrowser(t, srv), newBrowser(t, srv)
	for _, b := range []*browserClient{admin, other} {
		b.do("POST", "/signin", url.Values{"token": {"s3cret"}, access.CSRFField: {b.csrf()}}, nil)
	}
	gh, err := access.NewSessions("s3cret", "s3cret", st).GitHubSession(t.Context(), "mona", 7, "ghu_x", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	res, page := admin.do("GET", "/operator", nil, nil)
	m := csrfField.FindStringSubmatch(page)
	if res.StatusCode != http.StatusOK || !strings.Contains(page, `id="signout-all"`) || m == nil {
		t.Fatalf("GET /operator: %d, want the page with its button:\n%s", res.StatusCode, page)
	}
	if res, _ := other.do("POST", "/operator/signout-all", url.Values{}, nil); res.StatusCode != http.StatusForbidden {
		t.Errorf("without the CSRF token: %d, want 403", res.StatusCode)
	}
	if res, _ := other.do("GET", "/", nil, nil); res.StatusCode != http.StatusOK {
		t.Fatalf("a refused post signed out: %d", res.StatusCode)
	}
	if res, _ := admin.do("POST", "/operator/signout-all", url.Values{access.CSRFField: {m[1]}}, nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign everyone out: %d, want 303", res.StatusCode)
	}
	for name, b := range map[string]*browserClient{"admin": admin, "other": other} {
		if res, _ := b.do("GET", "/", nil, nil); res.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s after signing everyone out: %d, want 401", name, res.StatusCode)
		}
	}
	if _, err := access.NewSessions("s3cret", "s3cret", st).Open(t.Context(), gh); err == nil {
		t.Errorf("the GitHub session survived")
	}
}
