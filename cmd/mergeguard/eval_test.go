package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mergeguard/mergeguard/review/codectx"
	"github.com/mergeguard/mergeguard/review/eval"
	"github.com/mergeguard/mergeguard/review/llm/llmtest"
)

// corpusDir is the seeded-bug corpus.
var corpusDir = filepath.Join("..", "..", "testdata", "eval")

// hallucinated is the file the scripted model invents a finding on in
// every case.
const hallucinated = "internal/nowhere/ghost.go"

// fileLine finds the first file of a reviewer's prompt.
var fileLine = regexp.MustCompile(`(?m)^File: (\S+)`)

// oracle is a scripted model for the corpus: for every other defect case
// (by title) it reports the golden comments at their lines, and in every
// case it also reports a finding on a file that does not exist.
func oracle(t *testing.T, cases []eval.Case) (answer func(llmtest.Request) llmtest.Response, answered map[string]bool) {
	t.Helper()
	byTitle := map[string]eval.Case{}
	answered = map[string]bool{}
	for i, c := range cases {
		byTitle[c.Title] = c
		if !c.Clean && i%2 == 0 {
			answered[c.ID] = true
		}
	}
	return func(r llmtest.Request) llmtest.Response {
		findings := []any{modelFinding(hallucinated, 3, 3, "warning", "bug", "invented problem")}
		if m := fileLine.FindStringSubmatch(r.LastMessage().Content); m != nil {
			// A real file of the prompt, cited at a line it does not
			// have, and at a real line with code it does not hold.
			findings = append(findings, modelFinding(m[1], 99999, 99999, "warning", "bug", "invented line"))
			bad := modelFinding(m[1], 1, 1, "warning", "bug", "invented code")
			bad["code_snippet"] = "launchTheMissiles(nowhere, 42) // not in this file"
			findings = append(findings, bad)
		}
		for title, c := range byTitle {
			if !strings.Contains(r.LastMessage().Content, "Title: "+title+"\n") || !answered[c.ID] {
				continue
			}
			for _, g := range c.Golden {
				s, e := g.Lines()
				findings = append(findings, modelFinding(g.File, s, e, g.Severity, g.Category, g.Text))
			}
		}
		return llmtest.JSON(map[string]any{"findings": findings, "positive_notes": []any{}}).WithUsage(2000, 150)
	}, answered
}

func modelFinding(file string, start, end int, sev, cat, title string) map[string]any {
	return map[string]any{"file_path": file, "line_start": start, "line_end": end, "side": "RIGHT", "severity": sev,
		"category": cat, "title": title, "description": title, "suggestion": "", "code_snippet": "", "confidence": 0.8}
}

// TestEvalCorpus runs `mergeguard eval` on the corpus with the scripted
// model and the analyzers, then again with --resume: the scoring machinery
// end to end, the verifier against planted hallucinations, and the
// throughput (the whole corpus in under 60 s).
func TestEvalCorpus(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("slow: the whole corpus twice, about 15 s; skipped by -short, make test runs it")
	}
	cases, err := eval.LoadCorpus(corpusDir)
	if err != nil {
		t.Fatal(err)
	}
	answer, answered := oracle(t, cases)
	var calls atomic.Int64
	srv := llmtest.New(t, func(r llmtest.Request) llmtest.Response { calls.Add(1); return answer(r) })
	getenv := env(map[string]string{"OPENAI_BASE_URL": srv.URL(), "OPENAI_API_KEY": "sk-test", "MERGEGUARD_MODEL": "gpt-4o-mini"})
	out, md := filepath.Join(t.TempDir(), "eval.json"), filepath.Join(t.TempDir(), "eval.md")
	stdout, stderr, err := runCmd(t, getenv, "eval", "--out", out, "--markdown", md, "--parallel", "4", corpusDir)
	if err != nil {
		t.Fatalf("eval: %v\n%s", err, stderr)
	}
	t.Logf("the corpus with the scripted model:\n%s", stdout) // its last lines give the wall time
	rep := readReport(t, out)
	checkOracleReport(t, rep, answered)
	if b, err := os.ReadFile(md); err != nil || !strings.Contains(string(b), "| go-sql-search | go |") {
		t.Errorf("markdown report: %v\n%s", err, b)
	}
	for _, w := range []string{"precision", "findings on clean cases: 0", "go-nil-user-lookup"} {
		if !strings.Contains(stdout, w) {
			t.Errorf("the table lacks %q", w)
		}
	}

	before := calls.Load()
	if _, stderr, err := runCmd(t, getenv, "eval", "--out", out, "--resume", corpusDir); err != nil {
		t.Fatalf("eval --resume: %v\n%s", err, stderr)
	}
	if n := calls.Load() - before; n != 0 {
		t.Errorf("--resume asked the model %d times, want 0: every case was scored", n)
	}
	_, _, err = runCmd(t, getenv, "eval", "--out", out, "--resume", "--analyzers-only", corpusDir)
	if err == nil || !strings.Contains(err.Error(), "written by another evaluation") {
		t.Errorf("--resume of another model's report: err = %v", err)
	}
	if again := readReport(t, out); again.Summary.Recall != rep.Summary.Recall || len(again.Cases) != len(cases) {
		t.Errorf("--resume changed the figures: %+v, want %+v", again.Summary, rep.Summary)
	}
}

func readReport(t *testing.T, path string) eval.Report {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r, err := eval.ReadJSON(b)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// checkOracleReport checks the figures the scripted model must produce:
// every golden comment it reported matched, every invented finding
// rejected, nothing on clean cases.
func checkOracleReport(t *testing.T, rep eval.Report, answered map[string]bool) {
	t.Helper()
	s := rep.Summary
	if s.Cases != 50 || s.Errors != 0 || s.CleanCases != 10 || s.CleanFindings != 0 {
		t.Errorf("summary: %+v", s)
	}
	for _, c := range rep.Cases {
		if c.FalsePositives < 3 {
			t.Errorf("%s: %d findings rejected, want the 3 invented ones (a file, a line, code)", c.ID, c.FalsePositives)
		}
		for _, f := range c.Findings {
			if f.File == hallucinated || strings.HasPrefix(f.Title, "invented") {
				t.Errorf("%s: an invented finding was reported: %+v", c.ID, f)
			}
		}
		for _, g := range c.Golden {
			if answered[c.ID] && !g.Matched {
				t.Errorf("%s: the golden comment the model reported at its line did not match: %+v; findings %+v", c.ID, g, c.Findings)
			}
		}
	}
	if min := float64(len(answered)) / 40; s.Recall < min || s.Precision < 0.9 || s.FalsePositiveShare < 0.4 {
		t.Errorf("recall %.3f (want at least %.3f), precision %.3f, rejected share %.3f", s.Recall, min, s.Precision, s.FalsePositiveShare)
	}
}

func TestEvalFlags(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"eval"}, "want one dataset"},
		{[]string{"eval", "--resume", corpusDir}, "--resume needs --out"},
		{[]string{"eval", "--parallel", "0", corpusDir}, "--parallel must be at least 1"},
		{[]string{"eval", "--context-only", "--judge-model", "j", corpusDir}, "cannot be combined with --judge-model"},
		{[]string{"eval", filepath.Join(t.TempDir(), "missing.jsonl")}, "read dataset"},
		{[]string{"eval", "--real", corpusDir}, "--real needs --mirrors"},
		{[]string{"eval", "--mirrors", "m"}, "--mirrors needs --real"},
		{[]string{"eval", "--real", "r", "--mirrors", "m", corpusDir}, "--real takes no dataset"},
		{[]string{"eval", "--real", "r", "--mirrors", "m", "--context-only"}, "cannot be combined with"},
		{[]string{"eval", "--real", t.TempDir(), "--mirrors", "m"}, "no truth files"},
	}
	for _, tt := range tests {
		_, _, err := runCmd(t, env(nil), tt.args...)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: err = %v, want one containing %q", tt.args, err, tt.want)
		}
	}
}

// TestEvalContextOnly measures the context recall of the corpus: with
// code-aware context (a cgo build) at least 90% and a case whose evidence
// is in another file seen; without it (the hunks alone) that case missed.
// No prompt may exceed the model's context.
func TestEvalContextOnly(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("slow: the whole corpus, about 10 s; skipped by -short, make test runs it")
	}
	out := filepath.Join(t.TempDir(), "ctx.json")
	stdout, stderr, err := runCmd(t, env(nil), "eval", "--context-only", "--out", out, corpusDir)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	rep := readReport(t, out)
	c := rep.Summary.Context
	if c == nil || c.Cases != 40 || c.Seen == 0 || c.Overflows != 0 {
		t.Fatalf("context summary %+v, want 40 cases, some seen, no prompt over the budget", c)
	}
	if codectx.Available && c.Recall < 0.9 {
		t.Errorf("context recall %.3f with code-aware context, want at least 0.9", c.Recall)
	}
	if !codectx.Available && c.Seen == c.Cases {
		t.Errorf("context summary %+v: every case seen from the hunks alone", c)
	}
	for _, r := range rep.Cases {
		if r.ID == "go-nil-user-lookup" && (r.Context == nil || r.Context.Seen != codectx.Available) {
			t.Errorf("go-nil-user-lookup: ByID's body is in another file; code context %v, yet context %+v", codectx.Available, r.Context)
		}
	}
	if !strings.Contains(stdout, "context recall:") {
		t.Errorf("no context recall line:\n%s", stdout)
	}
	t.Logf("context recall: %d of %d (%.1f%%)", c.Seen, c.Cases, 100*c.Recall)
}
