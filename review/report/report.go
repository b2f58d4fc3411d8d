// Package report renders a review verdict: plain text for a terminal and
// Markdown for a pull-request comment or a file, for people; SARIF 2.1.0
// (GitHub code scanning), reviewdog's rdjson and one line per finding
// (editors, errorformat), for tools. The JSON form is the review.Verdict
// itself. The renderers are pure: they only write to the writer.
package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/mergeguard/mergeguard/review"
)

// Text writes v for a terminal: the verdict and summary, then each reported
// finding with its anchor, then notes and recommendations.
func Text(w io.Writer, v review.Verdict) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Verdict: %s (confidence %.2f)\n%s\n", strings.ToUpper(string(v.Verdict)), v.Confidence, v.Summary)
	for _, f := range v.Findings() {
		fmt.Fprintf(&b, "\n%s:%s [%s/%s, %s] %s\n", f.FilePath, lines(f), f.Severity, f.Category, f.VerificationStatus, f.Title)
		if f.Description != "" {
			fmt.Fprintf(&b, "  %s\n", indent(f.Description, "  "))
		}
		if f.Suggestion != "" {
			fmt.Fprintf(&b, "  Suggestion: %s\n", indent(f.Suggestion, "  "))
		}
	}
	if len(v.FalsePositives) > 0 {
		fmt.Fprintf(&b, "\n%d finding(s) discarded as false positives.\n", len(v.FalsePositives))
	}
	for _, n := range v.Notes {
		fmt.Fprintf(&b, "\nNote: %s", n)
	}
	if len(v.Notes) > 0 {
		b.WriteString("\n")
	}
	if len(v.Recommendations) > 0 {
		b.WriteString("\nRecommendations:\n")
		for _, r := range v.Recommendations {
			fmt.Fprintf(&b, "  - %s\n", r)
		}
	}
	s := v.Stats
	fmt.Fprintf(&b, "\n%d files changed, %d reviewed, %d skipped; %d LLM calls, %d tool calls, %d+%d tokens, $%.4f.\n",
		s.FilesChanged, s.FilesReviewed, s.FilesSkipped, s.LLMCalls, s.ToolCalls, s.InputTokens, s.OutputTokens, s.TotalCost)
	_, err := io.WriteString(w, b.String())
	return err
}

// Markdown writes v as Markdown: a heading with the verdict, the summary, a
// table of findings by severity, details of each finding, and the
// recommendations and notes.
func Markdown(w io.Writer, v review.Verdict) error {
	var b strings.Builder
	fmt.Fprintf(&b, "## MergeGuard: %s\n\n%s\n", title(v.Verdict), v.Summary)
	findings := v.Findings()
	if len(findings) > 0 {
		b.WriteString("\n| Severity | Location | Finding | Status |\n|---|---|---|---|\n")
		for _, f := range findings {
			fmt.Fprintf(&b, "| %s | `%s:%s` | %s | %s |\n", f.Severity, f.FilePath, lines(f), cell(f.Title), f.VerificationStatus)
		}
		for _, f := range findings {
			fmt.Fprintf(&b, "\n### %s\n\n`%s:%s` · %s · %s\n", f.Title, f.FilePath, lines(f), f.Severity, f.Category)
			if f.Description != "" {
				fmt.Fprintf(&b, "\n%s\n", f.Description)
			}
			if f.Suggestion != "" {
				fmt.Fprintf(&b, "\n**Suggestion:** %s\n", f.Suggestion)
			}
		}
	}
	if len(v.Recommendations) > 0 {
		b.WriteString("\n### Recommendations\n\n")
		for _, r := range v.Recommendations {
			fmt.Fprintf(&b, "- %s\n", r)
		}
	}
	if len(v.Notes) > 0 {
		b.WriteString("\n")
		for _, n := range v.Notes {
			fmt.Fprintf(&b, "> %s\n", n)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// title names a decision for a heading.
func title(d review.Decision) string {
	switch d {
	case review.DecisionApprove:
		return "approved"
	case review.DecisionRequestChanges:
		return "changes requested"
	}
	return "comments"
}

// lines formats a finding's line range.
func lines(f review.Finding) string {
	if f.LineEnd > f.LineStart {
		return fmt.Sprintf("%d-%d", f.LineStart, f.LineEnd)
	}
	return fmt.Sprint(f.LineStart)
}

// cell escapes text for a Markdown table cell.
func cell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}

// indent indents the continuation lines of s.
func indent(s, pad string) string {
	return strings.ReplaceAll(strings.TrimSpace(s), "\n", "\n"+pad)
}
