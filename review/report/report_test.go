package report

import (
	"strings"
	"testing"

	"github.com/mergeguard/mergeguard/review"
)

func TestRender(t *testing.T) {
	v := review.Verdict{
		Verdict: review.DecisionRequestChanges,
		Summary: "Reviewed 1 of 1 changed files: 1 finding(s).",
		Files: []review.FileReview{{FilePath: "a.go", Findings: []review.Finding{{
			FilePath: "a.go", LineStart: 3, LineEnd: 5, Severity: review.SeverityCritical, Category: review.CategorySecurity,
			Title: "SQL | injection", Description: "bad", Suggestion: "use ?", VerificationStatus: review.Verified,
		}}}},
		Recommendations: []string{"Fix it."},
		Notes:           []string{"No LLM configured: built-in analyzers only."},
	}
	tests := map[string]struct {
		render func(*strings.Builder) error
		want   []string
	}{
		"text": {func(b *strings.Builder) error { return Text(b, v) }, []string{
			"Verdict: REQUEST_CHANGES", "a.go:3-5 [critical/security, verified] SQL | injection", "Suggestion: use ?",
			"Note: No LLM configured", "  - Fix it."}},
		"markdown": {func(b *strings.Builder) error { return Markdown(b, v) }, []string{
			"## MergeGuard: changes requested", "| critical | `a.go:3-5` | SQL \\| injection | verified |",
			"**Suggestion:** use ?", "- Fix it.", "> No LLM configured"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var b strings.Builder
			if err := tc.render(&b); err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, b.String())
				}
			}
		})
	}
}
