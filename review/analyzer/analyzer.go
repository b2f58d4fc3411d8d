// Package analyzer holds MergeGuard's built-in deterministic checks: secrets
// (gitleaks), private keys, merge-conflict markers, debugger statements,
// focused tests and committed .env files. They read only the added lines of a
// parsed diff, so a review finds these problems even with no LLM configured.
//
// Every check is chosen for precision over recall: a finding from here should
// almost never be wrong. Findings still go through the pipeline's verifier
// like any other. A check is exact or heuristic, and says so through the
// finding's confidence (see ExactConfidence): only an exact check's finding
// can be verified, and so block a merge.
package analyzer

import (
	"context"
	"path"
	"strings"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/diff"
)

// Analyzer is one deterministic check over the changed files of a diff.
// Implementations are safe for concurrent use.
type Analyzer interface {
	// Name is the agent name the findings are reported under, e.g.
	// "analyzer:secrets".
	Name() string
	// Analyze returns the findings of the check on files. Findings are
	// anchored to new-side (RIGHT) line numbers of added lines.
	Analyze(ctx context.Context, files []*diff.File) ([]review.Finding, error)
}

// ExactConfidence is the confidence from which a built-in analyzer's finding
// comes from an exact detector: one that matches the problem itself (an AWS
// key id's fixed prefix and length, a PEM private-key header, a conflict
// marker, a debugger statement), not a guess from a nearby name, entropy or
// a file-name convention. Heuristic checks report below it (gitleaks'
// generic and keyword-proximity rules, committed .env files). The verifier
// marks an exact finding verified when it is at its lines, a heuristic one
// likely at best, so that a heuristic hit never blocks a merge on its own.
// This is the one place that line is drawn.
const ExactConfidence = 0.9

// heuristicConfidence is the confidence of a heuristic check's finding
// that is worth a look: below ExactConfidence.
const heuristicConfidence = 0.7

// IsAnalyzer reports whether f was reported by a built-in analyzer (the
// pipeline sets Agent; a model cannot).
func IsAnalyzer(f review.Finding) bool { return strings.HasPrefix(f.Agent, review.AnalyzerPrefix) }

// Exact reports whether f is a built-in analyzer's finding from an exact
// detector (see ExactConfidence).
func Exact(f review.Finding) bool { return IsAnalyzer(f) && f.Confidence >= ExactConfidence }

// Builtin returns every built-in analyzer, the secret scanner first.
func Builtin() []Analyzer {
	return []Analyzer{
		NewSecrets(),
		PrivateKeys{},
		ConflictMarkers{},
		DebugStatements{},
		FocusedTests{},
		EnvFiles{},
	}
}

// AddedLine is one added line of a file with its new-side number and the
// index of its hunk.
type AddedLine struct {
	Hunk int
	Num  int
	Text string
}

// Added is one file under analysis with its added lines, computed once
// and shared by every analyzer that reads the file.
type Added struct {
	File  *diff.File
	Lines []AddedLine
}

// FileAnalyzer is an Analyzer whose findings on a file depend on that
// file alone: Run computes each file's added lines once, hands them to
// every FileAnalyzer, and lets go of them before the next file.
type FileAnalyzer interface {
	Analyzer
	// AnalyzeFile returns the findings of the check on one scannable file.
	// a.Lines is reused for the next file: it must not be kept after the
	// call (the lines' texts may).
	AnalyzeFile(ctx context.Context, a *Added) []review.Finding
}

// addedLines appends the added lines of f, in order, to buf[:0].
func addedLines(buf []AddedLine, f *diff.File) []AddedLine {
	out := buf[:0]
	for hi := range f.Hunks {
		for i := range f.Hunks[hi].Lines {
			if l := &f.Hunks[hi].Lines[i]; l.Kind == diff.Add {
				out = append(out, AddedLine{Hunk: hi, Num: int(l.NewLine), Text: l.Text})
			}
		}
	}
	return out
}

// analyzeEach is Analyze of a FileAnalyzer: AnalyzeFile on every scannable
// file.
func analyzeEach(ctx context.Context, a FileAnalyzer, files []*diff.File) ([]review.Finding, error) {
	var (
		out []review.Finding
		buf []AddedLine
	)
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		if !scannable(f) {
			continue
		}
		buf = addedLines(buf, f)
		out = append(out, a.AnalyzeFile(ctx, &Added{File: f, Lines: buf})...)
	}
	return out, nil
}

// scannable reports whether f has added text to scan.
func scannable(f *diff.File) bool {
	return !f.Binary && f.Status != diff.Deleted && f.Additions > 0
}

// finding builds a RIGHT-side finding of agent on lines start..end of f.
func finding(agent string, f *diff.File, start, end int, sev review.Severity, cat review.Category, conf float64, title, desc, suggestion, snippet string) review.Finding {
	return review.Finding{
		FilePath:    f.Path(),
		LineStart:   start,
		LineEnd:     end,
		Side:        review.SideRight,
		Severity:    sev,
		Category:    cat,
		Title:       title,
		Description: desc,
		Suggestion:  suggestion,
		Confidence:  conf,
		CodeSnippet: snippet,
		Agent:       agent,
	}
}

// ext returns the lower-case extension of p without the dot.
func ext(p string) string {
	return strings.TrimPrefix(strings.ToLower(path.Ext(p)), ".")
}
