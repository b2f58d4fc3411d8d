package setup

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"gopkg.in/yaml.v3"
)

//go:generate cp ../../deploy/github-app.yml github-app.yml

// EmbeddedManifest returns the App manifest in YAML: a copy of
// deploy/github-app.yml (`go generate` refreshes it; a test checks it).
func EmbeddedManifest() ([]byte, error) {
	b, err := assets.ReadFile("github-app.yml")
	if err != nil {
		return nil, fmt.Errorf("read the embedded App manifest: %w", err)
	}
	return b, nil
}

// Paths under the public URL that the manifest names.
const (
	// HookPath is the webhook route (server/webhook.Route).
	HookPath = "/api/github/hook"
	// CallbackPath is where GitHub sends the browser back with the code.
	CallbackPath = "/setup/callback"
	// SignInCallbackPath is the OAuth callback of "Sign in with GitHub".
	SignInCallbackPath = "/signin/github/callback"
)

// Form is what the person asked for on the /setup page.
type Form struct {
	// Owner is "user" (the signed-in personal account) or "org".
	Owner string
	// Org is the organisation's login when Owner is "org".
	Org string
	// Name is the App's name (unique on GitHub, at most 34 characters).
	Name string
	// PublicURL is where GitHub and people reach this MergeGuard.
	PublicURL string
	// WebURL is GitHub's web address (GitHub Enterprise Server's host).
	WebURL string
}

// maxNameLen is the longest App name GitHub accepts.
const maxNameLen = 34

// check normalises f (trimmed, URLs without a trailing slash) and says
// what is wrong with it, in words for the page.
func (f *Form) check() error {
	f.Owner, f.Org, f.Name = strings.TrimSpace(f.Owner), strings.TrimSpace(f.Org), strings.TrimSpace(f.Name)
	var errs []error
	switch f.Owner {
	case "user":
		f.Org = ""
	case "org":
		if !validLogin(f.Org) {
			errs = append(errs, errors.New("the organisation's name must be its GitHub login: letters, digits and single hyphens, at most 39 characters"))
		}
	default:
		errs = append(errs, errors.New("choose who owns the App: your personal account or an organisation"))
	}
	if f.Name == "" || len([]rune(f.Name)) > maxNameLen {
		errs = append(errs, fmt.Errorf("the App's name must have 1 to %d characters", maxNameLen))
	}
	var err error
	if f.PublicURL, err = baseURL(f.PublicURL); err != nil {
		errs = append(errs, fmt.Errorf("MergeGuard's public URL %w", err))
	}
	if f.WebURL, err = baseURL(f.WebURL); err != nil {
		errs = append(errs, fmt.Errorf("GitHub's web URL %w", err))
	}
	return errors.Join(errs...)
}

// validLogin reports whether s is a possible GitHub organisation login.
func validLogin(s string) bool {
	if s == "" || len(s) > 39 || strings.HasPrefix(s, "-") || strings.HasSuffix(s, "-") || strings.Contains(s, "--") {
		return false
	}
	return strings.Trim(s, "-abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") == ""
}

// baseURL checks an absolute http(s) URL without query or fragment and
// returns it without a trailing slash.
func baseURL(s string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil {
		return "", errors.New("must be an absolute http:// or https:// address")
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return "", errors.New("must not have a query or a fragment")
	}
	return strings.TrimSuffix(u.String(), "/"), nil
}

// Manifest returns the GitHub App manifest, as JSON, for the form: the
// YAML manifest (deploy/github-app.yml) with the App's name and every URL
// pointing at the form's public URL.
func Manifest(yamlManifest []byte, f Form) ([]byte, error) {
	var m map[string]any
	if err := yaml.Unmarshal(yamlManifest, &m); err != nil {
		return nil, fmt.Errorf("read the App manifest: %w", err)
	}
	if m == nil {
		return nil, errors.New("read the App manifest: it is empty")
	}
	hook, _ := m["hook_attributes"].(map[string]any)
	if hook == nil {
		hook = map[string]any{"active": true}
	}
	hook["url"] = f.PublicURL + HookPath
	m["hook_attributes"] = hook
	m["name"] = f.Name
	m["url"] = f.PublicURL + "/"
	m["redirect_url"] = f.PublicURL + CallbackPath
	m["callback_urls"] = []string{f.PublicURL + SignInCallbackPath}
	// After an installation GitHub sends the browser to /setup, which
	// says the App is ready.
	m["setup_url"] = f.PublicURL + "/setup"
	out, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("write the App manifest: %w", err)
	}
	return out, nil
}

// newAppURL is GitHub's page that takes a manifest, for the owner.
func newAppURL(f Form, state string) string {
	path := "/settings/apps/new"
	if f.Owner == "org" {
		path = "/organizations/" + url.PathEscape(f.Org) + "/settings/apps/new"
	}
	return f.WebURL + path + "?state=" + url.QueryEscape(state)
}
