package pipeline

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/analyzer"
	"github.com/mergeguard/mergeguard/review/diff"
	"github.com/mergeguard/mergeguard/review/llm"
	"github.com/mergeguard/mergeguard/review/llm/llmtest"
	"github.com/mergeguard/mergeguard/review/task"
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
			r := &run{p: newTest(Deps{Config: testLLM(), Analyzers: []analyzer.Analyzer{analyzer.DebugStatements{}}}), req: task.Request{Repo: config.DefaultRepo()}}
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

// diffReads counts the reads of its Source's diff.
type diffReads struct {
	review.Source
	n atomic.Int32
}

func (s *diffReads) Diff(ctx context.Context) (string, error) {
	s.n.Add(1)
	return s.Source.Diff(ctx)
}

// TestAnswerSuggestion: an answer's suggestion block that does not apply
// to the thread's lines becomes a plain code block after a note; one that
// applies stays a suggestion block. The diff is read once, for the tools
// and the check both.
func TestAnswerSuggestion(t *testing.T) {
	src := &memSource{change: review.Change{Repository: "o/r", Number: 1, HeadSHA: "h", BaseSHA: "b"},
		head: map[string]string{"store/run.go": strings.Join(modifiedHead, "\n") + "\n"},
		base: map[string]string{}, diff: diff.Format(&diff.Diff{Files: []*diff.File{modifiedFile()}})}
	finding := &review.LedgerEntry{State: review.FindingOpen, Finding: review.Finding{FilePath: "store/run.go", LineStart: 6, LineEnd: 6,
		Severity: review.SeverityWarning, Category: review.CategorySecurity, Title: "The name reaches a shell"}}
	tests := map[string]struct {
		answer string
		want   string // a part of the text
	}{
		"applies": {answer: "Pass it as an argument:\n\n```suggestion\n\tcmd := exec.Command(\"sh\", \"-c\", \"--\", name)\n```",
			want: "```suggestion\n\tcmd :="},
		"unbalanced": {answer: "Pass it as an argument:\n\n```suggestion\n\tcmd := exec.Command(\"sh\", \"-c\", \"--\", name\n```",
			want: "syntax error(s) the file did not have):\n\n```\n\tcmd :="},
		"not indented": {answer: "```suggestion\ncmd := exec.Command(name)\n```",
			want: "not applied automatically: the suggestion is indented not at all; the line it replaces by 1 tab(s)"},
		"no block": {answer: "It is fine as it is.", want: "It is fine as it is."},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			srv := llmtest.NewQueue(t, llmtest.JSON(map[string]any{"answer": tc.answer, "classification": "question", "learning": nil}))
			p := newTest(Deps{Config: testLLM(func(c *config.LLM) { c.Model = "gpt-4o" }),
				LLM: llm.New(llm.Config{BaseURL: srv.URL(), Model: "gpt-4o"}, nil), Analyzers: []analyzer.Analyzer{analyzer.DebugStatements{}},
				Tools: func(review.Source, *diff.Diff) Toolbox { return nil }})
			reads := &diffReads{Source: src}
			res, err := p.Answer(t.Context(), task.AnswerRequest{Source: reads, Finding: finding, Repo: config.DefaultRepo(),
				Question: review.Question{Kind: review.QuestionReply, CommentID: 2, ThreadCommentID: 1, Path: "store/run.go", Line: 6,
					Author: "alice", Writer: true, Body: "How would you fix it?"}})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(res.Text, tc.want) {
				t.Errorf("answer:\n%s\nwant it to hold:\n%s", res.Text, tc.want)
			}
			if tc.want != tc.answer && strings.Contains(tc.want, "not applied") && strings.Contains(res.Text, "```suggestion") {
				t.Errorf("a suggestion block that does not apply is left:\n%s", res.Text)
			}
			if n := reads.n.Load(); n != 1 {
				t.Errorf("the diff was read %d times, want once", n)
			}
		})
	}
}
