package eval

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/mergeguard/mergeguard/review/text"
)

// RealReport is the outcome of `mergeguard eval --real`.
type RealReport struct {
	Summary RealSummary  `json:"summary"`
	Results []RealResult `json:"results"`
}

// WriteRealJSON writes the report as indented JSON.
func WriteRealJSON(w io.Writer, r RealReport) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteRealMarkdown writes the report as markdown tables: the totals,
// then one row per commit, then what was missed (the first few items of
// each commit). command, when not empty, is printed as the command that
// made the figures.
func WriteRealMarkdown(w io.Writer, r RealReport, command string) error {
	var b strings.Builder
	s := r.Summary
	if command != "" {
		fmt.Fprintf(&b, "Figures of `%s`:\n\n", command)
	}
	b.WriteString("| commits | analyzer precision | analyzer recall | callers found | definitions found | snippet precision | review seconds, median | max |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|\n")
	fmt.Fprintf(&b, "| %d (%d errors) | %s | %s | %s | %s | %s | %s | %s |\n\n", s.Commits, s.Errors,
		frac(s.Analyzers.Matched, s.Analyzers.Found), frac(s.Analyzers.Matched, s.Analyzers.Truth),
		frac(s.Context.CallersFound, s.Context.Callers), frac(s.Context.DefinitionsFound, s.Context.Definitions),
		frac(s.Context.Useful, s.Context.Snippets), seconds(s.MedianWallMS), seconds(s.MaxWallMS))
	fmt.Fprintf(&b, "%d commits with analyzer truth, %d with context truth; review seconds are the wall time of the review without a model, "+
		"context seconds that of collecting the code context a review with a model would have.\n\n", s.AnalyzerCommits, s.ContextCommits)
	if len(s.Context.ByKind) > 0 {
		var parts []string
		for _, k := range []string{"func", "method", "type", "const", "var"} {
			if n, ok := s.Context.ByKind[k]; ok {
				parts = append(parts, fmt.Sprintf("%s %s", k, frac(n.Found, n.Truth)))
			}
		}
		fmt.Fprintf(&b, "Definitions found by kind: %s.\n\n", strings.Join(parts, ", "))
	}
	tools := []string{"shellcheck", "actionlint", "govet"}
	for t := range s.ByTool {
		if !slices.Contains(tools, t) {
			tools = append(tools, t)
		}
	}
	if s.AnalyzerCommits > 0 {
		fmt.Fprintf(&b, "Analyzers on %d commits, against the tools' own CLIs (same tool, rule, path and line):\n\n", s.AnalyzerCommits)
		b.WriteString("| tool | tool's findings | MergeGuard's | matched | precision | recall |\n|---|---|---|---|---|---|\n")
		for _, t := range tools {
			n := s.ByTool[t]
			fmt.Fprintf(&b, "| %s | %d | %d | %d | %s | %s |\n", t, n.Truth, n.Found, n.Matched, pct(n.Precision()), pct(n.Recall()))
		}
		b.WriteString("\n")
	}
	b.WriteString("| commit | analyzers: tool / MergeGuard / matched | callers | definitions | snippets useful | review s | context s |\n")
	b.WriteString("|---|---|---|---|---|---|---|\n")
	for _, x := range r.Results {
		writeRealRow(&b, x)
	}
	writeMissed(&b, r.Results)
	_, err := io.WriteString(w, b.String())
	return err
}

// writeRealRow writes one commit's row.
func writeRealRow(b *strings.Builder, x RealResult) {
	if x.Error != "" {
		fmt.Fprintf(b, "| %s | error: %s | | | | | |\n", x.ID(), cell(x.Error))
		return
	}
	an, callers, defs, snips := "", "", "", ""
	if a := x.Analyzers; a != nil {
		an = fmt.Sprintf("%d / %d / %d", a.Truth, a.Found, a.Matched)
	}
	if c := x.Context; c != nil {
		callers = fmt.Sprintf("%d/%d", c.CallersFound, c.Callers)
		defs = fmt.Sprintf("%d/%d", c.DefinitionsFound, c.Definitions)
		snips = fmt.Sprintf("%d/%d", c.Useful, c.Snippets)
	}
	ctx := ""
	if x.Context != nil {
		ctx = seconds(x.ContextMS)
	}
	fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s |\n", x.ID(), an, callers, defs, snips, seconds(x.WallMS), ctx)
}

// maxMissedShown bounds the missed items listed per commit and list.
const maxMissedShown = 5

// writeMissed lists, per commit, the first missed and extra items.
func writeMissed(b *strings.Builder, results []RealResult) {
	var lines []string
	for _, x := range results {
		var parts []string
		if a := x.Analyzers; a != nil {
			parts = appendShown(parts, "analyzer findings missed", a.Missed, ToolFinding.String)
			parts = appendShown(parts, "analyzer findings the tools do not report", a.Extra, ToolFinding.String)
		}
		if c := x.Context; c != nil {
			parts = appendShown(parts, "callers missed", c.MissedCallers, func(t TruthCaller) string {
				return fmt.Sprintf("%s at %s:%d", t.Of, t.Path, t.Line)
			})
			parts = appendShown(parts, "definitions missed", c.MissedDefinitions, func(t TruthDefinition) string {
				return fmt.Sprintf("%s %s %s:%d", t.Kind, t.Name, t.Path, t.Line)
			})
		}
		if len(parts) > 0 {
			lines = append(lines, fmt.Sprintf("- %s: %s", x.ID(), strings.Join(parts, "; ")))
		}
	}
	if len(lines) > 0 {
		b.WriteString("\nMissed and extra, per commit (at most 5 of each):\n\n")
		b.WriteString(strings.Join(lines, "\n"))
		b.WriteString("\n")
	}
}

// appendShown appends "what: a, b, c (and N more)" when items is not
// empty.
func appendShown[T any](parts []string, what string, items []T, str func(T) string) []string {
	if len(items) == 0 {
		return parts
	}
	var shown []string
	for _, it := range items[:min(len(items), maxMissedShown)] {
		shown = append(shown, str(it))
	}
	s := what + ": " + strings.Join(shown, ", ")
	if n := len(items) - maxMissedShown; n > 0 {
		s += fmt.Sprintf(" (and %d more)", n)
	}
	return append(parts, s)
}

// frac is "n/d (p%)", "n/d" alone when d is 0.
func frac(n, d int) string {
	if d == 0 {
		return fmt.Sprintf("%d/%d", n, d)
	}
	return fmt.Sprintf("%d/%d (%s)", n, d, pct(float64(n)/float64(d)))
}

func seconds(ms int64) string { return fmt.Sprintf("%.2f", float64(ms)/1000) }

// cell makes s a table cell: one line, at most 200 bytes, no pipe.
func cell(s string) string {
	s = text.OneLine(s)
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return strings.ReplaceAll(s, "|", "/")
}
