package setup_test

import (
	"bytes"
	"cmp"
	"context"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/mergeguard/mergeguard/github/githubtest"
	"github.com/mergeguard/mergeguard/github/oauth"
	"github.com/mergeguard/mergeguard/server/access"
	"github.com/mergeguard/mergeguard/server/setup"
	"github.com/mergeguard/mergeguard/server/store"
	"github.com/mergeguard/mergeguard/server/store/storetest"
)

// env is a /setup served on a test server, the fake GitHub, and a browser.
type env struct {
	srv     *httptest.Server
	fake    *githubtest.Server
	st      *store.Store
	browser *http.Client
	log     *bytes.Buffer
	setup   *setup.Setup
}

// holderToken is the API token of the envs whose tests are not about
// access; their browsers send it to /setup (holderTransport).
const holderToken = "holder-token"

type options struct {
	noKey, configured bool
	token             string
}

func newEnv(t *testing.T, o options) *env {
	t.Helper()
	e := &env{fake: githubtest.New(t), st: storetest.New(t), log: &bytes.Buffer{}}
	if !o.noKey {
		if err := e.st.SetSecretKey(bytes.Repeat([]byte{3}, 32)); err != nil {
			t.Fatal(err)
		}
	}
	manifest, err := os.ReadFile("github-app.yml")
	if err != nil {
		t.Fatal(err)
	}
	policy, err := access.NewPolicy(cmp.Or(o.token, holderToken), "")
	if err != nil {
		t.Fatal(err)
	}
	s, err := setup.New(setup.Deps{
		Store: e.st, Access: policy, Manifest: manifest,
		WebURL: e.fake.WebURL(), APIURL: e.fake.URL(), Configured: o.configured, SecretKey: !o.noKey,
		Convert: func(ctx context.Context, apiURL, code string) (oauth.ManifestApp, error) {
			return oauth.ConvertManifest(ctx, code, oauth.ManifestOptions{APIURL: apiURL})
		},
		Logger: zerolog.New(e.log),
	})
	if err != nil {
		t.Fatal(err)
	}
	e.setup = s
	mux := http.NewServeMux()
	s.Register(mux)
	e.srv = httptest.NewServer(mux)
	t.Cleanup(e.srv.Close)
	e.browser = newBrowser(t)
	return e
}

func newBrowser(t *testing.T) *http.Client {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Jar: jar, Transport: holderTransport{},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// holderTransport sends the holder's token to /setup (the form; not to
// GitHub's pages, nor to the callback, which needs none) unless the
// request has an Authorization header of its own.
type holderTransport struct{}

func (holderTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Path == "/setup" && r.Header.Get("Authorization") == "" {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+holderToken)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// code is the setup code the form asks for.
func (e *env) code(t *testing.T) string {
	t.Helper()
	code, err := e.setup.Code(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return code
}

// local is the test server's address as a loopback name.
func (e *env) local() string {
	return strings.Replace(e.srv.URL, "127.0.0.1", "localhost", 1)
}

func do(t *testing.T, c *http.Client, req *http.Request) (int, string, *http.Response) {
	t.Helper()
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b), resp
}

func get(t *testing.T, c *http.Client, u string) (int, string, *http.Response) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	return do(t, c, req)
}

func post(t *testing.T, c *http.Client, u string, form url.Values) (int, string, *http.Response) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, u, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return do(t, c, req)
}

var (
	csrfField   = regexp.MustCompile(`name="csrf" value="([0-9a-f]{64})"`)
	actionField = regexp.MustCompile(`action="([^"]+)"`)
	manifestVal = regexp.MustCompile(`name="manifest" value="([^"]+)"`)
)

// start opens /setup and submits the form in browser; it returns the
// continue page's action (GitHub's page with the state) and manifest.
func (e *env) start(t *testing.T, browser *http.Client, form url.Values) (action, manifest string) {
	t.Helper()
	status, body, _ := get(t, browser, e.local()+"/setup")
	m := csrfField.FindStringSubmatch(body)
	if status != http.StatusOK || m == nil {
		t.Fatalf("GET /setup = %d without a CSRF field:\n%s", status, body)
	}
	form.Set("csrf", m[1])
	form.Set("setup_code", e.code(t))
	status, body, _ = post(t, browser, e.local()+"/setup", form)
	a, mf := actionField.FindStringSubmatch(body), manifestVal.FindStringSubmatch(body)
	if status != http.StatusOK || a == nil || mf == nil {
		t.Fatalf("POST /setup = %d without the manifest form:\n%s", status, body)
	}
	return html.UnescapeString(a[1]), html.UnescapeString(mf[1])
}

func orgForm(e *env) url.Values {
	return url.Values{"owner": {"org"}, "org": {"acme"}, "name": {"MergeGuard"},
		"public_url": {"https://mg.example.com/"}, "web_url": {e.fake.WebURL()}}
}

// github posts the manifest to GitHub's page as the continue page does and
// returns the callback URL GitHub redirects to, on the test server.
func (e *env) github(t *testing.T, action, manifest string) string {
	t.Helper()
	status, _, resp := post(t, newBrowser(t), action, url.Values{"manifest": {manifest}})
	loc, err := url.Parse(resp.Header.Get("Location"))
	if status != http.StatusFound || err != nil || loc.Path != setup.CallbackPath {
		t.Fatalf("GitHub answered %d, Location %q", status, resp.Header.Get("Location"))
	}
	return e.local() + loc.RequestURI()
}

// TestSetupTalksToGitHubOnly: the form's GitHub web URL is github.com or
// the configured GitHub (Enterprise) address; any other host is refused
// before a state is recorded or a manifest leaves for it.
func TestSetupTalksToGitHubOnly(t *testing.T) {
	t.Parallel() // each test has its own database and servers
	tests := []struct {
		webURL string
		want   int
	}{
		{"https://evil.example", http.StatusBadRequest},
		{"http://127.0.0.1:9", http.StatusBadRequest},
		{"https://github.com.evil.example", http.StatusBadRequest},
		{"http://github.com", http.StatusBadRequest},
		{"https://github.com", http.StatusOK},
		{"https://GitHub.com/", http.StatusOK},
		{"", http.StatusOK}, // the configured GitHub (the fake)
	}
	for _, tt := range tests {
		t.Run(tt.webURL, func(t *testing.T) {
			e := newEnv(t, options{})
			status, body, _ := get(t, e.browser, e.local()+"/setup")
			csrf := csrfField.FindStringSubmatch(body)
			if status != http.StatusOK || csrf == nil {
				t.Fatalf("GET /setup = %d", status)
			}
			form := orgForm(e)
			if tt.webURL != "" {
				form.Set("web_url", tt.webURL)
			}
			form.Set("csrf", csrf[1])
			form.Set("setup_code", e.code(t))
			status, body, _ = post(t, e.browser, e.local()+"/setup", form)
			if status != tt.want {
				t.Fatalf("POST /setup with web_url %q = %d, want %d:\n%s", tt.webURL, status, tt.want, body)
			}
			if tt.want == http.StatusBadRequest && !strings.Contains(body, "GitHub&#39;s web URL must be https://github.com or") {
				t.Errorf("the refusal does not say which GitHub is allowed:\n%s", body)
			}
		})
	}
}

// TestSetupAsksForCode: while no App is stored, creating one needs the
// setup code serve logs (typed in any case, with or without dashes), on
// top of the API token; once an App is stored it is asked no more.
func TestSetupAsksForCode(t *testing.T) {
	t.Parallel() // each test has its own database and servers
	e := newEnv(t, options{})
	if err := e.setup.AnnounceCode(t.Context()); err != nil {
		t.Fatal(err)
	}
	code := e.code(t)
	if !strings.Contains(e.log.String(), code) {
		t.Errorf("the log does not show the setup code %s:\n%s", code, e.log)
	}
	status, body, _ := get(t, e.browser, e.local()+"/setup")
	csrf := csrfField.FindStringSubmatch(body)
	if status != http.StatusOK || csrf == nil || !strings.Contains(body, `name="setup_code"`) {
		t.Fatalf("GET /setup = %d, want the form with a setup code field:\n%s", status, body)
	}
	tests := []struct {
		name, code string
		want       int
	}{
		{"no code", "", http.StatusForbidden},
		{"a wrong code", "AAAA-BBBB-CCCC-DDDD", http.StatusForbidden},
		{"the code, typed loosely", strings.ToLower(strings.ReplaceAll(code, "-", " ")), http.StatusOK},
	}
	for _, tt := range tests {
		form := orgForm(e)
		form.Set("csrf", csrf[1])
		form.Set("setup_code", tt.code)
		if status, body, _ := post(t, e.browser, e.local()+"/setup", form); status != tt.want {
			t.Errorf("%s: POST /setup = %d, want %d:\n%s", tt.name, status, tt.want, body)
		}
	}
	if err := e.st.SaveAppCredentials(t.Context(), store.AppCredentials{AppID: 1, Slug: "mg", HTMLURL: "https://github.com/apps/mg",
		PrivateKey: "k", WebhookSecret: "w"}); err != nil {
		t.Fatal(err)
	}
	_, body, _ = get(t, e.browser, e.local()+"/setup")
	form := orgForm(e)
	form.Set("csrf", csrfField.FindStringSubmatch(body)[1])
	if status, body, _ := post(t, e.browser, e.local()+"/setup", form); status != http.StatusOK || strings.Contains(body, `name="setup_code"`) {
		t.Errorf("with an App stored, POST /setup without a code = %d, want 200", status)
	}
}
