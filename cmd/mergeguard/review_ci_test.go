package main

import (
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mergeguard/mergeguard/review/llm/llmtest"
)

const awsKeyLine = "const key = \"AKIAZ7VRSQ5TJN2XMY4W\"\n"

// TestReviewCIExitCodes: the --fail flags, alone and together, and the
// machine formats' exit codes. The secret is a critical security finding;
// a failing model makes the review degraded.
func TestReviewCIExitCodes(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	dir := t.TempDir()
	base := gitCommit(t, dir, map[string]string{"main.go": "package main\n"})
	secret := gitCommit(t, dir, map[string]string{"cloud/keys.go": "package cloud\n\n" + awsKeyLine})
	clean := gitCommit(t, dir, map[string]string{"README.md": "# App\n"})
	failing := llmtest.New(t, func(llmtest.Request) llmtest.Response {
		return llmtest.APIError(http.StatusBadRequest, "invalid_request_error", "", "model rejects everything")
	})
	broken := env(map[string]string{"OPENAI_BASE_URL": failing.URL(), "OPENAI_API_KEY": "sk-test", "MERGEGUARD_MODEL": "gpt-4o"})
	tests := map[string]struct {
		getenv func(string) string
		args   []string
		code   int
		want   []error
	}{
		"critical, fail-level none":         {nil, []string{"--base", base, "--head", secret, "--fail-level", "none"}, 0, nil},
		"critical, fail-level critical":     {nil, []string{"--base", base, "--head", secret, "--fail-level", "critical"}, 1, []error{errFailLevel}},
		"critical, fail-level style":        {nil, []string{"--base", base, "--head", secret, "--fail-level", "style", "--format", "sarif"}, 1, []error{errFailLevel}},
		"clean, fail-level style":           {nil, []string{"--base", secret, "--head", clean, "--fail-level", "style", "--format", "line"}, 0, nil},
		"fail-level and fail-on-changes":    {nil, []string{"--base", base, "--head", secret, "--fail-level", "warning", "--fail-on-changes", "--format", "rdjson"}, 1, []error{errFailLevel, errChangesRequested}},
		"no LLM is not degraded":            {nil, []string{"--base", base, "--head", secret, "--fail-on-degraded"}, 0, nil},
		"model fails, no flag":              {broken, []string{"--base", secret, "--head", clean}, 0, nil},
		"model fails, fail-on-degraded":     {broken, []string{"--base", secret, "--head", clean, "--fail-on-degraded"}, 1, []error{errDegraded}},
		"fail-level bad":                    {nil, []string{"--fail-level", "error"}, 2, nil},
		"work-tree with base":               {nil, []string{"--work-tree", "--base", base}, 2, nil},
		"staged and work-tree":              {nil, []string{"--work-tree", "--staged"}, 2, nil},
		"diff and staged":                   {nil, []string{"--diff", "x.diff", "--staged"}, 2, nil},
		"same base and head: nothing to do": {nil, []string{"--base", clean, "--head", clean}, 1, nil},
		"clean work tree: nothing to do":    {nil, []string{"--work-tree"}, 1, nil},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			getenv := tc.getenv
			if getenv == nil {
				getenv = env(nil)
			}
			_, stderr, err := runCmd(t, getenv, append([]string{"review", "--repo", dir}, tc.args...)...)
			if got := exitCode(err); (err == nil && tc.code != 0) || (err != nil && got != tc.code) {
				t.Fatalf("err = %v (exit %d), want exit %d\n%s", err, got, tc.code, stderr)
			}
			for _, w := range tc.want {
				if !errors.Is(err, w) {
					t.Errorf("err = %v, want it to be %v", err, w)
				}
			}
		})
	}
}

// TestReviewUncommitted: --work-tree, --staged, and the working tree by
// default when it has uncommitted changes, each in the line format.
func TestReviewUncommitted(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	dir := t.TempDir()
	gitCommit(t, dir, map[string]string{"staged.go": "package a\n", "unstaged.go": "package a\n"})
	write := func(name, content string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("staged.go", "package a\n\n"+awsKeyLine)
	git := exec.CommandContext(t.Context(), "git", "-C", dir, "add", "staged.go")
	git.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	if out, err := git.CombinedOutput(); err != nil {
		t.Fatalf("git add: %v\n%s", err, out)
	}
	write("unstaged.go", "package a\n\n\n"+awsKeyLine)
	write("untracked.go", "package a\n\n"+awsKeyLine) // not reviewed
	line := func(file string, n string) string {
		return file + ":" + n + ":1: critical: Possible secret committed (aws-access-token)"
	}
	tests := map[string]struct {
		args       []string
		want       []string
		defaulting bool
	}{
		"default is the work tree": {nil, []string{line("staged.go", "3"), line("unstaged.go", "4")}, true},
		"work tree":                {[]string{"--work-tree"}, []string{line("staged.go", "3"), line("unstaged.go", "4")}, false},
		"staged":                   {[]string{"--staged"}, []string{line("staged.go", "3")}, false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			stdout, stderr, err := runCmd(t, env(nil), append([]string{"review", "--repo", dir, "--format", "line", "--fail-level", "critical"}, tc.args...)...)
			if !errors.Is(err, errFailLevel) {
				t.Fatalf("err = %v, want %v\n%s", err, errFailLevel, stderr)
			}
			got := strings.Split(strings.TrimSpace(stdout), "\n")
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
			if said := strings.Contains(stderr, "reviewing the uncommitted changes"); said != tc.defaulting {
				t.Errorf("stderr = %q, want the default announced: %v", stderr, tc.defaulting)
			}
		})
	}
}

// TestReviewEmptyAndVersion: an empty diff is an error with a hint; a git
// failure is exit 1 with a plain message; --version prints the version.
func TestReviewEmptyAndVersion(t *testing.T) {
	t.Parallel()
	empty := filepath.Join(t.TempDir(), "empty.diff")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err := runCmd(t, env(nil), "review", "--diff", empty, "--repo", t.TempDir())
	if exitCode(err) != 1 || err == nil || !strings.Contains(err.Error(), "nothing to review: the diff is empty") {
		t.Errorf("empty diff: err = %v", err)
	}
	if _, err := exec.LookPath("git"); err == nil {
		_, _, err := runCmd(t, env(nil), "review", "--repo", t.TempDir(), "--work-tree")
		if exitCode(err) != 1 || err == nil || !strings.Contains(err.Error(), "is not in a git repository") {
			t.Errorf("git failure: err = %v", err)
		}
	}
	stdout, _, err := runCmd(t, env(nil), "--version")
	if err != nil || !strings.HasPrefix(stdout, "mergeguard ") {
		t.Errorf("--version: %q, %v", stdout, err)
	}
}

// TestReviewSARIFOutput: the CLI's SARIF names the tool, the rule and the
// finding's repository-relative path and lines.
func TestReviewSARIFOutput(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	dir := t.TempDir()
	base := gitCommit(t, dir, map[string]string{"main.go": "package main\n"})
	head := gitCommit(t, dir, map[string]string{"cloud/keys.go": "package cloud\n\n" + awsKeyLine})
	stdout, _, err := runCmd(t, env(nil), "review", "--repo", dir, "--base", base, "--head", head, "--format", "sarif")
	if err != nil {
		t.Fatal(err)
	}
	var log struct {
		Runs []struct {
			Tool    struct{ Driver struct{ Name string } }
			Results []struct {
				RuleID              string
				Level               string
				PartialFingerprints map[string]string
				Locations           []struct {
					PhysicalLocation struct {
						ArtifactLocation struct{ URI string }
						Region           struct{ StartLine, EndLine int }
					}
				}
			}
		}
	}
	if err := json.Unmarshal([]byte(stdout), &log); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	if len(log.Runs) != 1 || len(log.Runs[0].Results) != 1 {
		t.Fatalf("runs/results: %s", stdout)
	}
	r := log.Runs[0].Results[0]
	loc := r.Locations[0].PhysicalLocation
	got := []any{log.Runs[0].Tool.Driver.Name, r.RuleID, r.Level, loc.ArtifactLocation.URI, loc.Region.StartLine, loc.Region.EndLine, r.PartialFingerprints["mergeguard/v1"] != ""}
	want := []any{"MergeGuard", "gitleaks/aws-access-token", "error", "cloud/keys.go", 3, 3, true}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("SARIF (-want +got):\n%s", diff)
	}
}
