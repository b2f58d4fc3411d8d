package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mergeguard/mergeguard/review"
)

// TestReviewDiffConfigFromBase: `review --diff` in a CI job that has the
// pull request checked out. The working folder's .mergeguard.yml is the
// pull request's own, so whenever a base revision is known (--base, or
// GITHUB_BASE_REF in GitHub Actions) the configuration is read from the
// base, where a file the pull request adds does not exist; without one the
// output names the file it used.
func TestReviewDiffConfigFromBase(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	const key = "package cloud\n\nconst key = \"AKIAZ7VRSQ5TJN2XMY4W\"\n"
	patch := filepath.Join(t.TempDir(), "pr.diff")
	if err := os.WriteFile(patch, []byte("diff --git a/cloud/keys.go b/cloud/keys.go\nnew file mode 100644\n--- /dev/null\n+++ b/cloud/keys.go\n"+
		"@@ -0,0 +1,3 @@\n+"+strings.ReplaceAll(strings.TrimSuffix(key, "\n"), "\n", "\n+")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// checkout is a pull request checked out: main has no .mergeguard.yml
	// (or base's), the pull request's commit adds prConfig and the key.
	// With merge, the checkout is GitHub's merge commit of the pull
	// request into main (pull_request's GITHUB_SHA), without origin/main.
	checkout := func(t *testing.T, base, prConfig string, merge bool) (dir, head string) {
		dir = t.TempDir()
		files := map[string]string{"README.md": "Hello\n"}
		if base != "" {
			files[".mergeguard.yml"] = base
		}
		mainSHA := gitCommit(t, dir, files)
		gitRun(t, dir, "checkout", "-q", "-b", "pr")
		head = gitCommit(t, dir, map[string]string{".mergeguard.yml": prConfig, "cloud/keys.go": key})
		if !merge {
			gitRun(t, dir, "update-ref", "refs/remotes/origin/main", mainSHA)
			return dir, head
		}
		gitRun(t, dir, "checkout", "-q", "--detach", mainSHA)
		gitRun(t, dir, "-c", "user.name=GitHub", "-c", "user.email=noreply@github.com", "merge", "-q", "--no-ff", "-m", "Merge pr into main", "pr")
		return dir, strings.TrimSpace(gitOut(t, dir, "rev-parse", "HEAD"))
	}
	const disabled, filtered = "enabled: false\n", "path_filters: [\"!**\"]\n"
	tests := []struct {
		name       string
		base, pr   string // .mergeguard.yml at main and in the pull request
		args       []string
		env        map[string]string
		merge      bool // the checkout is GitHub's merge commit, GITHUB_SHA
		wantSecret bool
		wantStderr string // also in the verdict's notes
	}{
		{"--base, the PR disables MergeGuard", "", disabled, []string{"--base", "main"}, nil, false, true, "no .mergeguard.yml at main"},
		{"--base, the PR filters every path", "", filtered, []string{"--base", "main"}, nil, false, true, "no .mergeguard.yml at main"},
		{"GITHUB_BASE_REF, the PR disables MergeGuard", "", disabled, nil, map[string]string{"GITHUB_BASE_REF": "main"}, false, true, "no .mergeguard.yml at origin/main"},
		{"GITHUB_BASE_REF, GitHub's merge commit checked out", "", disabled, nil,
			map[string]string{"GITHUB_BASE_REF": "main", "GITHUB_EVENT_NAME": "pull_request"}, true, true, "^1 (GITHUB_SHA's base parent)"},
		{"GITHUB_BASE_REF not fetched: defaults", "", disabled, nil, map[string]string{"GITHUB_BASE_REF": "release"}, false, true, "origin/release is not in this repository"},
		{"--base with its own configuration", disabled, "", []string{"--base", "main"}, nil, false, false, ".mergeguard.yml at main"},
		{"no base known: the working folder's", "", disabled, nil, nil, false, false, ".mergeguard.yml of the working folder"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, head := checkout(t, tt.base, tt.pr, tt.merge)
			if tt.merge {
				tt.env["GITHUB_SHA"] = head
			}
			args := append([]string{"review", "--repo", dir, "--diff", patch, "--format", "json", "--fail-on-changes"}, tt.args...)
			stdout, stderr, err := runCmd(t, env(tt.env), args...)
			if tt.wantSecret != errors.Is(err, errChangesRequested) {
				t.Fatalf("err = %v (exit %d), want changes requested: %v\n%s\n%s", err, exitCode(err), tt.wantSecret, stdout, stderr)
			}
			var v review.Verdict
			if err := json.Unmarshal([]byte(stdout), &v); err != nil {
				t.Fatalf("stdout is not a verdict: %v\n%s", err, stdout)
			}
			found := false
			for _, f := range v.Findings() {
				found = found || f.Agent == "analyzer:secrets" && f.FilePath == "cloud/keys.go"
			}
			if found != tt.wantSecret {
				t.Errorf("secret found %v, want %v\n%s", found, tt.wantSecret, stdout)
			}
			if !strings.Contains(stderr, tt.wantStderr) || !strings.Contains(strings.Join(v.Notes, "\n"), tt.wantStderr) {
				t.Errorf("stderr %q, notes %q: want both to say %q", stderr, v.Notes, tt.wantStderr)
			}
		})
	}

	t.Run("GITHUB_BASE_REF outside a repository: defaults", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, ".mergeguard.yml"), []byte(disabled), 0o644); err != nil {
			t.Fatal(err)
		}
		stdout, stderr, err := runCmd(t, env(map[string]string{"GITHUB_BASE_REF": "main"}), "review", "--repo", dir, "--diff", patch, "--fail-on-changes")
		if !errors.Is(err, errChangesRequested) || !strings.Contains(stderr, "could not be read from the base branch") {
			t.Errorf("err = %v, stderr %q; want the defaults, changes requested\n%s", err, stderr, stdout)
		}
	})

	t.Run("--base that is no commit", func(t *testing.T) {
		dir, _ := checkout(t, "", disabled, false)
		_, _, err := runCmd(t, env(nil), "review", "--repo", dir, "--diff", patch, "--base", "nope")
		if exitCode(err) != 2 || !strings.Contains(fmt.Sprint(err), `--base "nope" is not a commit`) {
			t.Errorf("err = %v (exit %d), want a usage error naming --base", err, exitCode(err))
		}
	})
}

// gitRun runs git in dir with the test's isolated configuration.
func gitRun(t *testing.T, dir string, args ...string) { gitOut(t, dir, args...) }

// gitOut runs git in dir and returns its output.
func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}
