// Package suggest decides whether a finding's suggestion may be posted as
// a GitHub suggestion block, which a person applies with one click: it
// applies the suggestion to the file at the head — the suggestion replaces
// exactly the lines the finding claims — and checks the result. The result
// must parse with no new syntax errors (go/parser for Go, tree-sitter for
// the languages review/codectx parses, bracket balance for other code),
// keep the file's indentation, be gofmt-clean for Go, and not give the
// built-in analyzers more findings on the changed lines
// (docs/quality.md, Suggestions that apply).
//
// The package is pure: it reads nothing but what it is handed.
package suggest

import (
	"context"
	"fmt"
	"strings"

	"github.com/mergeguard/mergeguard/review/analyzer"
	"github.com/mergeguard/mergeguard/review/lang"
)

// Limits of what is checked: a bigger file or suggestion is not posted as
// a suggestion block (parsing it twice would cost more than it is worth).
const (
	maxFileBytes       = 1 << 20
	maxSuggestionLines = 200
)

// Input is one suggestion to check.
type Input struct {
	// Path is the file's path (its language is told by it).
	Path string
	// Content is the file at the head.
	Content []byte
	// Start and End are the lines the suggestion replaces, 1-based and
	// inclusive.
	Start, End int
	// Code is the replacement (review.SuggestionCode of the finding's
	// suggestion).
	Code string
	// InDiff reports whether lines start..end lie in one hunk of the
	// file's diff on the head side; nil skips the check.
	InDiff func(start, end int) bool
	// Analyzers are run on the replaced lines and on the replacement; nil
	// runs none.
	Analyzers []analyzer.Analyzer
}

// Check applies the suggestion and checks the result. It returns "" when
// the suggestion may be posted as a suggestion block, else why not, in
// words that complete "not applied automatically: ".
func Check(ctx context.Context, in Input) string {
	if len(in.Content) > maxFileBytes {
		return "the file is too large to check the change"
	}
	lines := splitLines(string(in.Content))
	code := strings.Split(in.Code, "\n")
	switch {
	case in.Start < 1 || in.End < in.Start || in.End > len(lines):
		return fmt.Sprintf("lines %d-%d are not in the file (%d lines)", in.Start, in.End, len(lines))
	case in.InDiff != nil && !in.InDiff(in.Start, in.End):
		return fmt.Sprintf("lines %d-%d are not all in one hunk of the diff", in.Start, in.End)
	case len(code) > maxSuggestionLines:
		return "the suggestion is too long to check"
	}
	after := make([]string, 0, len(lines)-(in.End-in.Start+1)+len(code))
	after = append(append(append(after, lines[:in.Start-1]...), code...), lines[in.End:]...)
	for _, check := range []func() string{
		func() string { return overlap(lines, in.Start, in.End, code) },
		func() string { return indentation(lines, in.Start, in.End, code) },
		func() string { return syntax(ctx, lang.Detect(in.Path), lines, after, in.Start, in.End, code) },
		func() string { return gofmt(lang.Detect(in.Path), in.Content, after, in.Code) },
		func() string { return analyzers(ctx, in.Analyzers, in.Path, in.Start, lines[in.Start-1:in.End], code) },
	} {
		if reason := check(); reason != "" {
			return reason
		}
	}
	return ""
}

// splitLines splits a file into lines, without carriage returns and the
// final newline.
func splitLines(s string) []string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// overlap catches a suggestion that covers more lines than it claims: its
// last lines repeat the lines after the claimed range, or its first lines
// the lines before it, so applying it would duplicate them. Only lines
// with a letter or digit count (a lone "}" may well be repeated).
func overlap(lines []string, start, end int, code []string) string {
	extra := len(code) - (end - start + 1)
	for k := extra; k >= 1; k-- {
		if end+k <= len(lines) && sameRun(code[len(code)-k:], lines[end:end+k]) {
			return fmt.Sprintf("the suggestion repeats line(s) %d-%d after the lines it replaces (%d-%d)", end+1, end+k, start, end)
		}
		if start-1-k >= 0 && sameRun(code[:k], lines[start-1-k:start-1]) {
			return fmt.Sprintf("the suggestion repeats line(s) %d-%d before the lines it replaces (%d-%d)", start-k, start-1, start, end)
		}
	}
	return ""
}

// sameRun reports whether a and b hold the same lines (their whitespace
// trimmed), at least one of them with a letter or digit.
func sameRun(a, b []string) bool {
	word := false
	for i := range a {
		if strings.TrimSpace(a[i]) != strings.TrimSpace(b[i]) {
			return false
		}
		word = word || strings.IndexFunc(a[i], isWordRune) >= 0
	}
	return word
}

func isWordRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
}
