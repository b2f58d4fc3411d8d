package githubtest

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
)

// Routes of the manifest flow: GitHub's web pages that take a manifest
// (a form POST from the browser; not part of the REST API) and the REST
// conversion of the code GitHub redirects back with.
const (
	RouteNewAppFromManifest    = "POST /settings/apps/new"
	RouteNewOrgAppFromManifest = "POST /organizations/{org}/settings/apps/new"
	RouteManifestConversion    = "POST /app-manifests/{code}/conversions"
)

const docManifestConversion = "https://docs.github.com/rest/apps/apps#create-a-github-app-from-a-manifest"

// ManifestApp is an App the fake created from a manifest.
type ManifestApp struct {
	// Org is the organisation that owns it, "" for a personal account.
	Org string
	// Manifest is the manifest as posted.
	Manifest map[string]any
	// Code is the code the browser was redirected with; Converted
	// reports whether it was exchanged.
	Code      string
	Converted bool
	// The App's identity and credentials, as the conversion answers them.
	ID                                    int64
	Slug                                  string
	ClientID, ClientSecret, WebhookSecret string
	PrivateKey                            string
}

// WebURL returns the fake's web address (GITHUB_WEB_URL), where the
// manifest flow's and OAuth's pages are (the fake serves them beside the
// API), with a trailing slash.
func (s *Server) WebURL() string { return s.srv.URL + "/" }

// ManifestApps returns the Apps created from manifests, oldest first.
func (s *Server) ManifestApps() []ManifestApp {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]ManifestApp, len(s.manifestApps))
	for i, a := range s.manifestApps {
		out[i] = *a
	}
	return out
}

// newAppFromManifest is GitHub's "Create GitHub App" page with the
// manifest filled in, confirmed at once: it creates the App (a fresh key,
// which the fake's App routes then check JWTs against, and the bot
// "<slug>[bot]") and redirects the browser to the manifest's redirect_url
// with a single-use code and the state.
func (s *Server) newAppFromManifest(w http.ResponseWriter, r *http.Request) {
	var manifest map[string]any
	if err := json.Unmarshal([]byte(r.FormValue("manifest")), &manifest); err != nil {
		http.Error(w, "Invalid GitHub App configuration: the manifest is not JSON", http.StatusUnprocessableEntity)
		return
	}
	redirect, err := manifestRedirect(manifest)
	if err != nil {
		http.Error(w, "Invalid GitHub App configuration: "+err.Error(), http.StatusUnprocessableEntity)
		return
	}
	app, err := s.createManifestApp(r.PathValue("org"), manifest)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	q := redirect.Query()
	q.Set("code", app.Code)
	if state := r.URL.Query().Get("state"); state != "" {
		q.Set("state", state)
	}
	redirect.RawQuery = q.Encode()
	http.Redirect(w, r, redirect.String(), http.StatusFound)
}

// manifestRedirect checks what GitHub requires of a manifest (url,
// hook_attributes.url, redirect_url absolute) and returns redirect_url.
func manifestRedirect(m map[string]any) (*url.URL, error) {
	hook, _ := m["hook_attributes"].(map[string]any)
	for key, v := range map[string]any{"url": m["url"], "hook_attributes.url": hook["url"], "redirect_url": m["redirect_url"]} {
		str, _ := v.(string)
		if u, err := url.Parse(str); err != nil || u.Scheme == "" || u.Host == "" {
			return nil, fmt.Errorf("%s must be an absolute URL", key)
		}
	}
	return url.Parse(m["redirect_url"].(string))
}

var nonSlug = regexp.MustCompile(`[^a-z0-9]+`)

func (s *Server) createManifestApp(org string, manifest map[string]any) (*ManifestApp, error) {
	key, err := rsa.GenerateKey(rand.Reader, testKeyBits)
	if err != nil {
		return nil, fmt.Errorf("githubtest: generate App key: %w", err)
	}
	name, _ := manifest["name"].(string)
	slug := strings.Trim(nonSlug.ReplaceAllString(strings.ToLower(name), "-"), "-")
	if slug == "" {
		slug = "app"
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	id := s.id()
	app := &ManifestApp{
		Org: org, Manifest: manifest, Code: randomHex(10), ID: id, Slug: slug,
		ClientID: "Iv1." + randomHex(8), ClientSecret: randomHex(20), WebhookSecret: randomHex(20),
		PrivateKey: string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})),
	}
	s.manifestApps = append(s.manifestApps, app)
	s.appKey = &appKey{integrationID: id, public: &key.PublicKey}
	s.bot.Login = slug + "[bot]"
	return app, nil
}

// manifestConversion answers POST /app-manifests/{code}/conversions:
// the App a manifest created, with its credentials, once per code (404
// for an unknown or used code, as GitHub).
func (s *Server) manifestConversion(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var app *ManifestApp
	for _, a := range s.manifestApps {
		if a.Code == r.PathValue("code") && !a.Converted {
			app = a
		}
	}
	if app == nil {
		writeNotFound(w, docManifestConversion)
		return
	}
	app.Converted = true
	m := s.example("integration-from-manifest.json")
	name, _ := app.Manifest["name"].(string)
	m["id"], m["slug"], m["name"] = app.ID, app.Slug, name
	m["html_url"] = s.srv.URL + "/apps/" + app.Slug
	m["client_id"], m["client_secret"], m["webhook_secret"], m["pem"] = app.ClientID, app.ClientSecret, app.WebhookSecret, app.PrivateKey
	if owner, ok := m["owner"].(map[string]any); ok && app.Org != "" {
		owner["login"], owner["type"] = app.Org, "Organization"
	}
	writeJSON(w, http.StatusCreated, m)
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return hex.EncodeToString(b)
}

// manifestRoute reports whether route is one of the manifest flow's, which
// need no authentication.
func manifestRoute(route string) bool {
	return route == RouteNewAppFromManifest || route == RouteNewOrgAppFromManifest || route == RouteManifestConversion
}
