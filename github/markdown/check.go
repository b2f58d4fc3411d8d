package markdown

import (
	"fmt"
	"strings"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/text"
)

// This file is the pure half of check runs: annotations and the output's
// title and summary, rendered from findings and the ledger without any
// call to GitHub (golden-tested like plan.go). checks.go does the calls.

// Annotation levels.
const (
	AnnotationFailure = "failure"
	AnnotationWarning = "warning"
	AnnotationNotice  = "notice"
)

// Annotation marks lines of a file at the check's head.
type Annotation struct {
	Path      string `json:"path"`
	StartLine int    `json:"start_line"`
	EndLine   int    `json:"end_line"`
	// StartColumn and EndColumn only on a single line; 0 leaves them out.
	StartColumn int    `json:"start_column,omitempty"`
	EndColumn   int    `json:"end_column,omitempty"`
	Level       string `json:"annotation_level"`
	Title       string `json:"title,omitempty"`
	Message     string `json:"message"`
}

// maxAnnotationTitle is the longest annotation title GitHub accepts.
const maxAnnotationTitle = 255

// Annotations turns findings into check run annotations, most severe
// first, one per fingerprint: failure for a finding at or above blocking,
// warning for a warning, notice otherwise. Findings without a line at the
// head (no path, no line, or on the left side of the diff) have none.
// What the model wrote is rendered as untrusted text (Policy) for the
// pull request at pullURL.
func Annotations(findings []review.Finding, blocking review.Severity, pullURL string) []Annotation {
	tp := NewPolicy(pullURL)
	seen := map[string]bool{}
	var out []Annotation
	for _, f := range sortedFindings(findings) {
		if f.FilePath == "" || f.LineStart <= 0 || f.Side == review.SideLeft || (f.Fingerprint != "" && seen[f.Fingerprint]) {
			continue
		}
		seen[f.Fingerprint] = true
		a := Annotation{
			Path: f.FilePath, StartLine: f.LineStart, EndLine: max(f.LineEnd, f.LineStart),
			Level: annotationLevel(f.Severity, blocking),
			Title: text.Clip(title(tp, f), maxAnnotationTitle-2),
		}
		a.Message = fmt.Sprintf("%s · %s", strings.ToUpper(string(f.Severity)), tp.Inline(string(f.Category), 40))
		if d := tp.Block(f.Description, maxDescription); d != "" {
			a.Message += "\n\n" + d
		}
		out = append(out, a)
	}
	return out
}

// LedgerAnnotations are the annotations of a ledger's open entries.
func LedgerAnnotations(entries []review.LedgerEntry, blocking review.Severity, pullURL string) []Annotation {
	var open []review.Finding
	for _, e := range entries {
		if e.State == review.FindingOpen {
			open = append(open, e.Finding)
		}
	}
	return Annotations(open, blocking, pullURL)
}

func annotationLevel(s, blocking review.Severity) string {
	switch {
	case s.Rank() > 0 && s.AtLeast(blocking):
		return AnnotationFailure
	case s == review.SeverityWarning:
		return AnnotationWarning
	}
	return AnnotationNotice
}

// CheckSummary renders the title and summary of a check run from the
// pull request's ledger at the checked head: how many findings are open
// (blocking at or above blocking), fixed, dismissed and exposed, and the
// open and exposed ones, linked to their review comments on the pull
// request at pullURL.
func CheckSummary(entries []review.LedgerEntry, blocking review.Severity, pullURL string) (title, summary string) {
	tp := NewPolicy(pullURL)
	counts := map[review.FindingState]int{}
	openBy := map[review.Severity]int{}
	blockers := 0
	var open, exposed []review.LedgerEntry
	for _, e := range entries {
		counts[e.State]++
		switch e.State {
		case review.FindingOpen:
			openBy[e.Finding.Severity]++
			open = append(open, e)
		case review.FindingExposed:
			exposed = append(exposed, e)
		}
		if e.Blocking(blocking) {
			blockers++
		}
	}
	switch {
	case blockers > 0:
		title = plural(blockers, "blocking finding") + " open"
	case len(open) > 0:
		title = "No blocking findings; " + plural(len(open), "finding") + " open"
	default:
		title = "No open findings"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Findings block this pull request from %s up.\n\n", badge(blocking))
	b.WriteString("| Severity | Open |\n|---|---:|\n")
	for _, s := range review.Severities {
		fmt.Fprintf(&b, "| %s | %d |\n", badge(s), openBy[s])
	}
	fmt.Fprintf(&b, "\nFixed: %d · dismissed: %d · outdated: %d", counts[review.FindingFixed], counts[review.FindingDismissed], counts[review.FindingOutdated])
	if n := counts[review.FindingExposed]; n > 0 {
		fmt.Fprintf(&b, " · exposed secrets: %d", n)
	}
	b.WriteString("\n")
	writeEntryList(&b, tp, "Open findings", open, pullURL, entryOpenLine)
	writeEntryList(&b, tp, "Exposed secrets: pushed, so rotate them", exposed, pullURL, entryExposedLine)
	return title, b.String()
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
