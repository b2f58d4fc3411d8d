package setup_test

import (
	"bytes"
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

	"github.com/mergeguard/mergeguard/github"
	"github.com/mergeguard/mergeguard/github/githubtest"
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
}

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
	policy, err := access.NewPolicy(o.token, "")
	if err != nil {
		t.Fatal(err)
	}
	s, err := setup.New(setup.Deps{
		Store: e.st, Access: policy, Manifest: manifest,
		WebURL: e.fake.WebURL(), APIURL: e.fake.URL(), Configured: o.configured, SecretKey: !o.noKey,
		Convert: func(ctx context.Context, apiURL, code string) (github.ManifestApp, error) {
			return github.ConvertManifest(ctx, code, github.ManifestOptions{APIURL: apiURL})
		},
		Logger: zerolog.New(e.log),
	})
	if err != nil {
		t.Fatal(err)
	}
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
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// local is the test server's address as a loopback name (access.Local).
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
