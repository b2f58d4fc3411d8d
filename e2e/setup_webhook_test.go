package e2e

import (
	"bytes"
	"encoding/base64"
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mergeguard/mergeguard/github/githubtest"
	"github.com/mergeguard/mergeguard/server/store/storetest"
)

// createApp runs /setup on the replica at base against the fake GitHub,
// as a browser does (form, manifest posted to GitHub, callback), and
// returns the App the fake created once the callback sent the browser to
// install it.
func createApp(t *testing.T, gh *githubtest.Server, base string) githubtest.ManifestApp {
	t.Helper()
	browser := setupBrowser(t)
	resp, page := send(t, browser, http.MethodGet, base+"/setup", nil)
	csrf := setupCSRF.FindStringSubmatch(page)
	if resp.StatusCode != http.StatusOK || csrf == nil {
		t.Fatalf("GET /setup = %d without the form:\n%s", resp.StatusCode, page)
	}
	resp, page = send(t, browser, http.MethodPost, base+"/setup", url.Values{
		"csrf": {csrf[1]}, "owner": {"org"}, "org": {"acme"}, "name": {"MergeGuard"},
		"public_url": {base}, "web_url": {gh.WebURL()},
	})
	action, manifest := setupAction.FindStringSubmatch(page), setupManifest.FindStringSubmatch(page)
	if resp.StatusCode != http.StatusOK || action == nil || manifest == nil {
		t.Fatalf("POST /setup = %d without the manifest form:\n%s", resp.StatusCode, page)
	}
	resp, _ = send(t, browser, http.MethodPost, html.UnescapeString(action[1]), url.Values{"manifest": {html.UnescapeString(manifest[1])}})
	callback := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusFound || !strings.HasPrefix(callback, base+"/setup/callback?") {
		t.Fatalf("GitHub answered %d, Location %q", resp.StatusCode, callback)
	}
	resp, page = send(t, browser, http.MethodGet, callback, nil)
	if resp.StatusCode != http.StatusSeeOther || !strings.HasSuffix(resp.Header.Get("Location"), "/installations/new") {
		t.Fatalf("callback = %d, Location %q; want 303 to the App's installation page\n%s", resp.StatusCode, resp.Header.Get("Location"), page)
	}
	apps := gh.ManifestApps()
	return apps[len(apps)-1]
}

// TestSetupThenWebhookAtOnce: GitHub sends the installation delivery as
// soon as the user installs the App /setup created, and does not send it
// again. Right after the callback, that delivery is accepted (2xx) by the
// replica that stored the App (it serves it at once) and by another
// replica (it reads the stored App again when it has none), not answered
// 503 until the next notification or poll.
func TestSetupThenWebhookAtOnce(t *testing.T) {
	bin := buildBinary(t)
	gh := githubtest.New(t)
	gh.RequireAuth()
	secretKey := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32))
	env := map[string]string{
		"MERGEGUARD_WORKERS": "0", "MERGEGUARD_SECRET_KEY": secretKey,
		"GITHUB_WEB_URL": gh.WebURL(), "GITHUB_V3_API_URL": gh.URL(), "GITHUB_V4_API_URL": gh.GraphQLURL(),
	}
	replicas := startReplicas(t, bin, storetest.Empty(t), serveOptions{env: env})
	created := createApp(t, gh, replicas[0].url)
	app := &fakeApp{gh: gh, secret: []byte(created.WebhookSecret), client: &http.Client{Timeout: 30 * time.Second}}
	installation := githubtest.Payload(t, "installation/created.payload.json")
	for _, r := range replicas {
		d := githubtest.Delivery{Event: "installation", ID: "installed-" + strings.ReplaceAll(r.name, " ", "-"), Payload: installation}
		if status, err := app.deliver(t.Context(), r.url, d); err != nil || status/100 != 2 {
			t.Errorf("installation delivered to %s right after /setup = %d, %v; want 2xx", r.name, status, err)
		}
	}
}
