package validate

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

// appManifest is a GitHub App manifest: the fields the manifest flow accepts.
// https://docs.github.com/en/apps/sharing-github-apps/registering-a-github-app-from-a-manifest#github-app-manifest-parameters
type appManifest struct {
	Name           string `json:"name"`
	URL            string `json:"url"`
	Description    string `json:"description,omitempty"`
	HookAttributes struct {
		URL    string `json:"url"`
		Active *bool  `json:"active,omitempty"`
	} `json:"hook_attributes"`
	RedirectURL           string            `json:"redirect_url,omitempty"`
	CallbackURLs          []string          `json:"callback_urls,omitempty"`
	SetupURL              string            `json:"setup_url,omitempty"`
	Public                bool              `json:"public"`
	DefaultPermissions    map[string]string `json:"default_permissions"`
	DefaultEvents         []string          `json:"default_events"`
	RequestOAuthOnInstall bool              `json:"request_oauth_on_install,omitempty"`
	SetupOnUpdate         bool              `json:"setup_on_update,omitempty"`
}

// parseManifest decodes a manifest strictly: a misspelt field would be
// silently dropped by GitHub.
func parseManifest(text []byte) (appManifest, error) {
	var m appManifest
	if err := yaml.UnmarshalStrict(text, &m); err != nil {
		return appManifest{}, fmt.Errorf("decode GitHub App manifest: %w", err)
	}
	return m, nil
}

// checkManifest checks that the manifest asks for exactly what MergeGuard
// uses (least privilege) and sends webhooks to its endpoint.
func checkManifest(m appManifest) error {
	var errs []error
	wantPermissions := map[string]string{
		"pull_requests": "write", // read diffs, post reviews
		"contents":      "read",  // files at a SHA, .mergeguard.yml
		"issues":        "write", // comment commands: replies and reactions
		"checks":        "write", // the MergeGuard check run and its annotations
		"metadata":      "read",  // mandatory
	}
	if diff := cmp.Diff(wantPermissions, m.DefaultPermissions); diff != "" {
		errs = append(errs, fmt.Errorf("default_permissions (-want +got):\n%s", diff))
	}
	// installation and installation_repositories are always sent to Apps.
	wantEvents := []string{"pull_request", "issue_comment", "pull_request_review_comment", "pull_request_review_thread", "check_run", "repository"}
	if diff := cmp.Diff(wantEvents, m.DefaultEvents); diff != "" {
		errs = append(errs, fmt.Errorf("default_events (-want +got):\n%s", diff))
	}
	if m.Name == "" {
		errs = append(errs, errors.New("name is empty"))
	}
	for field, raw := range map[string]string{"url": m.URL, "hook_attributes.url": m.HookAttributes.URL, "redirect_url": m.RedirectURL} {
		u, err := url.Parse(raw)
		if err != nil || u.Scheme != "https" || u.Host == "" {
			errs = append(errs, fmt.Errorf("%s %q is not an https URL", field, raw))
		}
	}
	if !strings.HasSuffix(m.HookAttributes.URL, "/api/github/hook") {
		errs = append(errs, fmt.Errorf("hook_attributes.url %q is not MergeGuard's webhook endpoint /api/github/hook", m.HookAttributes.URL))
	}
	if m.HookAttributes.Active != nil && !*m.HookAttributes.Active {
		errs = append(errs, errors.New("hook_attributes.active is false: no webhooks would be sent"))
	}
	return errors.Join(errs...)
}

func TestGitHubAppManifest(t *testing.T) {
	t.Parallel()
	text, err := os.ReadFile("../github-app.yml")
	if err != nil {
		t.Fatal(err)
	}
	m, err := parseManifest(text)
	if err != nil {
		t.Fatal(err)
	}
	if err := checkManifest(m); err != nil {
		t.Error(err)
	}
	if m.Public {
		t.Error("public: true lets any account install the App; the shipped manifest keeps it private")
	}
}

// TestGitHubAppManifestRejects shows that the checks fail on a manifest that
// asks for too much, too little, or misspells a field.
func TestGitHubAppManifestRejects(t *testing.T) {
	t.Parallel()
	text, err := os.ReadFile("../github-app.yml")
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		old, new string
		wantErr  string
	}{
		"extra permission": {
			"  metadata: read", "  metadata: read\n  administration: write",
			`"administration"`,
		},
		"write where read suffices": {
			"  contents: read", "  contents: write",
			`"contents"`,
		},
		"missing event": {
			"  - issue_comment\n", "",
			`"issue_comment"`,
		},
		"missing check_run": {
			"  - check_run\n", "",
			`"check_run"`,
		},
		"checks read only": {
			"  checks: write", "  checks: read",
			`"checks"`,
		},
		"misspelt field": {
			"default_events:", "default_event:",
			`unknown field "default_event"`,
		},
		"wrong webhook path": {
			"url: https://mergeguard.example.com/api/github/hook", "url: https://mergeguard.example.com/webhook",
			"is not MergeGuard's webhook endpoint",
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			broken := strings.Replace(string(text), tt.old, tt.new, 1)
			if broken == string(text) {
				t.Fatalf("the manifest no longer contains %q; update the test", tt.old)
			}
			m, err := parseManifest([]byte(broken))
			if err == nil {
				err = checkManifest(m)
			}
			if err == nil {
				t.Fatal("a broken manifest passed")
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error:\n%v\nwant it to contain %q", err, tt.wantErr)
			}
		})
	}
}
