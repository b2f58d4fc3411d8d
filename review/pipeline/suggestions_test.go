package pipeline

import (
	"strings"
	"testing"

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/analyzer"
)

// TestCheckSuggestion: the verifier applies a finding's suggestion to the
// lines it ends up on only when they are the lines the suggestion was
// written for, and notes why a suggestion is not posted to apply.
func TestCheckSuggestion(t *testing.T) {
	const fixed = "\tcmd := exec.Command(\"sh\", \"-c\", \"--\", name)"
	tests := map[string]struct {
		f    review.Finding
		want string // a part of the note; "" for none
	}{
		"applies":                 {f: review.Finding{LineStart: 6, LineEnd: 6, Suggestion: fixed}},
		"fenced, applies":         {f: review.Finding{LineStart: 6, LineEnd: 6, Suggestion: "```go\n" + fixed + "\n```\n"}},
		"re-anchored by its code": {f: review.Finding{LineStart: 5, LineEnd: 5, CodeSnippet: `cmd := exec.Command("sh", "-c", name)`, Suggestion: fixed}},
		"no suggestion":           {f: review.Finding{LineStart: 6, LineEnd: 6, Suggestion: "\n"}},
		"removed lines":           {f: review.Finding{LineStart: 6, LineEnd: 6, Side: review.SideLeft, Suggestion: "\tcmd := exec.Command(name"}},
		"broken":                  {f: review.Finding{LineStart: 6, LineEnd: 6, Suggestion: "\tcmd := exec.Command(\"sh\", \"-c\", name"}, want: "syntax error"},
		"snapped onto the diff":   {f: review.Finding{LineStart: 10, LineEnd: 11, Suggestion: "func helper() {}\n"}, want: "written for lines 10-11, and the finding is at lines 9-9"},
		"re-anchored, another span": {f: review.Finding{LineStart: 4, LineEnd: 4, CodeSnippet: "cmd := exec.Command(\"sh\", \"-c\", name)\nreturn cmd.Run()", Suggestion: fixed},
			want: "written for lines 4-4, and the finding is at lines 6-7"},
		"an analyzer's advice": {f: review.Finding{LineStart: 6, LineEnd: 6, Agent: "analyzer:debug-statements", Confidence: 0.9, Suggestion: "Remove it."}, want: "advice in words"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			head := map[string]string{"store/run.go": strings.Join(modifiedHead, "\n") + "\n"}
			v, _ := newTestVerifier(t, head, modifiedFile())
			r := &run{p: newTest(Deps{Config: testLLM(), Analyzers: []analyzer.Analyzer{analyzer.DebugStatements{}}}), req: Request{Repo: config.DefaultRepo()}}
			claimed := tc.f
			claimed.FilePath, claimed.Severity, claimed.Category = "store/run.go", review.SeverityWarning, review.CategoryBug
			got := r.checkSuggestion(t.Context(), v, claimed, v.verify(t.Context(), claimed))
			switch {
			case tc.want == "" && got.SuggestionNote != "":
				t.Errorf("note %q, want none (lines %d-%d)", got.SuggestionNote, got.LineStart, got.LineEnd)
			case tc.want != "" && !strings.Contains(got.SuggestionNote, tc.want):
				t.Errorf("note %q, want one containing %q", got.SuggestionNote, tc.want)
			}
		})
	}
}
