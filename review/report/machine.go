package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/mergeguard/mergeguard/review"
)

// Line writes one line per reported finding, `file:line:col: severity:
// title`, the form editors, compilers and errorformat read. The column is
// the finding's when its tool gave one, else 1. A finding on removed lines
// (side LEFT) or on a whole file is placed on line 1 of the file, and its
// title says which removed lines it cites. Newlines and other control
// characters in the path or title are written as spaces, so one finding is
// always one line, and a line is written once: two findings that would
// read the same are one to an editor.
func Line(w io.Writer, v review.Verdict) error {
	var b strings.Builder
	seen := map[string]bool{}
	for _, f := range v.Findings() {
		line, col := 1, 1
		title := f.Title
		if start, _, ok := headLines(f); ok {
			line, col = start, max(f.Column, 1)
		} else if f.Side == review.SideLeft && f.LineStart > 0 {
			title += fmt.Sprintf(" (on removed lines %s)", lines(f))
		}
		l := fmt.Sprintf("%s:%d:%d: %s: %s\n", oneLine(f.FilePath), line, col, severityName(f.Severity), oneLine(title))
		if !seen[l] {
			seen[l] = true
			b.WriteString(l)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// headLines returns the lines a finding cites in the head version of its
// file; ok is false for a finding on removed lines (side LEFT) or on a
// whole file (no line).
func headLines(f review.Finding) (start, end int, ok bool) {
	if f.Side == review.SideLeft || f.LineStart <= 0 {
		return 0, 0, false
	}
	return f.LineStart, max(f.LineEnd, f.LineStart), true
}

// severityName names a severity; an empty one reads "info".
func severityName(s review.Severity) review.Severity {
	if s.Rank() == 0 {
		return review.SeverityInfo
	}
	return s
}

// oneLine replaces control characters (newlines, tabs, escapes) with
// spaces.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
}

// message is a finding's text for a machine format: the title, then the
// description and the suggestion as paragraphs; without the suggestion when
// noSuggestion is set (the format carries it apart).
func message(f review.Finding, noSuggestion bool) string {
	parts := []string{strings.TrimSpace(f.Title)}
	if d := strings.TrimSpace(f.Description); d != "" {
		parts = append(parts, d)
	}
	if s := strings.TrimSpace(f.Suggestion); s != "" && !noSuggestion {
		parts = append(parts, "Suggestion: "+s)
	}
	return strings.Join(parts, "\n\n")
}

// replacement returns the code of a suggestion that replaces exactly the
// finding's cited lines in the head version: a suggestion that is one
// fenced code block, on a finding with head lines. Prose suggestions
// ("Remove the value and rotate the credential") are not replacements.
func replacement(f review.Finding) (string, bool) {
	if _, _, ok := headLines(f); !ok || f.SuggestionNote != "" {
		return "", false // no lines to replace, or the verifier found it does not apply
	}
	s := strings.TrimSpace(strings.ReplaceAll(strings.ReplaceAll(f.Suggestion, "\r\n", "\n"), "\r", "\n"))
	ls := strings.Split(s, "\n")
	if len(ls) < 2 {
		return "", false
	}
	open, last := strings.TrimSpace(ls[0]), strings.TrimSpace(ls[len(ls)-1])
	fence := fenceRun(open)
	if fence == "" || last != fence {
		return "", false
	}
	body := ls[1 : len(ls)-1]
	for _, l := range body {
		if strings.HasPrefix(strings.TrimSpace(l), fence) {
			return "", false // a second block inside: not one replacement
		}
	}
	return strings.Join(body, "\n"), true
}

// fenceRun returns the run of three or more backticks that opens line, or
// "".
func fenceRun(line string) string {
	n := 0
	for n < len(line) && line[n] == '`' {
		n++
	}
	if n < 3 {
		return ""
	}
	return line[:n]
}
