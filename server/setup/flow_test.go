package setup_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSetupFlow(t *testing.T) {
	t.Parallel() // each test has its own database and servers
	e := newEnv(t, options{})
	action, manifest := e.start(t, e.browser, orgForm(e))
	if !strings.HasPrefix(action, e.fake.WebURL()+"organizations/acme/settings/apps/new?state=") {
		t.Errorf("the manifest goes to %q, want the organisation's new App page", action)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(manifest), &m); err != nil {
		t.Fatalf("manifest is not JSON: %v\n%s", err, manifest)
	}
	want := map[string]any{
		"name": "MergeGuard", "url": "https://mg.example.com/",
		"hook_attributes": map[string]any{"url": "https://mg.example.com/api/github/hook", "active": true},
		"redirect_url":    "https://mg.example.com/setup/callback",
		"callback_urls":   []any{"https://mg.example.com/signin/github/callback"},
		"setup_url":       "https://mg.example.com/setup",
	}
	for k, v := range want {
		if diff := cmp.Diff(v, m[k]); diff != "" {
			t.Errorf("manifest %s (-want +got):\n%s", k, diff)
		}
	}
	if perms, _ := m["default_permissions"].(map[string]any); perms["pull_requests"] != "write" || perms["checks"] != "write" {
		t.Errorf("manifest permissions = %v, want deploy/github-app.yml's", m["default_permissions"])
	}

	callback := e.github(t, action, manifest)
	cbURL, _ := url.Parse(callback)
	nonce := e.browser.Jar.Cookies(cbURL)
	status, body, resp := get(t, e.browser, callback)
	created := e.fake.ManifestApps()[0]
	wantLoc := strings.TrimSuffix(e.fake.WebURL(), "/") + "/apps/mergeguard/installations/new"
	if status != http.StatusSeeOther || resp.Header.Get("Location") != wantLoc {
		t.Fatalf("callback = %d, Location %q; want 303 to %s\n%s", status, resp.Header.Get("Location"), wantLoc, body)
	}
	app, ok, err := e.st.AppCredentials(t.Context())
	if err != nil || !ok {
		t.Fatalf("AppCredentials = %v, %v", ok, err)
	}
	if app.AppID != created.ID || app.WebhookSecret.Value() != created.WebhookSecret || app.PrivateKey.Value() != created.PrivateKey ||
		app.ClientID != created.ClientID || app.ClientSecret.Value() != created.ClientSecret || app.Slug != "mergeguard" {
		t.Errorf("stored App %d %s differs from the created one %d", app.AppID, app.Slug, created.ID)
	}
	for _, secret := range []string{created.WebhookSecret, created.ClientSecret, "PRIVATE KEY", created.Code} {
		if strings.Contains(e.log.String(), secret) {
			t.Errorf("the log contains a secret %q:\n%s", secret, e.log)
		}
	}

	// The same callback again, with the browser's nonce: refused.
	if len(nonce) == 0 {
		t.Fatal("the browser had no setup cookie")
	}
	replay := newBrowser(t)
	replay.Jar.SetCookies(cbURL, nonce)
	status, body, _ = get(t, replay, callback)
	if status != http.StatusBadRequest || !strings.Contains(body, "unknown or was already used") {
		t.Errorf("replayed callback = %d:\n%s", status, body)
	}
	// The finishing browser's cookie was cleared.
	if got := e.browser.Jar.Cookies(cbURL); len(got) != 0 && got[0].Name == "mergeguard_setup" {
		t.Errorf("the setup cookie is still set after the callback: %v", got)
	}
	// The page now shows the stored App.
	if status, body, _ = get(t, e.browser, e.local()+"/setup"); status != http.StatusOK || !strings.Contains(body, `id="stored"`) {
		t.Errorf("GET /setup after the flow = %d, without the stored App:\n%s", status, body)
	}
}

func TestCallbackRefusals(t *testing.T) {
	t.Parallel() // each test has its own database and servers
	e := newEnv(t, options{})
	action, manifest := e.start(t, e.browser, orgForm(e))
	callback := e.github(t, action, manifest)

	tests := []struct {
		name    string
		browser *http.Client
		url     string
		want    string
	}{
		{"another browser, no cookie", newBrowser(t), callback, "This browser has no setup cookie"},
		{"a forged state", e.browser, strings.Replace(callback, "state=", "state=x", 1), "unknown or was already used"},
		{"no code", e.browser, e.local() + "/setup/callback?state=abc", "Setup link incomplete"},
	}
	for _, tt := range tests {
		status, body, _ := get(t, tt.browser, tt.url)
		if status != http.StatusBadRequest || !strings.Contains(body, tt.want) {
			t.Errorf("%s: callback = %d, want 400 saying %q:\n%s", tt.name, status, tt.want, body)
		}
	}
	// Another browser that started its own setup: its cookie does not
	// match this state.
	other := newBrowser(t)
	e.start(t, other, orgForm(e))
	if status, body, _ := get(t, other, callback); status != http.StatusBadRequest || !strings.Contains(body, "started in another browser") {
		t.Errorf("foreign browser: callback = %d:\n%s", status, body)
	}
	if _, ok, _ := e.st.AppCredentials(t.Context()); ok {
		t.Fatal("an App was stored by a refused callback")
	}
	// The starting browser still finishes.
	if status, body, _ := get(t, e.browser, callback); status != http.StatusSeeOther {
		t.Errorf("the starting browser: callback = %d:\n%s", status, body)
	}
}

func TestSetupPageOff(t *testing.T) {
	t.Parallel() // each test has its own database and servers
	tests := []struct {
		name string
		o    options
		want []string
	}{
		{"without the secret key", options{noKey: true}, []string{"MERGEGUARD_SECRET_KEY", "openssl rand -base64 32"}},
		{"with an App from the environment", options{configured: true}, []string{"GITHUB_APP_INTEGRATION_ID", "therefore off"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, tt.o)
			status, body, _ := get(t, e.browser, e.local()+"/setup")
			if status != http.StatusOK || strings.Contains(body, `id="setup-form"`) {
				t.Errorf("GET /setup = %d, offering the form:\n%s", status, body)
			}
			for _, w := range tt.want {
				if !strings.Contains(body, w) {
					t.Errorf("GET /setup does not say %q:\n%s", w, body)
				}
			}
			// The flow is refused too.
			status, _, _ = get(t, e.browser, e.local()+"/setup/callback?code=c&state=s")
			if status != http.StatusConflict {
				t.Errorf("callback = %d, want 409", status)
			}
		})
	}
}

func TestSetupGuard(t *testing.T) {
	t.Parallel() // each test has its own database and servers
	e := newEnv(t, options{token: "tok"})
	// With a token configured, local requests need it too.
	status, _, _ := get(t, e.browser, e.local()+"/setup")
	if status != http.StatusUnauthorized {
		t.Errorf("GET /setup without the token = %d, want 401", status)
	}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, e.local()+"/setup", nil)
	req.Header.Set("Authorization", "Bearer tok")
	if status, _, _ = do(t, e.browser, req); status != http.StatusOK {
		t.Errorf("GET /setup with the token = %d, want 200", status)
	}
	// A cross-site form post, and one without the CSRF field.
	form := orgForm(e)
	req, _ = http.NewRequestWithContext(t.Context(), http.MethodPost, e.local()+"/setup", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Authorization", "Bearer tok")
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	if status, _, _ = do(t, e.browser, req); status != http.StatusForbidden {
		t.Errorf("cross-site POST /setup = %d, want 403", status)
	}
	req, _ = http.NewRequestWithContext(t.Context(), http.MethodPost, e.local()+"/setup", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Authorization", "Bearer tok")
	if status, _, _ = do(t, e.browser, req); status != http.StatusForbidden {
		t.Errorf("POST /setup without the CSRF field = %d, want 403", status)
	}
}

func TestSetupFormProblems(t *testing.T) {
	t.Parallel() // each test has its own database and servers
	e := newEnv(t, options{})
	status, body, _ := get(t, e.browser, e.local()+"/setup")
	csrf := csrfField.FindStringSubmatch(body)
	if status != http.StatusOK || csrf == nil {
		t.Fatalf("GET /setup = %d", status)
	}
	form := url.Values{"csrf": {csrf[1]}, "owner": {"org"}, "org": {"-bad-"}, "name": {""},
		"public_url": {"mg.example.com"}, "web_url": {"https://github.com/?x=1"}}
	status, body, _ = post(t, e.browser, e.local()+"/setup", form)
	for _, want := range []string{"organisation&#39;s name", "App&#39;s name", "public URL must be an absolute", "web URL must not have a query"} {
		if !strings.Contains(body, want) {
			t.Errorf("the form's problems do not say %q", want)
		}
	}
	if status != http.StatusBadRequest {
		t.Errorf("POST /setup with a bad form = %d, want 400", status)
	}
}

// The embedded manifest is deploy/github-app.yml (go generate copies it).
func TestManifestIsDeploys(t *testing.T) {
	t.Parallel() // each test has its own database and servers
	ours, err := os.ReadFile("github-app.yml")
	if err != nil {
		t.Fatal(err)
	}
	deploy, err := os.ReadFile("../../deploy/github-app.yml")
	if err != nil {
		t.Fatal(err)
	}
	if string(ours) != string(deploy) {
		t.Error("server/setup/github-app.yml differs from deploy/github-app.yml: run `go generate ./server/setup/`")
	}
}
