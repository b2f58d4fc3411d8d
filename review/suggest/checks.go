package suggest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"go/format"
	"go/parser"
	"go/scanner"
	"go/token"
	"strings"

	"github.com/mergeguard/mergeguard/review/analyzer"
	"github.com/mergeguard/mergeguard/review/codectx"
	"github.com/mergeguard/mergeguard/review/diff"
)

// indentation checks that the suggestion keeps the file's indentation: no
// line of it is indented with spaces in a file indented with tabs (or with
// tabs in one indented with spaces) unless a line it replaces is too (text
// in a multi-line string), and its first line is indented as the first
// line it replaces.
func indentation(lines []string, start, end int, code []string) string {
	style := indentStyle(lines)
	if style != 0 && indentStyle(lines[start-1:end]) != style {
		style = 0
	}
	for i, l := range code {
		lead := leading(l)
		switch {
		case strings.TrimSpace(l) == "":
		case style == '\t' && strings.HasPrefix(lead, " "):
			return fmt.Sprintf("line %d of the suggestion is indented with spaces; the file is indented with tabs", i+1)
		case style == ' ' && strings.Contains(lead, "\t"):
			return fmt.Sprintf("line %d of the suggestion is indented with tabs; the file is indented with spaces", i+1)
		}
	}
	want, ok := firstIndent(lines[start-1 : end])
	got, ok2 := firstIndent(code)
	if ok && ok2 && want != got {
		return fmt.Sprintf("the suggestion is indented %s; the line it replaces %s", describe(got), describe(want))
	}
	return ""
}

// indentStyle is '\t' when most of the file's indented lines start with a
// tab, ' ' when most start with a space, 0 when neither clearly wins.
func indentStyle(lines []string) byte {
	tabs, spaces := 0, 0
	for _, l := range lines {
		switch {
		case strings.TrimSpace(l) == "":
		case l[0] == '\t':
			tabs++
		case l[0] == ' ':
			spaces++
		}
	}
	switch {
	case tabs > 2*spaces:
		return '\t'
	case spaces > 2*tabs:
		return ' '
	}
	return 0
}

func leading(l string) string { return l[:len(l)-len(strings.TrimLeft(l, " \t"))] }

// firstIndent is the indentation of the first non-blank line.
func firstIndent(lines []string) (string, bool) {
	for _, l := range lines {
		if strings.TrimSpace(l) != "" {
			return leading(l), true
		}
	}
	return "", false
}

// describe names an indentation: "by 2 tabs", "by 4 spaces", "not at all".
func describe(lead string) string {
	if lead == "" {
		return "not at all"
	}
	tabs := strings.Count(lead, "\t")
	spaces := len(lead) - tabs
	switch {
	case spaces == 0:
		return fmt.Sprintf("by %d tab(s)", tabs)
	case tabs == 0:
		return fmt.Sprintf("by %d space(s)", spaces)
	}
	return fmt.Sprintf("by %d tab(s) and %d space(s)", tabs, spaces)
}

// syntax checks that the result has no more syntax errors than the file
// had: go/parser for Go, tree-sitter (codectx.SyntaxErrors) where this
// build has it for the language, else the balance of brackets for
// languages that use them.
func syntax(ctx context.Context, language string, before, after []string, start, end int, code []string) string {
	count := codectx.SyntaxErrors
	if language == "go" {
		count = goErrors
	}
	b, okB := count(ctx, language, join(before))
	a, okA := count(ctx, language, join(after))
	switch {
	case okB && okA && a > b:
		return fmt.Sprintf("the result has %d syntax error(s) the file did not have", a-b)
	case okB && okA:
		return ""
	case !bracketLanguages[language]:
		return ""
	}
	if was, is := brackets(before[start-1:end]), brackets(code); was != is {
		return "a syntax error: the suggestion opens and closes (), [] and {} differently from the lines it replaces"
	}
	return ""
}

func join(lines []string) []byte { return []byte(strings.Join(lines, "\n") + "\n") }

// goErrors counts go/parser's syntax errors in src.
func goErrors(_ context.Context, _ string, src []byte) (int, bool) {
	_, err := parser.ParseFile(token.NewFileSet(), "", src, parser.AllErrors|parser.SkipObjectResolution)
	if list, ok := errors.AsType[scanner.ErrorList](err); ok {
		return len(list), true
	}
	if err != nil {
		return 1, true
	}
	return 0, true
}

// bracketLanguages are the languages (lang.Detect) whose brackets pair.
var bracketLanguages = map[string]bool{
	"go": true, "python": true, "javascript": true, "jsx": true, "typescript": true, "tsx": true,
	"java": true, "kotlin": true, "scala": true, "groovy": true, "rust": true, "c": true, "cpp": true,
	"csharp": true, "swift": true, "php": true, "dart": true, "objective-c": true, "json": true,
	"css": true, "scss": true, "less": true, "protobuf": true, "graphql": true, "hcl": true, "zig": true,
}

// brackets counts, for (), [] and {}, the openings less the closings.
func brackets(lines []string) [3]int {
	var n [3]int
	for _, l := range lines {
		for _, r := range l {
			switch r {
			case '(':
				n[0]++
			case ')':
				n[0]--
			case '[':
				n[1]++
			case ']':
				n[1]--
			case '{':
				n[2]++
			case '}':
				n[2]--
			}
		}
	}
	return n
}

// gofmt checks that a Go result is gofmt-clean where the file was: the
// whole result when the file was gofmt-clean, else the suggestion alone
// when go/format reads it as a partial source file (statements or
// declarations), its alignment aside.
func gofmt(language string, before []byte, after []string, code string) string {
	if language != "go" {
		return ""
	}
	if clean, err := format.Source(before); err == nil && bytes.Equal(clean, before) {
		src := join(after)
		if out, err := format.Source(src); err == nil && !bytes.Equal(out, src) {
			return "the result is not gofmt-clean"
		}
		return ""
	}
	if out, err := format.Source([]byte(code)); err == nil && unaligned(string(out)) != unaligned(code) {
		return "the suggestion is not gofmt-clean"
	}
	return ""
}

// unaligned is Go code with the spaces inside each line collapsed: gofmt
// aligns columns (of fields, comments, values) by the lines around them,
// which a suggestion formatted alone does not have.
func unaligned(code string) string {
	var b strings.Builder
	for l := range strings.Lines(strings.TrimRight(code, "\n")) {
		b.WriteString(leading(l) + strings.Join(strings.Fields(l), " ") + "\n")
	}
	return b.String()
}

// analyzers checks that no analyzer finds more on the replacement than on
// the lines it replaces, each given as the added lines of a diff.
func analyzers(ctx context.Context, as []analyzer.Analyzer, path string, start int, was, is []string) string {
	if len(as) == 0 {
		return ""
	}
	before, after := added(path, start, was), added(path, start, is)
	for _, a := range as {
		b, errB := a.Analyze(ctx, []*diff.File{before})
		f, errA := a.Analyze(ctx, []*diff.File{after})
		if errB == nil && errA == nil && len(f) > len(b) {
			return fmt.Sprintf("%s finds %d more problem(s) in the result", a.Name(), len(f)-len(b))
		}
	}
	return ""
}

// added is a one-hunk diff of path that adds lines at start.
func added(path string, start int, lines []string) *diff.File {
	h := diff.Hunk{NewStart: start, NewLines: len(lines)}
	for i, l := range lines {
		h.Lines = append(h.Lines, diff.Line{NewLine: int32(start + i), Text: l, Kind: diff.Add}) //nolint:gosec // a line of a file of at most maxFileBytes
	}
	return &diff.File{NewPath: path, Status: diff.Modified, Hunks: []diff.Hunk{h}, Additions: len(lines)}
}
