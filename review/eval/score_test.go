package eval

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/mergeguard/mergeguard/review"
)

func finding(file string, start, end int, sev review.Severity, cat review.Category) review.Finding {
	return review.Finding{FilePath: file, LineStart: start, LineEnd: end, Severity: sev, Category: cat, Title: "t"}
}

func TestAtLocation(t *testing.T) {
	g := Golden{File: "a.go", StartLine: 10, EndLine: 12, Category: "bug", Text: "x"}
	tests := []struct {
		name string
		g    Golden
		f    review.Finding
		tol  int
		want bool
	}{
		{"inside", g, finding("a.go", 11, 11, "warning", "bug"), 3, true},
		{"within tolerance before", g, finding("a.go", 7, 7, "warning", "bug"), 3, true},
		{"just outside tolerance", g, finding("a.go", 6, 6, "warning", "bug"), 3, false},
		{"within tolerance after", g, finding("a.go", 15, 20, "warning", "bug"), 3, true},
		{"zero tolerance, adjacent", g, finding("a.go", 13, 13, "warning", "bug"), 0, false},
		{"range spanning the golden", g, finding("a.go", 1, 30, "warning", "bug"), 0, true},
		{"end before start counts as one line", g, finding("a.go", 12, 0, "warning", "bug"), 0, true},
		{"other file", g, finding("b.go", 11, 11, "warning", "bug"), 3, false},
		{"other category", g, finding("a.go", 11, 11, "warning", "security"), 3, false},
		{"finding without category", g, finding("a.go", 11, 11, "warning", ""), 3, true},
		{"golden without category", Golden{File: "a.go", Line: 11, Text: "x"}, finding("a.go", 11, 11, "warning", "security"), 0, true},
		{"golden without line", Golden{File: "a.go", Text: "x"}, finding("a.go", 1, 1, "warning", "bug"), 100, false},
		{"golden without file", Golden{Text: "x"}, finding("a.go", 1, 1, "warning", "bug"), 100, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := AtLocation(tt.g, tt.f, tt.tol); got != tt.want {
				t.Errorf("AtLocation = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestScore(t *testing.T) {
	c := Case{ID: "c", Golden: []Golden{
		{File: "a.go", Line: 10, Severity: "critical", Category: "bug", Text: "nil"},
		{File: "b.go", Line: 5, Severity: "warning", Category: "security", Text: "sql"},
	}}
	tests := []struct {
		name     string
		findings []review.Finding
		want     CaseResult
	}{
		{"nothing found", nil, CaseResult{ID: "c", Precision: 0, Recall: 0, F1: 0, Duplicates: 0}},
		{"one of two, exactly", []review.Finding{finding("a.go", 10, 10, "critical", "bug")},
			CaseResult{ID: "c", Precision: 1, Recall: 0.5, F1: 2.0 / 3, Duplicates: 0}},
		{"both, plus a false alarm", []review.Finding{
			finding("a.go", 9, 11, "critical", "bug"), finding("b.go", 5, 5, "warning", "security"), finding("c.go", 1, 1, "info", "quality")},
			CaseResult{ID: "c", Precision: 2.0 / 3, Recall: 1, F1: 0.8, Duplicates: 0}},
		{"the same problem twice", []review.Finding{
			finding("a.go", 10, 10, "critical", "bug"), finding("a.go", 11, 11, "warning", "bug")},
			CaseResult{ID: "c", Precision: 1, Recall: 0.5, F1: 2.0 / 3, Duplicates: 1}},
		{"two unmatched findings on the same lines", []review.Finding{
			finding("z.go", 1, 3, "info", "quality"), finding("z.go", 2, 2, "info", "quality")},
			CaseResult{ID: "c", Precision: 0, Recall: 0, F1: 0, Duplicates: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pairs, _, err := Match(context.Background(), c, tt.findings, 3, nil)
			if err != nil {
				t.Fatal(err)
			}
			got := Score(c, tt.findings, pairs)
			opt := cmpopts.IgnoreFields(CaseResult{}, "Golden", "Findings", "Pairs")
			if diff := cmp.Diff(tt.want, got, opt, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
				t.Errorf("Score (-want +got):\n%s", diff)
			}
		})
	}
}

func TestScoreMarksMatches(t *testing.T) {
	c := Case{ID: "c", Golden: []Golden{{File: "a.go", Line: 10, Severity: "critical", Text: "nil"}}}
	fs := []review.Finding{finding("x.go", 1, 1, "info", "quality"), finding("a.go", 10, 10, "warning", "bug")}
	pairs, _, _ := Match(context.Background(), c, fs, 0, nil)
	got := Score(c, fs, pairs)
	if diff := cmp.Diff([]Pair{{Golden: 0, Finding: 1, By: "location"}}, got.Pairs); diff != "" {
		t.Errorf("pairs (-want +got):\n%s", diff)
	}
	if !got.Golden[0].Matched || got.Findings[0].Golden != -1 || got.Findings[1].Golden != 0 {
		t.Errorf("marks: golden %+v, findings %+v", got.Golden, got.Findings)
	}
}

// fakeJudge matches the findings whose title is the golden text.
type fakeJudge struct{ err error }

func (j fakeJudge) Same(_ context.Context, _ Case, g Golden, fs []review.Finding) ([]int, review.CostInfo, error) {
	var out []int
	for i, f := range fs {
		if f.Title == g.Text {
			out = append(out, i)
		}
	}
	return append(out, -1, len(fs)), review.CostInfo{TotalCost: 0.5}, j.err
}

func TestMatchWithJudge(t *testing.T) {
	c := Case{ID: "c", Golden: []Golden{{Text: "sql injection"}, {Text: "leak"}}}
	fs := []review.Finding{{FilePath: "far.go", LineStart: 99, Title: "sql injection"}, {Title: "other"}}
	pairs, cost, err := Match(context.Background(), c, fs, 0, fakeJudge{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]Pair{{Golden: 0, Finding: 0, By: "judge"}}, pairs); diff != "" {
		t.Errorf("pairs (-want +got):\n%s", diff)
	}
	if cost.TotalCost != 1 {
		t.Errorf("judge cost = %v, want 1 (two calls)", cost.TotalCost)
	}
	if _, _, err := Match(context.Background(), c, fs, 0, fakeJudge{err: errors.New("down")}); err == nil {
		t.Error("a failing judge gave no error")
	}
	if pairs, _, _ := Match(context.Background(), c, nil, 0, fakeJudge{err: errors.New("down")}); pairs != nil {
		t.Error("the judge was asked about no findings")
	}
}

func TestSummarize(t *testing.T) {
	results := []CaseResult{
		{ID: "a", Golden: []GoldenResult{{Severity: "critical", Matched: true}, {Severity: "warning"}},
			Findings:   []FindingResult{{Severity: "critical", Golden: 0}, {Severity: "info", Golden: -1, Duplicate: true}},
			Duplicates: 1, FalsePositives: 2, InputTokens: 100, OutputTokens: 10, Cost: 0.01, WallMS: 100,
			Context: &ContextResult{Known: true, Seen: true}},
		{ID: "clean", Clean: true, Findings: []FindingResult{{Severity: "warning", Golden: -1}}, WallMS: 300,
			Context: &ContextResult{Known: false}},
		{ID: "b", Golden: []GoldenResult{{Severity: "warning"}}, Context: &ContextResult{Known: true}, WallMS: 200},
		{ID: "broken", Error: "boom", Golden: []GoldenResult{{Severity: "critical"}}},
	}
	got := Summarize(results)
	want := Summary{
		Cases: 4, CleanCases: 1, Errors: 1, Golden: 3, MatchedGolden: 1, Findings: 3, MatchedFindings: 1,
		Precision: 1.0 / 3, Recall: 1.0 / 3, F1: 1.0 / 3,
		BySeverity: []SeverityScore{
			{Severity: "critical", Golden: 1, MatchedGolden: 1, Recall: 1, Findings: 1, MatchedFindings: 1, Precision: 1},
			{Severity: "warning", Golden: 2, Recall: 0, Findings: 1},
			{Severity: "info", Findings: 1},
		},
		CleanFindings: 1, CleanCasesFlagged: 1, FalsePositives: 2, FalsePositiveShare: 0.4,
		Duplicates: 1, DuplicateRate: 1.0 / 3, InputTokens: 100, OutputTokens: 10, Cost: 0.01,
		WallMS: 600, MeanWallMS: 200, Context: &ContextSummary{Cases: 2, Seen: 1, Recall: 0.5},
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
		t.Errorf("Summarize (-want +got):\n%s", diff)
	}
}
