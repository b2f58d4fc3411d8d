// Package setup serves /setup, the one-click creation of MergeGuard's
// GitHub App with GitHub's manifest flow: a form (owner, name, public URL,
// GitHub's address) posts the App manifest to GitHub; GitHub creates the
// App and sends the browser back to /setup/callback with a code, which is
// exchanged for the App's credentials; they are stored encrypted and the
// browser goes on to install the App.
//
// Only the API token's holder may use it, and while no App is stored the
// form also asks for a one-time setup code that serve prints in its log
// (Code, AnnounceCode), as Grafana and Jenkins do; the manifest goes only
// to https://github.com or the configured GitHub Enterprise host.
//
// The flow is bound to the browser that started it: a random state goes
// to GitHub and back, a random nonce stays in a cookie, and the database
// keeps only their hashes, so any replica can finish the flow, once,
// within ten minutes, in that browser only.
package setup

import (
	"context"
	"crypto/subtle"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/mergeguard/mergeguard/github"
	"github.com/mergeguard/mergeguard/github/oauth"
	"github.com/mergeguard/mergeguard/server/access"
	"github.com/mergeguard/mergeguard/server/store"
)

//go:embed templates/*.html setup.js github-app.yml
var assets embed.FS

// Store is what the flow keeps in the database; *store.Store implements it.
type Store interface {
	CreateSetupState(ctx context.Context, st store.SetupState, ttl time.Duration) error
	TakeSetupState(ctx context.Context, stateHash, browserHash []byte) (webURL string, err error)
	SaveAppCredentials(ctx context.Context, c store.AppCredentials) error
	AppCredentials(ctx context.Context) (store.AppCredentials, bool, error)
	// AccessSecret returns the stored secret name (the setup code),
	// storing fresh first when none is.
	AccessSecret(ctx context.Context, name, fresh string) (string, error)
}

// Converter exchanges a manifest code with the GitHub API at apiURL for
// the new App; oauth.ConvertManifest with options is one.
type Converter func(ctx context.Context, apiURL, code string) (oauth.ManifestApp, error)

// Deps are the flow's collaborators and settings.
type Deps struct {
	Store  Store
	Access access.Policy
	// Manifest is the App manifest in YAML (deploy/github-app.yml).
	Manifest []byte
	// PublicURL (server.public_url) prefills the form; empty uses the
	// request's own address.
	PublicURL string
	// WebURL and APIURL are the configured GitHub (github.web_url,
	// github.v3_api_url). A manifest sent to another GitHub web address is
	// converted with its Enterprise API, WEB/api/v3/.
	WebURL, APIURL string
	// Configured is set when the GitHub App comes from the environment or
	// the configuration file: those win, and the flow is off.
	Configured bool
	// SecretKey is set when MERGEGUARD_SECRET_KEY is: without it nothing
	// can be stored encrypted, and the flow is off.
	SecretKey bool
	Convert   Converter
	// Stored, when set, is called once the App is stored, before the
	// browser is sent to install it: `mergeguard serve` serves the App at
	// once, so that the installation delivery GitHub sends right after
	// is accepted.
	Stored func(ctx context.Context)
	Logger zerolog.Logger
}

// Setup serves the /setup routes.
type Setup struct {
	d     Deps
	pages map[string]*template.Template
}

// New parses the pages.
func New(d Deps) (*Setup, error) {
	if d.Store == nil || d.Convert == nil {
		return nil, errors.New("setup: a store and a converter are required")
	}
	if d.WebURL == "" {
		d.WebURL = github.DefaultWebURL
	}
	if d.APIURL == "" {
		d.APIURL = github.DefaultV3APIURL
	}
	s := &Setup{d: d, pages: map[string]*template.Template{}}
	for _, name := range []string{"form", "continue", "message"} {
		t, err := template.ParseFS(assets, "templates/layout.html", "templates/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("setup: parse template %s: %w", name, err)
		}
		s.pages[name] = t
	}
	return s, nil
}

// Register adds the routes to mux.
func (s *Setup) Register(mux *http.ServeMux) {
	mux.Handle("GET /setup", s.guard(s.form))
	mux.Handle("POST /setup", s.guard(s.start))
	// The callback comes from GitHub's redirect, without the API token
	// (its cookie is SameSite=Strict): the state and the browser's nonce,
	// which only a request that passed the guard obtained, authorise it.
	mux.HandleFunc("GET "+CallbackPath, s.callback)
	mux.HandleFunc("GET /setup/setup.js", s.script)
}

// guard refuses cross-site POSTs (403), requests without the API token
// from other machines (401) and form posts without the CSRF token (403).
func (s *Setup) guard(h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := s.d.Access.CheckOrigin(r); err != nil {
			http.Error(w, "Cross-site request refused.", http.StatusForbidden)
			return
		}
		if !s.d.Access.Allow(r) {
			s.message(w, r, http.StatusUnauthorized, "Sign-in needed",
				"Sign in first: open the sign-in link MergeGuard printed in its log at start, or sign in with the API token at /signin?next=/setup.")
			return
		}
		if r.Method == http.MethodPost && !csrfOK(r) {
			http.Error(w, "Missing or wrong CSRF token: reload the page and try again.", http.StatusForbidden)
			return
		}
		h(w, r)
	})
}

// csrfOK checks the double-submit token of a form post: the csrf field
// must equal the CSRF cookie.
func csrfOK(r *http.Request) bool {
	c, err := r.Cookie(access.CSRFCookie)
	if err != nil || len(c.Value) != 64 {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(r.PostFormValue("csrf")), []byte(c.Value)) == 1
}

// off says why the flow cannot run, "" when it can.
func (s *Setup) off() (title, msg string) {
	switch {
	case s.d.Configured:
		return "GitHub App configured", "MergeGuard uses the GitHub App set in its environment or configuration file " +
			"(GITHUB_APP_INTEGRATION_ID, GITHUB_APP_WEBHOOK_SECRET, GITHUB_APP_PRIVATE_KEY). Those win over /setup, which is therefore off. " +
			"To create an App here instead, remove them and restart."
	case !s.d.SecretKey:
		return "Secret key needed", "MergeGuard stores the new App's private key and secrets encrypted, and has no key to encrypt them with. " +
			"Set MERGEGUARD_SECRET_KEY to 32 random bytes, for example the output of `openssl rand -base64 32` " +
			"(the same value on every replica, kept like a password), restart MergeGuard and open /setup again."
	}
	return "", ""
}

func (s *Setup) form(w http.ResponseWriter, r *http.Request) {
	if title, msg := s.off(); title != "" {
		s.message(w, r, http.StatusOK, title, msg)
		return
	}
	f := Form{Owner: "org", Name: "MergeGuard", PublicURL: s.d.PublicURL, WebURL: s.d.WebURL}
	if f.PublicURL == "" {
		f.PublicURL = requestBase(r)
	}
	s.renderForm(w, r, http.StatusOK, f, nil)
}

// codeField is the form field of the setup code.
const codeField = "setup_code"

// requestBase is the address the request was sent to, to prefill the
// public URL (the person checks it).
func requestBase(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil || r.Header.Get("X-Forwarded-Proto") == "https" {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

func (s *Setup) renderForm(w http.ResponseWriter, r *http.Request, status int, f Form, problem error) {
	data := map[string]any{"Title": "Create the GitHub App", "Form": f}
	if problem != nil {
		data["Problems"] = strings.Split(problem.Error(), "\n")
	}
	app, ok, err := s.d.Store.AppCredentials(r.Context())
	data["NeedCode"] = !ok || err != nil
	switch {
	case err != nil:
		s.d.Logger.Warn().Err(err).Msg("setup: read the stored GitHub App")
		data["StoredProblem"] = "The stored GitHub App cannot be read (see the server log); creating a new one replaces it."
	case ok:
		data["Stored"] = map[string]any{"Slug": app.Slug, "HTMLURL": app.HTMLURL, "Install": app.HTMLURL + "/installations/new",
			"UpdatedAt": app.UpdatedAt.UTC().Format("2006-01-02 15:04 UTC")}
	}
	s.render(w, r, status, "form", data, "")
}
