package main

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/diff"
	"github.com/mergeguard/mergeguard/review/llm/llmtest"
	"github.com/mergeguard/mergeguard/review/task"
)

// gitCommit writes files into a real repository at dir (created on first
// use) and commits them, returning the commit's SHA.
func gitCommit(t *testing.T, dir string, files map[string]string) string {
	t.Helper()
	git := func(args ...string) string {
		cmd := exec.CommandContext(t.Context(), "git", append([]string{"-C", dir}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
			"GIT_AUTHOR_NAME=Dev", "GIT_AUTHOR_EMAIL=dev@example.com", "GIT_COMMITTER_NAME=Dev", "GIT_COMMITTER_EMAIL=dev@example.com")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	if _, err := os.Stat(filepath.Join(dir, ".git")); err != nil {
		git("init", "-q", "-b", "main")
	}
	for p, c := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git("add", "-A")
	git("commit", "-q", "-m", "change")
	return git("rev-parse", "HEAD")
}

func TestReviewCommand(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	dir := t.TempDir()
	base := gitCommit(t, dir, map[string]string{
		"main.go":         "package main\n\nfunc main() {}\n",
		".mergeguard.yml": "severity_threshold: warning\npath_filters: [\"!docs/**\"]\n",
	})
	head := gitCommit(t, dir, map[string]string{
		"cloud/keys.go": "package cloud\n\nconst key = \"AKIAZ7VRSQ5TJN2XMY4W\"\n",
		"docs/key.md":   "AKIAZ7VRSQ5TJN2XMY4W\n",
	})

	t.Run("json without LLM fails on changes", func(t *testing.T) {
		stdout, stderr, err := runCmd(t, env(nil), "review", "--repo", dir, "--base", base, "--head", head, "--format", "json", "--fail-on-changes")
		if !errors.Is(err, errChangesRequested) || exitCode(err) != 1 {
			t.Fatalf("err = %v (exit %d), want changes requested (exit 1)", err, exitCode(err))
		}
		if !strings.Contains(stderr, "no LLM configured") {
			t.Errorf("stderr = %q", stderr)
		}
		var v review.Verdict
		if err := json.Unmarshal([]byte(stdout), &v); err != nil {
			t.Fatalf("stdout is not a verdict: %v\n%s", err, stdout)
		}
		var got []string
		for _, f := range v.Findings() {
			got = append(got, f.FilePath+":"+f.Title)
		}
		// docs/ is filtered out for the model, never for the secret scan.
		want := []string{"cloud/keys.go:Possible secret committed (aws-access-token)", "docs/key.md:Possible secret committed (aws-access-token)"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("findings (-want +got):\n%s", diff)
		}
		// The JSON contract's keys.
		var raw map[string]any
		if err := json.Unmarshal([]byte(stdout), &raw); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"verdict", "summary", "confidence", "files", "stats", "false_positives", "recommendations", "review_duration_ms"} {
			if _, ok := raw[k]; !ok {
				t.Errorf("verdict JSON lacks %q", k)
			}
		}
	})

	t.Run("markdown with an LLM, no failure without the flag", func(t *testing.T) {
		srv := llmtest.NewQueue(t, llmtest.JSON(map[string]any{"findings": []any{}, "positive_notes": []any{}}),
			llmtest.JSON(map[string]any{"summary": "Adds a cloud key.", "files": []any{
				map[string]any{"file_path": "cloud/keys.go", "group": "Cloud", "line": "adds the key"}}}))
		getenv := env(map[string]string{"OPENAI_BASE_URL": srv.URL(), "OPENAI_API_KEY": "sk-test", "MERGEGUARD_MODEL": "gpt-4o"})
		stdout, stderr, err := runCmd(t, getenv, "review", "--repo", dir, "--base", base, "--head", head, "--format", "markdown")
		if err != nil {
			t.Fatalf("err = %v\n%s", err, stderr)
		}
		if !strings.HasPrefix(stdout, "## MergeGuard: changes requested") || strings.Contains(stderr, "no LLM") {
			t.Errorf("stdout = %q\nstderr = %q", stdout, stderr)
		}
		if srv.Calls() != 2 {
			t.Errorf("LLM calls = %d, want 2 (the review, the walkthrough)", srv.Calls())
		}
		if got := srv.Requests()[0].Header.Get("Authorization"); got != "Bearer sk-test" {
			t.Errorf("Authorization = %q", got)
		}
	})

	t.Run("diff file", func(t *testing.T) {
		patch := filepath.Join(t.TempDir(), "change.diff")
		text := "diff --git a/a.txt b/a.txt\nnew file mode 100644\n--- /dev/null\n+++ b/a.txt\n@@ -0,0 +1 @@\n+hello\n"
		if err := os.WriteFile(patch, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		stdout, _, err := runCmd(t, env(nil), "review", "--diff", patch, "--repo", t.TempDir(), "--fail-on-changes")
		if err != nil || !strings.HasPrefix(stdout, "Verdict: COMMENT") {
			t.Errorf("err = %v, stdout = %q", err, stdout)
		}
	})

	t.Run("usage errors", func(t *testing.T) {
		for _, args := range [][]string{
			{"review", "--format", "yaml"},
			{"review", "--diff", "x.diff", "--head", "main"},
			{"review", "extra"},
		} {
			if _, _, err := runCmd(t, env(nil), args...); exitCode(err) != 2 {
				t.Errorf("%v: err = %v, want a usage error", args, err)
			}
		}
	})
}

// TestReviewExitCodes: 0 ok, 1 an error or changes requested with
// --fail-on-changes, 2 bad usage — never a child process's own status
// (git exits 128 outside a repository).
func TestReviewExitCodes(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	dir := t.TempDir()
	base := gitCommit(t, dir, map[string]string{"main.go": "package main\n"})
	secret := gitCommit(t, dir, map[string]string{"cloud/keys.go": "package cloud\n\nconst key = \"AKIAZ7VRSQ5TJN2XMY4W\"\n"})
	clean := gitCommit(t, dir, map[string]string{"README.md": "# App\n"})
	notRepo := t.TempDir()
	tests := map[string]struct {
		args    []string
		code    int
		message string // in the error
	}{
		"clean change":                  {[]string{"--base", secret, "--head", clean, "--fail-on-changes"}, 0, ""},
		"changes requested, no flag":    {[]string{"--base", base, "--head", secret}, 0, ""},
		"changes requested, flag":       {[]string{"--base", base, "--head", secret, "--fail-on-changes"}, 1, "changes requested"},
		"not a git repository":          {[]string{"--repo", notRepo}, 1, "is not in a git repository: run mergeguard review inside one, or pass --repo DIR"},
		"no such directory":             {[]string{"--repo", notRepo + "/missing"}, 1, "missing"},
		"unknown revision":              {[]string{"--base", "no-such-branch"}, 1, "no-such-branch"},
		"revision starting with a dash": {[]string{"--head", "--output=x"}, 1, "starts with '-'"},
		"missing diff file":             {[]string{"--diff", notRepo + "/none.diff"}, 1, "none.diff"},
		"unknown format":                {[]string{"--format", "yaml"}, 2, "unknown format"},
		"unknown flag":                  {[]string{"--verbose"}, 2, "flag provided but not defined"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			args := append([]string{"review", "--repo", dir}, tc.args...)
			_, _, err := runCmd(t, env(nil), args...)
			if got := exitCode(err); (err == nil && tc.code != 0) || (err != nil && got != tc.code) {
				t.Fatalf("err = %v (exit %d), want exit %d", err, got, tc.code)
			}
			if tc.message != "" && (err == nil || !strings.Contains(err.Error(), tc.message)) {
				t.Errorf("err = %v, want it to say %q", err, tc.message)
			}
		})
	}
}

// padLine pads a script past diff.BinaryPrefix.
const padLine = "echo padding line\n"

// TestReviewHiddenSecrets: a planted AWS key and a command injection in a
// file whose name starts with a space, or in a .py file the commit's
// .gitattributes marks -diff, are found and block: `mergeguard review
// --fail-on-changes` exits 1 with request_changes, the findings verified
// on the file's exact path.
func TestReviewHiddenSecrets(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	planted := "import os\nAWS_ACCESS_KEY_ID = \"AKIAZ7VRSQ5TJN2XMY4W\"\nos.system(input())\n"
	tests := map[string]struct {
		files map[string]string
		path  string
	}{
		"leading space":      {map[string]string{" settings.py": planted}, " settings.py"},
		"trailing space":     {map[string]string{"settings.py ": planted}, "settings.py "},
		"-diff attribute":    {map[string]string{".gitattributes": "*.py -diff\n", "settings.py": planted}, "settings.py"},
		"binary attribute":   {map[string]string{".gitattributes": "*.py binary\n", "app/settings.py": planted}, "app/settings.py"},
		"space and -diff":    {map[string]string{".gitattributes": "*.py -diff\n", " settings.py": planted}, " settings.py"},
		"committed env file": {map[string]string{".env": "AWS_ACCESS_KEY_ID=AKIAZ7VRSQ5TJN2XMY4W\n"}, ".env"},
		// Issue 23: a NUL past the first 8,000 bytes leaves a script text;
		// a lock file's name and binary content keep a file from the
		// model only, never from the secret scan.
		// The padding ends just past the prefix: shellcheck reads all of it
		// (2,000 lines took it 1.7 s).
		"NUL on the last line": {map[string]string{"deploy.sh": "#!/bin/sh\nAWS_ACCESS_KEY_ID=AKIAZ7VRSQ5TJN2XMY4W\n" +
			strings.Repeat(padLine, diff.BinaryPrefix/len(padLine)+10) + "# \x00\n"}, "deploy.sh"},
		"lock file":      {map[string]string{"deep/dir/Cargo.lock": "[[package]]\nAWS_ACCESS_KEY_ID=AKIAZ7VRSQ5TJN2XMY4W\n"}, "deep/dir/Cargo.lock"},
		"binary content": {map[string]string{"blob.bin": "\x00\x01\nAWS_ACCESS_KEY_ID=AKIAZ7VRSQ5TJN2XMY4W\n"}, "blob.bin"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			base := gitCommit(t, dir, map[string]string{"main.go": "package main\n"})
			head := gitCommit(t, dir, tc.files)
			stdout, stderr, err := runCmd(t, env(nil), "review", "--repo", dir, "--base", base, "--head", head, "--format", "json", "--fail-on-changes")
			if !errors.Is(err, errChangesRequested) || exitCode(err) != 1 {
				t.Fatalf("err = %v (exit %d), want changes requested (exit 1)\n%s\n%s", err, exitCode(err), stdout, stderr)
			}
			var v review.Verdict
			if err := json.Unmarshal([]byte(stdout), &v); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range v.Findings() {
				if f.Agent == "analyzer:secrets" {
					got = append(got, f.FilePath+" "+string(f.VerificationStatus))
				}
			}
			if diff := cmp.Diff([]string{tc.path + " verified"}, got); diff != "" || v.Verdict != review.DecisionRequestChanges {
				t.Errorf("verdict %s; secret findings (-want +got):\n%s", v.Verdict, diff)
			}
		})
	}
}

// TestReviewModelDown: with a model that keeps failing (429s until the
// retries are spent), `mergeguard review` still prints the analyzers'
// findings (a leaked AWS key) in every format, marked degraded, and exits
// 0 unless --fail-on-degraded asks for 1.
func TestReviewModelDown(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	llm := llmtest.New(t, func(llmtest.Request) llmtest.Response { return llmtest.RateLimited("0") })
	vars := map[string]string{"OPENAI_BASE_URL": llm.URL(), "OPENAI_API_KEY": "test", "MERGEGUARD_MODEL": "gpt-4o-mini"}
	dir := t.TempDir()
	base := gitCommit(t, dir, map[string]string{"main.go": "package main\n"})
	head := gitCommit(t, dir, map[string]string{"cloud/keys.go": "package cloud\n\nconst key = \"AKIAZ7VRSQ5TJN2XMY4W\"\n"})
	for _, format := range []string{"text", "json", "markdown", "sarif", "rdjson", "line"} {
		t.Run(format, func(t *testing.T) {
			stdout, stderr, err := runCmd(t, env(vars), "review", "--repo", dir, "--base", base, "--head", head, "--format", format)
			if err != nil {
				t.Fatalf("exit %d: %v\n%s", exitCode(err), err, stderr)
			}
			if !strings.Contains(stdout, "aws-access-token") {
				t.Errorf("stdout lacks the AWS key's finding:\n%s", stdout)
			}
			if !strings.Contains(stderr, "the model part of the review failed") {
				t.Errorf("stderr does not say the model failed:\n%s", stderr)
			}
		})
	}
	stdout, _, err := runCmd(t, env(vars), "review", "--repo", dir, "--base", base, "--head", head, "--format", "json", "--fail-on-degraded")
	if exitCode(err) != 1 || !errors.Is(err, errDegraded) {
		t.Errorf("--fail-on-degraded: %v (exit %d), want exit 1, the review is partial", err, exitCode(err))
	}
	var v struct {
		Degraded bool     `json:"degraded"`
		Verdict  string   `json:"verdict"`
		Notes    []string `json:"notes"`
	}
	if err := json.Unmarshal([]byte(stdout), &v); err != nil {
		t.Fatal(err)
	}
	if !v.Degraded || v.Verdict != "request_changes" || !slices.Contains(v.Notes, task.ModelUnavailableNote) {
		t.Errorf("json: degraded %v, verdict %q, notes %q; want degraded, request_changes, the model's note", v.Degraded, v.Verdict, v.Notes)
	}
}

// TestReviewProgress: a terminal sees each agent start and end with its
// time (a long linter shows which one runs); a pipe sees only the final
// line with the review's time, findings and verdict.
func TestReviewProgress(t *testing.T) {
	t.Parallel()
	events := []review.Event{
		{Type: review.EventAgentStarted, Stage: review.StageReviewer, Agent: "analyzer:govet"},
		{Type: review.EventAgentHandoff, Stage: review.StageReviewer, Agent: "analyzer:govet",
			Data: map[string]any{"result": review.AgentResult{Agent: "analyzer:govet", Status: review.AgentSuccess, Issues: 2, ElapsedMS: 1234}}},
		{Type: review.EventPipelineCompleted, Data: map[string]any{"duration_ms": int64(2500), "findings": 2, "verdict": review.DecisionComment}},
	}
	for _, tt := range []struct {
		live bool
		want string
	}{
		{true, "mergeguard:   analyzer:govet…\nmergeguard:   analyzer:govet: success, 2 finding(s), 1.23s\nmergeguard: reviewed in 2.5s: 2 finding(s), verdict comment\n"},
		{false, "mergeguard: reviewed in 2.5s: 2 finding(s), verdict comment\n"},
	} {
		var b strings.Builder
		p := progress{w: &b, live: tt.live}
		for _, e := range events {
			p.Emit(t.Context(), e)
		}
		if diff := cmp.Diff(tt.want, b.String()); diff != "" {
			t.Errorf("live %v (-want +got):\n%s", tt.live, diff)
		}
	}
}

// TestReviewDiffReadsTheCheckout: `review --diff` in a checkout reads a
// modified file whole from the work tree when it is the diff's head side,
// so shellcheck checks it; from outside any repository the file is not
// read, and the summary says a file was not checked.
func TestReviewDiffReadsTheCheckout(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("shellcheck"); err != nil {
		t.Skip("shellcheck not installed")
	}
	dir := t.TempDir()
	gitCommit(t, dir, map[string]string{"run.sh": "#!/bin/bash\nset -e\nfor f in $(ls); do\n  echo \"$f\"\ndone\n"})
	if err := os.WriteFile(filepath.Join(dir, "run.sh"), []byte("#!/bin/bash\nset -e\nfor f in $(ls); do\n  rm $f\ndone\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.CommandContext(t.Context(), "git", "-C", dir, "diff").Output()
	if err != nil {
		t.Fatal(err)
	}
	diffFile := filepath.Join(t.TempDir(), "change.diff")
	if err := os.WriteFile(diffFile, out, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, repo, want string
	}{
		{"in the checkout", dir, "run.sh:4:6: info: SC2086: Double quote to prevent globbing and word splitting\n"},
		{"elsewhere", t.TempDir(), ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, err := runCmd(t, env(nil), "review", "--diff", diffFile, "--repo", tt.repo, "--format", "line")
			if err != nil || stdout != tt.want {
				t.Errorf("stdout %q, %v; want %q\n%s", stdout, err, tt.want, stderr)
			}
		})
	}
	stdout, _, err := runCmd(t, env(nil), "review", "--diff", diffFile, "--repo", t.TempDir(), "--format", "text")
	if err != nil || !strings.Contains(stdout, "no findings. 1 file was not checked by its linter (see the notes).") {
		t.Errorf("outside a checkout, the summary does not say the file was not checked (%v):\n%s", err, stdout)
	}
}
