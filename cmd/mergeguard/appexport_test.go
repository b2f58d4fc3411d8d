package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/github/githubtest"
	"github.com/mergeguard/mergeguard/server/store"
	"github.com/mergeguard/mergeguard/server/store/storetest"
)

var (
	testSecretKey  = base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{5}, 32))
	otherSecretKey = strings.Repeat("ab", 32)
)

// storeApp stores an App in the database at dbURL as /setup does.
func storeApp(t *testing.T, dbURL string, app store.AppCredentials) {
	t.Helper()
	st, err := store.Open(t.Context(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	key, err := config.ParseSecretKey(testSecretKey)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.SetSecretKey(key); err != nil {
		t.Fatal(err)
	}
	if err := st.SaveAppCredentials(t.Context(), app); err != nil {
		t.Fatal(err)
	}
}

func TestAppExport(t *testing.T) {
	t.Parallel()
	dbURL := storetest.URL(t)
	empty := storetest.URL(t)
	storeApp(t, dbURL, store.AppCredentials{AppID: 77, Slug: "mg", HTMLURL: "https://github.com/apps/mg", ClientID: "Iv1.x",
		PrivateKey: "-----BEGIN RSA PRIVATE KEY-----\nAAA\nBBB\n-----END RSA PRIVATE KEY-----\n", WebhookSecret: "it's-secret", ClientSecret: "cs"})
	tests := []struct {
		name    string
		args    []string
		vars    map[string]string
		want    string
		wantErr string
	}{
		{"multi-line key", []string{"app", "export"}, map[string]string{"DATABASE_URL": dbURL, "MERGEGUARD_SECRET_KEY": testSecretKey},
			"# GitHub App mg (https://github.com/apps/mg), created at /setup\nGITHUB_APP_INTEGRATION_ID='77'\n" +
				"GITHUB_APP_WEBHOOK_SECRET='it'\\''s-secret'\nGITHUB_APP_PRIVATE_KEY='-----BEGIN RSA PRIVATE KEY-----\nAAA\nBBB\n-----END RSA PRIVATE KEY-----\n'\n" +
				"GITHUB_OAUTH_CLIENT_ID='Iv1.x'\nGITHUB_OAUTH_CLIENT_SECRET='cs'\n", ""},
		{"one-line key", []string{"app", "--one-line", "export"}, map[string]string{"DATABASE_URL": dbURL, "MERGEGUARD_SECRET_KEY": testSecretKey},
			`GITHUB_APP_PRIVATE_KEY='-----BEGIN RSA PRIVATE KEY-----\nAAA\nBBB\n-----END RSA PRIVATE KEY-----'`, ""},
		{"no key", []string{"app", "export"}, map[string]string{"DATABASE_URL": dbURL}, "", "MERGEGUARD_SECRET_KEY is not set"},
		{"another key", []string{"app", "export"}, map[string]string{"DATABASE_URL": dbURL, "MERGEGUARD_SECRET_KEY": otherSecretKey}, "", "do not decrypt with MERGEGUARD_SECRET_KEY"},
		{"nothing stored", []string{"app", "export"}, map[string]string{"DATABASE_URL": empty, "MERGEGUARD_SECRET_KEY": testSecretKey}, "", "no GitHub App is stored"},
		{"no database", []string{"app", "export"}, map[string]string{"MERGEGUARD_SECRET_KEY": testSecretKey}, "", "DATABASE_URL"},
		{"unknown action", []string{"app", "import"}, map[string]string{}, "", "the only action is export"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout bytes.Buffer
			err := runIn(t.Context(), testProcess, tt.args, env(tt.vars), &stdout, io.Discard)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), "it's-secret") || strings.Contains(err.Error(), "PRIVATE KEY") {
					t.Errorf("the error shows a secret: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(stdout.String(), tt.want) {
				t.Errorf("output:\n%s\nwant it to contain:\n%s", stdout.String(), tt.want)
			}
		})
	}
}

// TestServeSwapsInTheStoredApp: serve without an App answers webhooks 503;
// once an App is stored (by /setup on any replica) it serves the App's
// webhooks without a restart.
func TestServeSwapsInTheStoredApp(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	s, gh, dbURL := serveWithoutApp(ctx, t)
	ping := githubtest.Delivery{Event: "ping", ID: "ping-1", Payload: []byte(`{"zen":"Keep it logically awesome."}`)}
	deliver := func(secret string) int { return postDelivery(ctx, t, s.base, ping, secret) }
	if status := deliver("whatever"); status != http.StatusServiceUnavailable {
		t.Errorf("webhook without an App = %d, want 503", status)
	}
	// The stored App is the fake's: its key signs the JWTs the fake checks.
	app := gh.AppConfig(4242)
	storeApp(t, dbURL, store.AppCredentials{AppID: 4242, Slug: "mergeguard", HTMLURL: gh.WebURL() + "apps/mergeguard",
		PrivateKey: config.Secret(app.App.PrivateKey), WebhookSecret: "stored-secret"})
	deadline := time.Now().Add(20 * time.Second)
	for deliver("stored-secret") == http.StatusServiceUnavailable {
		if time.Now().After(deadline) {
			t.Fatalf("the stored App was not swapped in\n%s", s.logs)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if status := deliver("stored-secret"); status/100 != 2 {
		t.Errorf("webhook signed with the stored secret = %d, want 2xx\n%s", status, s.logs)
	}
	if status := deliver("wrong-secret"); status != http.StatusUnauthorized {
		t.Errorf("webhook signed with another secret = %d, want 401", status)
	}
	if strings.Contains(s.logs.String(), "stored-secret") || strings.Contains(s.logs.String(), "PRIVATE KEY") {
		t.Error("the log shows a stored secret")
	}
	s.stop(t, cancel)
}

// TestServeRereadsTheStoredAppBeforeRefusing: a replica that receives a
// delivery while it has no App, or one whose signature its App does not
// verify, reads the stored App again before refusing it: a delivery sent
// right after another replica stored the App (GitHub sends installation
// at once) or rotated its secret is accepted, not answered 503 or 401
// until the next poll (GitHub does not redeliver by itself). A delivery
// signed with no stored secret is still 401.
func TestServeRereadsTheStoredAppBeforeRefusing(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	s, gh, dbURL := serveWithoutApp(ctx, t)
	app := gh.AppConfig(4242)
	creds := store.AppCredentials{AppID: 4242, Slug: "mergeguard", HTMLURL: gh.WebURL() + "apps/mergeguard",
		PrivateKey: config.Secret(app.App.PrivateKey)}
	steps := []struct {
		name   string
		store  string // the webhook secret stored (by another replica) just before; "" stores nothing
		signed string
		want   int
	}{
		{"right after the App was stored", "first-secret", "first-secret", http.StatusOK},
		{"right after its secret was rotated", "rotated-secret", "rotated-secret", http.StatusOK},
		{"signed with a secret never stored", "", "wrong-secret", http.StatusUnauthorized},
	}
	for i, step := range steps {
		if step.store != "" {
			creds.WebhookSecret = config.Secret(step.store)
			storeApp(t, dbURL, creds)
		}
		ping := githubtest.Delivery{Event: "ping", ID: fmt.Sprintf("ping-%d", i), Payload: []byte(`{"zen":"Keep it logically awesome."}`)}
		if status := postDelivery(ctx, t, s.base, ping, step.signed); status != step.want {
			t.Errorf("%s: %d, want %d\n%s", step.name, status, step.want, s.logs)
		}
		time.Sleep(1100 * time.Millisecond) // re-reads are at most one a second
	}
	s.stop(t, cancel)
}

// postDelivery posts d, signed with secret, to serve's webhook route at
// base and returns the status.
func postDelivery(ctx context.Context, t *testing.T, base string, d githubtest.Delivery, secret string) int {
	t.Helper()
	req, err := d.Request(ctx, base+"/api/github/hook", []byte(secret))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// serveWithoutApp starts serve with a secret key and no App, on a new
// database and the GitHub fake it returns with the database's URL.
func serveWithoutApp(ctx context.Context, t *testing.T) (serving, *githubtest.Server, string) {
	t.Helper()
	gh := githubtest.New(t)
	base := gh.AppConfig(1) // the fake's URLs; the App itself is one stored later
	dbURL := storetest.URL(t)
	s := startServe(t, ctx, map[string]string{
		"DATABASE_URL": dbURL, "MERGEGUARD_SECRET_KEY": testSecretKey, "MERGEGUARD_WORKERS": "0",
		"GITHUB_V3_API_URL": base.V3APIURL, "GITHUB_V4_API_URL": base.V4APIURL,
	})
	return s, gh, dbURL
}
