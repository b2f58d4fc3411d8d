package e2e

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mergeguard/mergeguard/github/githubtest"
	"github.com/mergeguard/mergeguard/review/llm/llmtest"
	"github.com/mergeguard/mergeguard/server/store/storetest"
)

var (
	setupCSRF     = regexp.MustCompile(`name="csrf" value="([0-9a-f]{64})"`)
	setupAction   = regexp.MustCompile(`<form id="manifest-form" method="post" action="([^"]+)"`)
	setupManifest = regexp.MustCompile(`name="manifest" value="([^"]+)"`)
)

// setupBrowser is a browser for the /setup flow: it keeps cookies and
// does not follow redirects, so that each hop is checked.
func setupBrowser(t *testing.T) *http.Client {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// bearer sends the API token to /setup (not to GitHub's pages).
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Path == "/setup" {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+b.token)
	}
	return http.DefaultTransport.RoundTrip(r)
}

func send(t *testing.T, c *http.Client, method, u string, form url.Values) (*http.Response, string) {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(t.Context(), method, u, body)
	if err != nil {
		t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

// createApp creates the App of organisation acme through /setup on the
// replica r, as the token holder's browser does (with the setup code r logged): the form, the manifest posted to
// (fake) GitHub, GitHub's redirect to the callback, the browser sent to
// install the App. It returns the App the fake created.
func createApp(t *testing.T, gh *githubtest.Server, r *replica) githubtest.ManifestApp {
	t.Helper()
	baseURL := r.url
	browser := setupBrowser(t)
	browser.Transport = bearer{e2eToken}
	resp, page := send(t, browser, http.MethodGet, baseURL+"/setup", nil)
	csrf := setupCSRF.FindStringSubmatch(page)
	if resp.StatusCode != http.StatusOK || csrf == nil {
		t.Fatalf("GET /setup = %d without the form:\n%s", resp.StatusCode, page)
	}
	resp, page = send(t, browser, http.MethodPost, baseURL+"/setup", url.Values{
		"csrf": {csrf[1]}, "owner": {"org"}, "org": {"acme"}, "name": {"MergeGuard"},
		"public_url": {baseURL}, "web_url": {gh.WebURL()}, "setup_code": {r.logField(t, "setup_code")},
	})
	action, manifest := setupAction.FindStringSubmatch(page), setupManifest.FindStringSubmatch(page)
	if resp.StatusCode != http.StatusOK || action == nil || manifest == nil {
		t.Fatalf("POST /setup = %d without the manifest form:\n%s", resp.StatusCode, page)
	}
	// GitHub: the browser posts the manifest, GitHub creates the App and
	// redirects back with a code.
	resp, _ = send(t, browser, http.MethodPost, html.UnescapeString(action[1]), url.Values{"manifest": {html.UnescapeString(manifest[1])}})
	callback := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusFound || !strings.HasPrefix(callback, baseURL+"/setup/callback?") {
		t.Fatalf("GitHub answered %d, Location %q", resp.StatusCode, callback)
	}
	resp, page = send(t, browser, http.MethodGet, callback, nil)
	if want := gh.WebURL() + "apps/mergeguard/installations/new"; resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != want {
		t.Fatalf("callback = %d, Location %q; want 303 to %s\n%s", resp.StatusCode, resp.Header.Get("Location"), want, page)
	}
	apps := gh.ManifestApps()
	return apps[len(apps)-1]
}

// TestSetupCreatesTheApp runs the one-click App creation against two
// replicas without a GitHub App: the /setup form on replica A, the
// manifest posted to (fake) GitHub, GitHub's redirect to the callback,
// the credentials stored encrypted, the browser sent to install the App.
// Then a pull request delivery signed with the new App's webhook secret is
// accepted by replica B, which was running before the App existed, and
// the pull request is reviewed through the new App's installation.
func TestSetupCreatesTheApp(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	gh := githubtest.New(t)
	gh.RequireAuth()
	pr := gh.AddPR(newPR("acme", "widgets", 3, 2, "Add user lookup", sha("setup", 1)))
	llm := llmtest.New(t, reviewModel(0))
	dbURL := storetest.Empty(t)
	secretKey := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{9}, 32))
	env := map[string]string{
		"OPENAI_BASE_URL": llm.URL(), "OPENAI_API_KEY": "test", "MERGEGUARD_MODEL": "gpt-4o-mini", "MERGEGUARD_WORKERS": "1",
		"MERGEGUARD_SECRET_KEY": secretKey,
		"GITHUB_WEB_URL":        gh.WebURL(), "GITHUB_V3_API_URL": gh.URL(), "GITHUB_V4_API_URL": gh.GraphQLURL(),
	}
	replicas := startReplicas(t, bin, dbURL, serveOptions{env: env})
	a, b := replicas[0], replicas[1]
	delivery := githubtest.Delivery{Event: "pull_request", ID: "setup-open-1", Payload: payload(t, pr, "opened")}
	app := &fakeApp{gh: gh, client: &http.Client{Timeout: 30 * time.Second}}
	if status, err := app.deliver(t.Context(), b.url, delivery); err != nil || status != http.StatusServiceUnavailable {
		t.Fatalf("a delivery before any App = %d, %v; want 503", status, err)
	}

	created := createApp(t, gh, a)
	if created.Org != "acme" || !created.Converted {
		t.Errorf("the fake's App: org %q, converted %v", created.Org, created.Converted)
	}

	// Stored encrypted: the row holds no credential in clear.
	db := openDB(t, dbURL)
	var appID int64
	var row string
	if err := db.QueryRow(t.Context(), `SELECT app_id, t::text FROM github_app t`).Scan(&appID, &row); err != nil {
		t.Fatal(err)
	}
	if appID != created.ID {
		t.Errorf("stored app_id %d, want %d", appID, created.ID)
	}
	pemBody := strings.Split(created.PrivateKey, "\n")[1]
	for name, secret := range map[string]string{"webhook secret": created.WebhookSecret, "client secret": created.ClientSecret, "key": pemBody} {
		if strings.Contains(row, secret) || strings.Contains(row, fmt.Sprintf("%x", secret)) {
			t.Errorf("the stored row holds the %s in clear", name)
		}
	}

	// Replica B serves the new App without a restart.
	app.secret = []byte(created.WebhookSecret)
	waitFor(t, 30*time.Second, "replica B to accept the new App's webhooks", func() bool {
		status, err := app.deliver(t.Context(), b.url, delivery)
		return err == nil && status == http.StatusOK
	})
	waitFor(t, 60*time.Second, "the review of acme/widgets#3", func() bool { return len(gh.Reviews("acme", "widgets", 3)) > 0 })
	reviews := gh.Reviews("acme", "widgets", 3)
	if len(reviews) != 1 || reviews[0].CommitID != pr.HeadSHA || reviews[0].User.Login != "mergeguard[bot]" {
		t.Errorf("reviews %+v, want one on %s by mergeguard[bot]", reviews, pr.HeadSHA)
	}
	// Replica A too.
	if status, err := app.deliver(t.Context(), a.url, delivery); err != nil || status != http.StatusOK {
		t.Errorf("a redelivery to replica A = %d, %v; want 200", status, err)
	}
}
