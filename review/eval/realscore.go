package eval

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/codectx"
)

// Observed is what MergeGuard did on a commit of the real-world set: the
// findings of its review without a model, the code context
// codectx.Collect found, and the review's wall time.
type Observed struct {
	Findings []review.Finding
	// Snippets are the code-context snippets of every changed file.
	Snippets []codectx.Snippet
	// Hunks are the head-side line ranges the diff's hunks show (their
	// context lines included): a truth item there is in front of the
	// reader already, so it counts as found (ShownByDiff).
	Hunks []codectx.Snippet
	// WallMS is the review's wall time; ContextMS the collection's.
	WallMS, ContextMS int64
}

// RealResult is the score of one commit of the real-world set.
type RealResult struct {
	Repo      string `json:"repo"`
	Commit    string `json:"commit"`
	WallMS    int64  `json:"wall_ms"`
	ContextMS int64  `json:"context_ms,omitempty"`
	// Analyzers and Context are nil when the commit has no such truth.
	Analyzers *AnalyzerScore `json:"analyzers,omitempty"`
	Context   *ContextScore  `json:"context,omitempty"`
	// ContextDigest identifies the set of snippets collected (each
	// one's file, kind and range), to compare two runs: the same commit
	// must get the same context on an idle and on a loaded machine.
	ContextDigest string `json:"context_digest,omitempty"`
	// Error is why the commit could not be reviewed; it is then left out
	// of every figure.
	Error string `json:"error,omitempty"`
}

// ID is "owner/name@<12 hex>".
func (r RealResult) ID() string { return RealCase{Repo: r.Repo, Commit: r.Commit}.ID() }

// AnalyzerScore compares MergeGuard's shellcheck, actionlint and go vet
// findings with the tools' own: Truth counts the tools' findings, Found
// MergeGuard's, Matched those of MergeGuard's that the tools report too
// (same tool, rule, path and line).
type AnalyzerScore struct {
	AnalyzerTotals
	// ByTool splits the counts by tool.
	ByTool map[string]AnalyzerTotals `json:"by_tool"`
	// Missed are the tools' findings MergeGuard lacks; Extra are
	// MergeGuard's the tools do not report.
	Missed []ToolFinding `json:"missed,omitempty"`
	Extra  []ToolFinding `json:"extra,omitempty"`
}

// ContextScore compares the code context with the go/types truth.
type ContextScore struct {
	Callers          int `json:"callers"`
	CallersFound     int `json:"callers_found"`
	Definitions      int `json:"definitions"`
	DefinitionsFound int `json:"definitions_found"`
	// Snippets counts the snippets that are not the changed code's
	// enclosing definition; Useful those covering a truth item.
	Snippets int `json:"snippets"`
	Useful   int `json:"useful"`
	// ByKind splits the definitions by kind (func, method, type, const,
	// var).
	ByKind map[string]KindCount `json:"by_kind,omitempty"`
	// MissedCallers and MissedDefinitions are the truth items no snippet
	// covers.
	MissedCallers     []TruthCaller     `json:"missed_callers,omitempty"`
	MissedDefinitions []TruthDefinition `json:"missed_definitions,omitempty"`
}

// KindCount counts the definitions of a kind and those found.
type KindCount struct {
	Truth int `json:"truth"`
	Found int `json:"found"`
}

// lintTools maps the agents of MergeGuard's linters to the tools whose
// truth they are compared with.
var lintTools = map[string]string{
	"analyzer:shellcheck": "shellcheck",
	"analyzer:actionlint": "actionlint",
	"analyzer:govet":      "govet",
}

// ScoreReal scores one commit: the analyzers against the tools' findings
// and the code context against the go/types truth, as far as the case has
// truth of each.
func ScoreReal(c RealCase, o Observed) RealResult {
	r := RealResult{Repo: c.Repo, Commit: c.Commit, WallMS: o.WallMS, ContextMS: o.ContextMS}
	if c.Analyzers != nil {
		s := scoreAnalyzers(c.Analyzers.Findings, o.Findings)
		r.Analyzers = &s
	}
	if c.Context != nil {
		s := scoreContext(*c.Context, o.Snippets, o.Hunks)
		r.Context = &s
		r.ContextDigest = snippetDigest(o.Snippets)
	}
	return r
}

// snippetDigest is the first 12 hex digits of the SHA-256 of the
// snippets' sorted "for kind path start end" lines.
func snippetDigest(snippets []codectx.Snippet) string {
	lines := make([]string, 0, len(snippets))
	for _, s := range snippets {
		lines = append(lines, fmt.Sprintf("%s\t%s\t%s\t%d\t%d", s.For, s.Kind, s.Path, s.Start, s.End))
	}
	slices.Sort(lines)
	sum := sha256.Sum256([]byte(strings.Join(lines, "\n")))
	return hex.EncodeToString(sum[:6])
}

// scoreAnalyzers matches MergeGuard's linter findings (those of agents
// lintTools names; a (tool, rule, path, line) once) with the tools'.
func scoreAnalyzers(truth []ToolFinding, findings []review.Finding) AnalyzerScore {
	want := map[ToolFinding]bool{}
	for _, t := range truth {
		want[t] = true
	}
	got := map[ToolFinding]bool{}
	for _, f := range findings {
		tool, ok := lintTools[f.Agent]
		if !ok || f.Side == review.SideLeft {
			continue
		}
		got[ToolFinding{Tool: tool, Rule: f.Rule, Path: f.FilePath, Line: f.LineStart}] = true
	}
	s := AnalyzerScore{AnalyzerTotals: AnalyzerTotals{Truth: len(want), Found: len(got)}, ByTool: map[string]AnalyzerTotals{}}
	for g := range got {
		t := s.ByTool[g.Tool]
		t.Found++
		if want[g] {
			s.Matched++
			t.Matched++
		} else {
			s.Extra = append(s.Extra, g)
		}
		s.ByTool[g.Tool] = t
	}
	for w := range want {
		t := s.ByTool[w.Tool]
		t.Truth++
		s.ByTool[w.Tool] = t
		if !got[w] {
			s.Missed = append(s.Missed, w)
		}
	}
	slices.SortFunc(s.Missed, compareToolFindings)
	slices.SortFunc(s.Extra, compareToolFindings)
	return s
}

func compareToolFindings(a, b ToolFinding) int {
	return cmp.Or(cmp.Compare(a.Path, b.Path), cmp.Compare(a.Line, b.Line), cmp.Compare(a.Tool, b.Tool), cmp.Compare(a.Rule, b.Rule))
}

// span is a range of lines of a file a snippet shows.
type span struct {
	path       string
	start, end int
}

// covers reports whether a span holds path:line.
func (s span) covers(path string, line int) bool {
	return s.path == path && line >= s.start && line <= s.end
}

// scoreContext counts the truth items some snippet (of any kind) or a hunk
// of the diff covers, and the snippets other than the enclosing
// definitions that cover one (a range shown for two changed files counts
// once).
func scoreContext(t ContextTruth, snippets, hunks []codectx.Snippet) ContextScore {
	var all, other []span
	for _, h := range hunks {
		all = append(all, span{path: h.Path, start: h.Start, end: h.End})
	}
	seen := map[span]bool{}
	for _, sn := range snippets {
		sp := span{path: sn.Path, start: sn.Start, end: sn.End}
		all = append(all, sp)
		if sn.Kind != codectx.Enclosing && !seen[sp] {
			seen[sp] = true
			other = append(other, sp)
		}
	}
	covered := func(path string, line int) bool {
		return slices.ContainsFunc(all, func(s span) bool { return s.covers(path, line) })
	}
	s := ContextScore{Callers: len(t.Callers), Definitions: len(t.Definitions), Snippets: len(other)}
	for _, c := range t.Callers {
		if covered(c.Path, c.Line) {
			s.CallersFound++
		} else {
			s.MissedCallers = append(s.MissedCallers, c)
		}
	}
	for _, d := range t.Definitions {
		if s.ByKind == nil {
			s.ByKind = map[string]KindCount{}
		}
		k := s.ByKind[d.Kind]
		k.Truth++
		if covered(d.Path, d.Line) {
			s.DefinitionsFound++
			k.Found++
		} else {
			s.MissedDefinitions = append(s.MissedDefinitions, d)
		}
		s.ByKind[d.Kind] = k
	}
	for _, sp := range other {
		useful := slices.ContainsFunc(t.Callers, func(c TruthCaller) bool { return sp.covers(c.Path, c.Line) }) ||
			slices.ContainsFunc(t.Definitions, func(d TruthDefinition) bool { return sp.covers(d.Path, d.Line) })
		if useful {
			s.Useful++
		}
	}
	return s
}

// RealSummary totals the scores of the real-world set.
type RealSummary struct {
	// Commits counts the commits, Errors those that could not be
	// reviewed (left out of the figures below).
	Commits int `json:"commits"`
	Errors  int `json:"errors"`
	// AnalyzerCommits counts the commits with analyzer truth; Truth,
	// Found and Matched sum their scores. ByTool splits them by tool.
	AnalyzerCommits int                       `json:"analyzer_commits"`
	Analyzers       AnalyzerTotals            `json:"analyzers"`
	ByTool          map[string]AnalyzerTotals `json:"by_tool,omitempty"`
	// ContextCommits counts the commits with context truth; Context sums
	// their scores (the missed items left out).
	ContextCommits int          `json:"context_commits"`
	Context        ContextScore `json:"context"`
	// MedianWallMS and MaxWallMS are over the reviewed commits.
	MedianWallMS int64 `json:"median_wall_ms"`
	MaxWallMS    int64 `json:"max_wall_ms"`
}

// AnalyzerTotals count findings: the tools', MergeGuard's, and
// MergeGuard's that the tools report too.
type AnalyzerTotals struct {
	Truth   int `json:"truth"`
	Found   int `json:"found"`
	Matched int `json:"matched"`
}

// Precision is Matched/Found, 1 when MergeGuard found nothing.
func (t AnalyzerTotals) Precision() float64 { return ratioOr1(t.Matched, t.Found) }

// Recall is Matched/Truth, 1 when the tools found nothing.
func (t AnalyzerTotals) Recall() float64 { return ratioOr1(t.Matched, t.Truth) }

// ratioOr1 is n/d, 1 when d is 0 (nothing to find, nothing wrongly
// found).
func ratioOr1(n, d int) float64 {
	if d == 0 {
		return 1
	}
	return float64(n) / float64(d)
}

// SummarizeReal totals the results.
func SummarizeReal(results []RealResult) RealSummary {
	s := RealSummary{Commits: len(results), ByTool: map[string]AnalyzerTotals{}}
	var walls []int64
	for _, r := range results {
		if r.Error != "" {
			s.Errors++
			continue
		}
		walls = append(walls, r.WallMS)
		if a := r.Analyzers; a != nil {
			s.AnalyzerCommits++
			s.Analyzers.Truth += a.Truth
			s.Analyzers.Found += a.Found
			s.Analyzers.Matched += a.Matched
			addByTool(s.ByTool, a)
		}
		if c := r.Context; c != nil {
			s.ContextCommits++
			s.Context.Callers += c.Callers
			s.Context.CallersFound += c.CallersFound
			s.Context.Definitions += c.Definitions
			s.Context.DefinitionsFound += c.DefinitionsFound
			s.Context.Snippets += c.Snippets
			s.Context.Useful += c.Useful
			for kind, n := range c.ByKind {
				if s.Context.ByKind == nil {
					s.Context.ByKind = map[string]KindCount{}
				}
				k := s.Context.ByKind[kind]
				k.Truth += n.Truth
				k.Found += n.Found
				s.Context.ByKind[kind] = k
			}
		}
	}
	if len(walls) > 0 {
		slices.Sort(walls)
		s.MedianWallMS, s.MaxWallMS = median(walls), walls[len(walls)-1]
	}
	return s
}

// addByTool adds a commit's per-tool counts to the totals.
func addByTool(by map[string]AnalyzerTotals, a *AnalyzerScore) {
	for tool, n := range a.ByTool {
		t := by[tool]
		t.Truth += n.Truth
		t.Found += n.Found
		t.Matched += n.Matched
		by[tool] = t
	}
}

// median of sorted values (the lower middle one of an even count is
// averaged with the upper).
func median(sorted []int64) int64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}
