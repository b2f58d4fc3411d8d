package eval

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/codectx"
)

func lintFinding(agent, rule, path string, line int) review.Finding {
	return review.Finding{Agent: agent, Rule: rule, FilePath: path, LineStart: line, Side: review.SideRight}
}

func TestScoreAnalyzers(t *testing.T) {
	truth := []ToolFinding{
		{"shellcheck", "SC2086", "a.sh", 3},
		{"shellcheck", "SC2034", "a.sh", 9},
		{"actionlint", "expression", ".github/workflows/ci.yml", 12},
	}
	tests := []struct {
		name     string
		findings []review.Finding
		want     AnalyzerScore
	}{
		{"all found", []review.Finding{
			lintFinding("analyzer:shellcheck", "SC2086", "a.sh", 3),
			lintFinding("analyzer:shellcheck", "SC2034", "a.sh", 9),
			lintFinding("analyzer:actionlint", "expression", ".github/workflows/ci.yml", 12),
		}, AnalyzerScore{AnalyzerTotals: AnalyzerTotals{Truth: 3, Found: 3, Matched: 3},
			ByTool: map[string]AnalyzerTotals{"shellcheck": {2, 2, 2}, "actionlint": {1, 1, 1}}}},
		{"wrong rule, wrong line, a duplicate, other agents and the base side ignored", []review.Finding{
			lintFinding("analyzer:shellcheck", "SC2086", "a.sh", 3),
			lintFinding("analyzer:shellcheck", "SC2086", "a.sh", 3), // the same finding twice counts once
			lintFinding("analyzer:shellcheck", "SC2046", "a.sh", 9), // another rule on a truth line
			lintFinding("analyzer:actionlint", "expression", ".github/workflows/ci.yml", 13),
			lintFinding("analyzer:secrets", "aws-key", "a.sh", 3), // not a linter the truth covers
			{Agent: "analyzer:govet", Rule: "printf", FilePath: "x.go", LineStart: 4, Side: review.SideLeft},
		}, AnalyzerScore{AnalyzerTotals: AnalyzerTotals{Truth: 3, Found: 3, Matched: 1},
			ByTool: map[string]AnalyzerTotals{"shellcheck": {Truth: 2, Found: 2, Matched: 1}, "actionlint": {Truth: 1, Found: 1}},
			Missed: []ToolFinding{truth[2], truth[1]},
			Extra:  []ToolFinding{{"actionlint", "expression", ".github/workflows/ci.yml", 13}, {"shellcheck", "SC2046", "a.sh", 9}}}},
		{"nothing found", nil, AnalyzerScore{AnalyzerTotals: AnalyzerTotals{Truth: 3},
			ByTool: map[string]AnalyzerTotals{"shellcheck": {Truth: 2}, "actionlint": {Truth: 1}},
			Missed: []ToolFinding{truth[2], truth[0], truth[1]}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := ScoreReal(RealCase{Repo: "o/r", Commit: strings.Repeat("a", 40), Analyzers: &AnalyzerTruth{Findings: truth}},
				Observed{Findings: tc.findings})
			if diff := cmp.Diff(&tc.want, got.Analyzers); diff != "" {
				t.Errorf("score (-want +got):\n%s", diff)
			}
			if got.Context != nil {
				t.Errorf("context scored without context truth: %+v", got.Context)
			}
		})
	}
}

func TestScoreContext(t *testing.T) {
	truth := ContextTruth{
		Callers: []TruthCaller{{Of: "p.F", Path: "b.go", Line: 10, Call: true}, {Of: "p.F", Path: "c.go", Line: 4}},
		Definitions: []TruthDefinition{{Name: "Limit", Kind: "const", Path: "a.go", Line: 3},
			{Name: "T", Kind: "type", Path: "a.go", Line: 20}},
	}
	snip := func(k codectx.Kind, path string, start, end int) codectx.Snippet {
		return codectx.Snippet{Kind: k, For: "a.go", Path: path, Start: start, End: end}
	}
	tests := []struct {
		name     string
		snippets []codectx.Snippet
		hunks    []codectx.Snippet
		want     ContextScore
	}{
		{"every item covered, one snippet useless, an enclosing one not counted", []codectx.Snippet{
			snip(codectx.Enclosing, "a.go", 18, 25), // covers T: found, but not a snippet of precision
			snip(codectx.Caller, "b.go", 8, 12),
			snip(codectx.Caller, "c.go", 4, 4),
			snip(codectx.Definition, "a.go", 3, 3),
			snip(codectx.Definition, "z.go", 1, 9), // a name collision
		}, nil, ContextScore{Callers: 2, CallersFound: 2, Definitions: 2, DefinitionsFound: 2, Snippets: 4, Useful: 3,
			ByKind: map[string]KindCount{"const": {1, 1}, "type": {1, 1}}}},
		{"a range shown for two files counts once; edges are inclusive", []codectx.Snippet{
			snip(codectx.Caller, "b.go", 10, 11),
			{Kind: codectx.Caller, For: "d.go", Path: "b.go", Start: 10, End: 11},
			snip(codectx.Definition, "a.go", 4, 20),
		}, nil, ContextScore{Callers: 2, CallersFound: 1, Definitions: 2, DefinitionsFound: 1, Snippets: 2, Useful: 2,
			ByKind:        map[string]KindCount{"const": {Truth: 1}, "type": {1, 1}},
			MissedCallers: truth.Callers[1:], MissedDefinitions: truth.Definitions[:1]}},
		{"items the diff's hunks show are found, and are no snippet", []codectx.Snippet{
			snip(codectx.Caller, "b.go", 8, 12),
		}, []codectx.Snippet{{Path: "a.go", Start: 1, End: 5}, {Path: "c.go", Start: 2, End: 6}},
			ContextScore{Callers: 2, CallersFound: 2, Definitions: 2, DefinitionsFound: 1, Snippets: 1, Useful: 1,
				ByKind:            map[string]KindCount{"const": {1, 1}, "type": {Truth: 1}},
				MissedDefinitions: truth.Definitions[1:]}},
		{"no snippets", nil, nil, ContextScore{Callers: 2, Definitions: 2, ByKind: map[string]KindCount{"const": {Truth: 1}, "type": {Truth: 1}},
			MissedCallers: truth.Callers, MissedDefinitions: truth.Definitions}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := ScoreReal(RealCase{Repo: "o/r", Commit: strings.Repeat("a", 40), Context: &truth}, Observed{Snippets: tc.snippets, Hunks: tc.hunks})
			if diff := cmp.Diff(&tc.want, got.Context); diff != "" {
				t.Errorf("score (-want +got):\n%s", diff)
			}
		})
	}
}

// TestContextDigest: the digest of a commit's context does not depend on
// the order the snippets come in, and changes with any snippet's range.
func TestContextDigest(t *testing.T) {
	a := codectx.Snippet{Kind: codectx.Caller, For: "a.go", Path: "b.go", Start: 3, End: 9}
	b := codectx.Snippet{Kind: codectx.Definition, For: "a.go", Path: "c.go", Start: 1, End: 2}
	moved := b
	moved.End = 3
	c := RealCase{Repo: "o/r", Commit: strings.Repeat("a", 40), Context: &ContextTruth{}}
	d1 := ScoreReal(c, Observed{Snippets: []codectx.Snippet{a, b}}).ContextDigest
	d2 := ScoreReal(c, Observed{Snippets: []codectx.Snippet{b, a}}).ContextDigest
	d3 := ScoreReal(c, Observed{Snippets: []codectx.Snippet{a, moved}}).ContextDigest
	if len(d1) != 12 || d1 != d2 || d1 == d3 {
		t.Errorf("digests %q, %q (reordered), %q (a range moved): want 12 hex digits, the first two equal, the third not", d1, d2, d3)
	}
	if got := ScoreReal(RealCase{Repo: "o/r", Commit: c.Commit}, Observed{Snippets: []codectx.Snippet{a}}).ContextDigest; got != "" {
		t.Errorf("a commit without context truth has digest %q", got)
	}
}

func TestSummarizeReal(t *testing.T) {
	results := []RealResult{
		{Repo: "o/a", Commit: "1", WallMS: 3000, Analyzers: &AnalyzerScore{AnalyzerTotals: AnalyzerTotals{Truth: 4, Found: 2, Matched: 2},
			ByTool: map[string]AnalyzerTotals{"shellcheck": {Truth: 4, Found: 2, Matched: 2}}}},
		{Repo: "o/b", Commit: "2", WallMS: 1000, Analyzers: &AnalyzerScore{AnalyzerTotals: AnalyzerTotals{Found: 1},
			ByTool: map[string]AnalyzerTotals{"govet": {Found: 1}}},
			Context: &ContextScore{Callers: 4, CallersFound: 3, Definitions: 5, DefinitionsFound: 5, Snippets: 6, Useful: 3,
				ByKind: map[string]KindCount{"func": {4, 4}, "const": {1, 1}}}},
		{Repo: "o/c", Commit: "3", WallMS: 2000, Context: &ContextScore{Callers: 1, Definitions: 1, DefinitionsFound: 1, Snippets: 2, Useful: 1,
			ByKind: map[string]KindCount{"const": {1, 1}}}},
		{Repo: "o/d", Commit: "4", WallMS: 9000, Error: "review: boom", Context: &ContextScore{Callers: 9}},
		{Repo: "o/e", Commit: "5", WallMS: 8000},
	}
	want := RealSummary{Commits: 5, Errors: 1, AnalyzerCommits: 2,
		Analyzers:      AnalyzerTotals{Truth: 4, Found: 3, Matched: 2},
		ByTool:         map[string]AnalyzerTotals{"shellcheck": {Truth: 4, Found: 2, Matched: 2}, "govet": {Found: 1}},
		ContextCommits: 2, Context: ContextScore{Callers: 5, CallersFound: 3, Definitions: 6, DefinitionsFound: 6, Snippets: 8, Useful: 4,
			ByKind: map[string]KindCount{"func": {4, 4}, "const": {2, 2}}},
		MedianWallMS: 2500, MaxWallMS: 8000}
	got := SummarizeReal(results)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("summary (-want +got):\n%s", diff)
	}
	if p, r := got.Analyzers.Precision(), got.Analyzers.Recall(); p != 2.0/3 || r != 0.5 {
		t.Errorf("precision %v recall %v, want 2/3 and 1/2", p, r)
	}
	var b strings.Builder
	if err := WriteRealMarkdown(&b, RealReport{Summary: got, Results: results}, "mergeguard eval --real x"); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{
		"| 5 (1 errors) | 2/3 (66.7%) | 2/4 (50.0%) | 3/5 (60.0%) | 6/6 (100.0%) | 4/8 (50.0%) | 2.50 | 8.00 |",
		"| shellcheck | 4 | 2 | 2 | 100.0% | 50.0% |",
		"| actionlint | 0 | 0 | 0 | 100.0% | 100.0% |", // listed when nothing was found
		"| govet | 0 | 1 | 0 | 0.0% | 100.0% |",
		"| o/d@4 | error: review: boom |",
		"Definitions found by kind: func 4/4 (100.0%), const 2/2 (100.0%).",
	} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("markdown lacks %q:\n%s", s, b.String())
		}
	}
}

func TestLoadReal(t *testing.T) {
	dir := t.TempDir()
	c1, c2 := strings.Repeat("1", 40), strings.Repeat("2", 40)
	write := func(p, s string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("analyzers/o+r@1.json", `{"repo":"o/r","commit":"`+c1+`","findings":[{"tool":"shellcheck","rule":"SC2086","path":"a.sh","line":3}]}`)
	write("context/o+r@1.json", `{"repo":"o/r","commit":"`+c1+`","definitions":[{"name":"F","kind":"func","path":"a.go","line":2}],"callers":[]}`)
	write("context/a+b@2.json", `{"repo":"a/b","commit":"`+c2+`","definitions":[],"callers":[]}`)
	write("context/README.md", "not a truth file")
	got, err := LoadReal(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []RealCase{
		{Repo: "a/b", Commit: c2, Context: &ContextTruth{Repo: "a/b", Commit: c2, Definitions: []TruthDefinition{}, Callers: []TruthCaller{}}},
		{Repo: "o/r", Commit: c1,
			Analyzers: &AnalyzerTruth{Repo: "o/r", Commit: c1, Findings: []ToolFinding{{"shellcheck", "SC2086", "a.sh", 3}}},
			Context:   &ContextTruth{Repo: "o/r", Commit: c1, Definitions: []TruthDefinition{{"F", "func", "a.go", 2}}, Callers: []TruthCaller{}}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("cases (-want +got):\n%s", diff)
	}
	write("context/bad.json", `{"repo":"o/r","commit":"short"}`)
	if _, err := LoadReal(dir); err == nil || !strings.Contains(err.Error(), "bad.json") {
		t.Errorf("a truth file without a full commit: err = %v, want one naming the file", err)
	}
	if _, err := LoadReal(t.TempDir()); err == nil {
		t.Error("an empty set: no error")
	}
}
