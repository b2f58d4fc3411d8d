package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/palantir/go-githubapp/githubapp"

	"github.com/mergeguard/mergeguard/github"
	"github.com/mergeguard/mergeguard/github/githubtest"
)

// createFromManifest posts a manifest to the fake's "new App" page as a
// browser does and returns the code of the redirect to redirect_url.
func createFromManifest(t *testing.T, fake *githubtest.Server, path string) string {
	t.Helper()
	manifest, _ := json.Marshal(map[string]any{
		"name": "MergeGuard Acme", "url": "https://mg.example.com/",
		"hook_attributes": map[string]any{"url": "https://mg.example.com/api/github/hook"},
		"redirect_url":    "https://mg.example.com/setup/callback",
	})
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.PostForm(fake.WebURL()+path+"?state=s1", url.Values{"manifest": {string(manifest)}})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	loc, err := url.Parse(resp.Header.Get("Location"))
	if resp.StatusCode != http.StatusFound || err != nil || loc.Host != "mg.example.com" || loc.Query().Get("state") != "s1" {
		t.Fatalf("new App page answered %d, Location %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	return loc.Query().Get("code")
}

func TestConvertManifest(t *testing.T) {
	fake := githubtest.New(t)
	code := createFromManifest(t, fake, "organizations/acme/settings/apps/new")
	opts := ManifestOptions{APIURL: fake.URL(), Version: "test"}
	app, err := ConvertManifest(t.Context(), code, opts)
	if err != nil {
		t.Fatal(err)
	}
	created := fake.ManifestApps()[0]
	if app.ID != created.ID || app.Slug != "mergeguard-acme" || app.ClientID != created.ClientID ||
		app.WebhookSecret.Value() != created.WebhookSecret || app.PrivateKey.Value() != created.PrivateKey ||
		app.ClientSecret.Value() != created.ClientSecret || !strings.HasSuffix(app.HTMLURL, "/apps/mergeguard-acme") {
		t.Errorf("ConvertManifest = %+v, want the App the fake created (%d %s)", app, created.ID, created.Slug)
	}
	if created.Org != "acme" {
		t.Errorf("the App's owner is %q, want the organisation acme", created.Org)
	}

	// The key works: the App's JWT is accepted by GET /app.
	var ghc githubapp.Config
	ghc.V3APIURL, ghc.V4APIURL = fake.URL(), fake.GraphQLURL()
	ghc.App.IntegrationID, ghc.App.PrivateKey = app.ID, app.PrivateKey.Value()
	cc, err := github.NewClientCreator(ghc, github.ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	inst, err := github.NewInstallations(t.Context(), cc, fake.WebURL(), github.PublisherOptions{MaxInlineComments: 30})
	if err != nil {
		t.Fatalf("the new App's key is refused: %v", err)
	}
	if inst.Login() != "mergeguard-acme[bot]" {
		t.Errorf("Login = %q, want mergeguard-acme[bot]", inst.Login())
	}

	// A code works once; garbage never reaches GitHub.
	tests := map[string]string{"replayed": code, "unknown": "0123abcd", "not a code": "../../user"}
	for name, c := range tests {
		_, err := ConvertManifest(t.Context(), c, opts)
		if !errors.Is(err, ErrManifestCode) {
			t.Errorf("%s: ConvertManifest = %v, want ErrManifestCode", name, err)
		}
		if err != nil && strings.Contains(err.Error(), c) {
			t.Errorf("%s: the error quotes the code: %v", name, err)
		}
	}
}

func TestConvertManifestUnreachable(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := ConvertManifest(ctx, "abc", ManifestOptions{APIURL: "http://127.0.0.1:1/"})
	if err == nil || errors.Is(err, ErrManifestCode) {
		t.Errorf("ConvertManifest = %v, want a failure to reach GitHub", err)
	}
}
