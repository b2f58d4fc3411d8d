package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestGenerate computes the truth of a commit of a tiny module (two
// packages, in-package and external tests, a generic type, a pure
// deletion) and compares it with the truth worked out by hand in
// testdata/tiny/want.json.
func TestGenerate(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	repo := t.TempDir()
	gitT(t, repo, "init", "-q")
	copyTree(t, "testdata/tiny/base", repo)
	gitT(t, repo, "add", "-A")
	gitT(t, repo, "commit", "-q", "-m", "base")
	if err := os.RemoveAll(filepath.Join(repo, "b")); err != nil {
		t.Fatal(err)
	}
	copyTree(t, "testdata/tiny/head", repo)
	gitT(t, repo, "add", "-A")
	gitT(t, repo, "commit", "-q", "-m", "head")
	head := strings.TrimSpace(gitT(t, repo, "rev-parse", "HEAD"))

	got, err := Generate(context.Background(), filepath.Join(repo, ".git"), "example/tiny", head)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("testdata/tiny/want.json")
	if err != nil {
		t.Fatal(err)
	}
	var want truthFile
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	want.Commit = head
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("truth (-want +got):\n%s", diff)
	}
}

func TestChangedLines(t *testing.T) {
	lines := map[string]int{"a.go": 10, "b.go": 4}
	count := func(p string) int { return lines[p] }
	tests := []struct {
		name, diff string
		want       map[string]map[int]bool
	}{
		{"added lines", "diff --git a/a.go b/a.go\n--- a/a.go\n+++ b/a.go\n@@ -3 +3,2 @@ func f() {\n-x\n+y\n+z\n",
			map[string]map[int]bool{"a.go": {3: true, 4: true}}},
		{"one line, no count", "diff --git a/a.go b/a.go\n--- a/a.go\n+++ b/a.go\n@@ -3 +5 @@\n-x\n+y\n",
			map[string]map[int]bool{"a.go": {5: true}}},
		{"pure deletion marks the next head line", "diff --git a/a.go b/a.go\n--- a/a.go\n+++ b/a.go\n@@ -6,2 +5,0 @@\n-x\n-y\n",
			map[string]map[int]bool{"a.go": {6: true}}},
		{"deletion at the end marks the last line", "diff --git a/b.go b/b.go\n--- a/b.go\n+++ b/b.go\n@@ -5,2 +4,0 @@\n-x\n-y\n",
			map[string]map[int]bool{"b.go": {4: true}}},
		{"deletion at the start marks line 1", "diff --git a/a.go b/a.go\n--- a/a.go\n+++ b/a.go\n@@ -1 +0,0 @@\n-x\n",
			map[string]map[int]bool{"a.go": {1: true}}},
		{"deleted file, vendor and other languages skipped",
			"diff --git a/c.go b/c.go\n--- a/c.go\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n" +
				"diff --git a/vendor/v.go b/vendor/v.go\n--- a/vendor/v.go\n+++ b/vendor/v.go\n@@ -1 +1 @@\n-x\n+y\n" +
				"diff --git a/x/vendor/v.go b/x/vendor/v.go\n--- a/x/vendor/v.go\n+++ b/x/vendor/v.go\n@@ -1 +1 @@\n-x\n+y\n" +
				"diff --git a/r.md b/r.md\n--- a/r.md\n+++ b/r.md\n@@ -1 +1 @@\n-x\n+y\n",
			map[string]map[int]bool{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, changedLines(tc.diff, count)); diff != "" {
				t.Errorf("changed lines (-want +got):\n%s", diff)
			}
		})
	}
}

// gitT runs git in dir with a fixed identity and returns its output.
func gitT(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// copyTree copies the files under src into dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dst, rel)), 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}
