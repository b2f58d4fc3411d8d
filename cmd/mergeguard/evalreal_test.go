package main

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/mergeguard/mergeguard/review/codectx"
	"github.com/mergeguard/mergeguard/review/eval"
)

// sliceDir is the CI slice of the real-world set: three real commits
// with their truth and the head files a review needs
// (scripts/eval-real/slice.sh).
var sliceDir = filepath.Join("..", "..", "testdata", "eval-real", "slice")

// TestEvalRealSlice reviews the slice's commits as `mergeguard eval
// --real` does (the review's own code path, without a model) in
// repositories rebuilt from each commit's head files and diff, and checks
// the figures against the ones these commits give: analyzer precision and
// recall against shellcheck's CLI, context recall of callers and
// definitions against go/types, snippet precision.
func TestEvalRealSlice(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: every commit of the slice reviewed, about 2 s; skipped by -short, make test runs it")
	}
	t.Parallel()
	cases, err := eval.LoadReal(sliceDir)
	if err != nil {
		t.Fatal(err)
	}
	scVersion := shellcheckVersion()
	cfg, err := loadConfig("", env(nil))
	if err != nil {
		t.Fatal(err)
	}
	run := newRealRunner(testProcess, cfg, env(nil))
	want := map[string]eval.RealResult{
		"go-chi/chi@29164f023bf9": {
			Analyzers: &eval.AnalyzerScore{ByTool: map[string]eval.AnalyzerTotals{}},
			Context: &eval.ContextScore{Callers: 2, CallersFound: 2, Definitions: 13, DefinitionsFound: 13, Snippets: 11, Useful: 11,
				ByKind: map[string]eval.KindCount{"const": {Truth: 1, Found: 1}, "func": {Truth: 2, Found: 2}, "method": {Truth: 8, Found: 8},
					"type": {Truth: 1, Found: 1}, "var": {Truth: 1, Found: 1}}},
		},
		"rbenv/rbenv@baf7656d2f15": {Analyzers: &eval.AnalyzerScore{
			AnalyzerTotals: eval.AnalyzerTotals{Truth: 8, Found: 5, Matched: 5},
			ByTool:         map[string]eval.AnalyzerTotals{"shellcheck": {Truth: 8, Found: 5, Matched: 5}},
			Missed: []eval.ToolFinding{{Tool: "shellcheck", Rule: "SC2006", Path: "libexec/rbenv-exec", Line: 35},
				{Tool: "shellcheck", Rule: "SC2006", Path: "libexec/rbenv-rehash", Line: 147},
				{Tool: "shellcheck", Rule: "SC2006", Path: "libexec/rbenv-which", Line: 66}},
		}},
		"dokku/dokku@a93e180a898b": {Analyzers: &eval.AnalyzerScore{
			AnalyzerTotals: eval.AnalyzerTotals{Truth: 4, Found: 3, Matched: 3},
			ByTool:         map[string]eval.AnalyzerTotals{"shellcheck": {Truth: 4, Found: 3, Matched: 3}},
			Missed:         []eval.ToolFinding{{Tool: "shellcheck", Rule: "SC2001", Path: "plugins/00_dokku-standard/exec-app-json-scripts", Line: 44}},
		}},
	}
	var results []eval.RealResult
	for _, c := range cases {
		t.Run(c.ID(), func(t *testing.T) {
			w, ok := want[c.ID()]
			if !ok {
				t.Fatalf("no expected figures for %s", c.ID())
			}
			if c.Context != nil && !codectx.Available {
				t.Skip("no code context without cgo")
			}
			if v := c.Analyzers.Tools["shellcheck"]; c.Context == nil && v != scVersion {
				t.Skipf("the truth is shellcheck %s's, this machine's is %q", v, scVersion)
			}
			dir := rebuild(t, filepath.Join(sliceDir, "trees", strings.ReplaceAll(c.ID(), "/", "+")))
			got := run.review(t.Context(), dir, "HEAD^", "HEAD", c)
			if got.Error != "" {
				t.Fatal(got.Error)
			}
			results = append(results, got)
			w.Repo, w.Commit = c.Repo, c.Commit
			if diff := cmp.Diff(w, got, cmpopts.IgnoreFields(eval.RealResult{}, "WallMS", "ContextMS", "ContextDigest"), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("figures (-want +got):\n%s", diff)
			}
			if (c.Context != nil) != (got.ContextDigest != "") {
				t.Errorf("context digest %q for a case with context truth %v", got.ContextDigest, c.Context != nil)
			}
		})
	}
	if len(results) == len(cases) {
		s := eval.SummarizeReal(results)
		if p, r := s.Analyzers.Precision(), s.Analyzers.Recall(); p != 1 || r != 8.0/12 {
			t.Errorf("analyzer precision %v, recall %v; want 1 and 8/12", p, r)
		}
	}
}

// shellcheckVersion is the version of the shellcheck on PATH, "" when
// there is none.
func shellcheckVersion() string {
	out, err := exec.Command("shellcheck", "--version").Output()
	if err != nil {
		return ""
	}
	for _, l := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(l, "version: "); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// rebuild makes a git repository of a slice case: its base (the head
// files with the commit's diff reversed) and its head, committed.
func rebuild(t *testing.T, tree string) string {
	t.Helper()
	dir := t.TempDir()
	copyDir(t, filepath.Join(tree, "head"), dir)
	change, err := filepath.Abs(filepath.Join(tree, "change.diff"))
	if err != nil {
		t.Fatal(err)
	}
	gitRun(t, dir, "init", "-q")
	gitRun(t, dir, "apply", "-R", "--binary", change)
	gitRun(t, dir, "add", "-A")
	gitRun(t, dir, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "base")
	gitRun(t, dir, "apply", "--binary", change)
	gitRun(t, dir, "add", "-A")
	gitRun(t, dir, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "head")
	return dir
}

// copyDir copies the files under src into dst, keeping their modes.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			return err
		}
		return os.WriteFile(to, b, info.Mode().Perm())
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestEvalRealCommand runs `mergeguard eval --real` end to end on a set of
// one commit of a local repository whose bare clone is the mirror, with a
// truth of two shellcheck findings of which the review reports one; and
// refuses a set whose repository has no mirror, saying how to make it.
func TestEvalRealCommand(t *testing.T) {
	t.Parallel()
	if shellcheckVersion() == "" {
		t.Skip("shellcheck is not installed")
	}
	repo := t.TempDir()
	gitRun(t, repo, "init", "-q")
	commit := func(content string) string {
		if err := os.WriteFile(filepath.Join(repo, "s.sh"), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		gitRun(t, repo, "add", "-A")
		gitRun(t, repo, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "c")
		return strings.TrimSpace(gitOut(t, repo, "rev-parse", "HEAD"))
	}
	commit("#!/bin/bash\nf() {\n\techo hi\n}\n")
	head := commit("#!/bin/bash\nf() {\n\tlocal x=$(date)\n\techo \"$x\"\n}\n")
	mirrors := t.TempDir()
	gitRun(t, repo, "clone", "-q", "--bare", repo, filepath.Join(mirrors, "o+r", "repo"))
	set := t.TempDir()
	writeTruth := func(name, body string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(set, "analyzers"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(set, "analyzers", name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeTruth("o+r.json", `{"repo":"o/r","commit":"`+head+`","findings":[
		{"tool":"shellcheck","rule":"SC2155","path":"s.sh","line":3},
		{"tool":"shellcheck","rule":"SC2034","path":"s.sh","line":4}]}`)
	out := filepath.Join(t.TempDir(), "real.json")
	stdout, stderr, err := runCmd(t, env(nil), "eval", "--real", set, "--mirrors", mirrors, "--out", out)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if want := "| 1 (0 errors) | 1/1 (100.0%) | 1/2 (50.0%) |"; !strings.Contains(stdout, want) {
		t.Errorf("stdout lacks %q:\n%s", want, stdout)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"matched": 1`) {
		t.Errorf("--out lacks the match:\n%s", b)
	}

	writeTruth("o+missing.json", `{"repo":"o/missing","commit":"`+head+`","findings":[]}`)
	_, _, err = runCmd(t, env(nil), "eval", "--real", set, "--mirrors", mirrors)
	want := "git clone --bare https://github.com/o/missing " + filepath.Join(mirrors, "o+missing", "repo")
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("a missing mirror: err = %v, want one containing %q", err, want)
	}
}
