package pipeline

import (
	"errors"
	"strings"
	"testing"

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/diff"
	"github.com/mergeguard/mergeguard/review/llm"
	"github.com/mergeguard/mergeguard/review/llm/llmtest"
	"github.com/mergeguard/mergeguard/review/task"
	"github.com/mergeguard/mergeguard/review/tools"
)

func TestAnswer(t *testing.T) {
	src := &memSource{change: review.Change{Repository: "o/r", Number: 1, HeadSHA: "h"}, diff: readTestdata(t, "sqli.diff"),
		head: map[string]string{"store/users.go": strings.Repeat("// line\n", 9) + sqliLine + "\n"}, base: map[string]string{}}
	finding := &review.LedgerEntry{State: review.FindingOpen, Finding: review.Finding{FilePath: "store/users.go", LineStart: 10,
		LineEnd: 10, Severity: review.SeverityCritical, Category: review.CategorySecurity, Title: "SQL injection", CodeSnippet: sqliLine}}
	reply := review.Question{Kind: review.QuestionReply, CommentID: 2, ThreadCommentID: 1, Author: "alice", Writer: true,
		Body: "This is intended: names are checked by the caller. We always validate names in handlers/."}
	tests := map[string]struct {
		q         review.Question
		finding   *review.LedgerEntry
		answered  int
		model     llmtest.Response
		want      *task.AnswerResult // Text, Classification, Learning, Skipped, Notice compared
		wantCalls int
	}{
		"a writer disagrees and states a rule": {reply, finding, 0,
			llmtest.JSON(map[string]any{"answer": "Then the query is safe (store/users.go:10).", "classification": "disagree",
				"learning": map[string]any{"instruction": "Names are validated by the handlers.", "path": "store/**"}}),
			&task.AnswerResult{Text: "Then the query is safe (store/users.go:10).", Classification: review.ClassDisagree,
				Learning: &review.Learning{Instruction: "Names are validated by the handlers.", Path: "store/**"}}, 1},
		"a question outside a finding's thread is not classified": {review.Question{Kind: review.QuestionAsk, CommentID: 3,
			Author: "bob", Writer: true, Body: "What does this change do?"}, nil, 0,
			llmtest.JSON(map[string]any{"answer": "It adds a lookup.", "classification": "question", "learning": nil}),
			&task.AnswerResult{Text: "It adds a lookup."}, 1},
		"the limit is reached: one note": {reply, finding, 5, answer(),
			&task.AnswerResult{Skipped: true, Notice: "MergeGuard answers at most 5 times in one thread (chat.max_answers_per_thread) and stays silent here from now on."}, 0},
		"past the limit: silence": {reply, finding, 6, answer(), &task.AnswerResult{Skipped: true}, 0},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			srv := llmtest.NewQueue(t, tt.model)
			p := newTest(Deps{Config: testLLM(func(c *config.LLM) { c.Model = "gpt-4o" }), LLM: llm.New(llm.Config{BaseURL: srv.URL(), Model: "gpt-4o"}, nil)})
			res, err := p.Answer(t.Context(), task.AnswerRequest{Source: src, Question: tt.q, Finding: tt.finding,
				Answered: tt.answered, Repo: config.DefaultRepo()})
			if err != nil {
				t.Fatal(err)
			}
			got := &task.AnswerResult{Text: res.Text, Classification: res.Classification, Learning: res.Learning, Skipped: res.Skipped, Notice: res.Notice}
			if got.Text != tt.want.Text || got.Classification != tt.want.Classification || got.Skipped != tt.want.Skipped ||
				got.Notice != tt.want.Notice || (got.Learning == nil) != (tt.want.Learning == nil) ||
				(got.Learning != nil && (got.Learning.Instruction != tt.want.Learning.Instruction || got.Learning.Path != tt.want.Learning.Path)) {
				t.Errorf("answer = %+v (learning %+v), want %+v (learning %+v)", got, got.Learning, tt.want, tt.want.Learning)
			}
			if n := srv.Calls(); n != tt.wantCalls {
				t.Errorf("%d model calls, want %d", n, tt.wantCalls)
			}
			if tt.wantCalls == 0 {
				return
			}
			user := srv.Requests()[0].Messages[1].Content
			if !strings.Contains(user, "<<<BEGIN QUESTION") || !strings.Contains(user, tt.q.Body) {
				t.Errorf("the question is not given as data:\n%s", user)
			}
			if tt.finding != nil && !strings.Contains(user, "<<<BEGIN CODE") {
				t.Errorf("the code around the finding is missing:\n%s", user)
			}
		})
	}
}

func TestAnswerWithoutModel(t *testing.T) {
	_, err := newTest(Deps{Config: testLLM()}).Answer(t.Context(), task.AnswerRequest{Source: &memSource{base: map[string]string{}}, Repo: config.DefaultRepo()})
	if !errors.Is(err, task.ErrLLMUnavailable) {
		t.Errorf("Answer without a model = %v, want task.ErrLLMUnavailable", err)
	}
}

// TestAnswerRejectsBadClassification: an answer with an unknown class is
// asked again once, then fails.
func TestAnswerRejectsBadClassification(t *testing.T) {
	bad := llmtest.JSON(map[string]any{"answer": "ok", "classification": "approve", "learning": nil})
	srv := llmtest.NewQueue(t, bad, bad)
	p := newTest(Deps{Config: testLLM(func(c *config.LLM) { c.Model = "gpt-4o" }), LLM: llm.New(llm.Config{BaseURL: srv.URL(), Model: "gpt-4o"}, nil)})
	_, err := p.Answer(t.Context(), task.AnswerRequest{Source: &memSource{base: map[string]string{}}, Repo: config.DefaultRepo(),
		Question: review.Question{Kind: review.QuestionAsk, Body: "approve this"}})
	if err == nil || srv.Calls() != 2 {
		t.Errorf("Answer = %v after %d calls, want an error after 2", err, srv.Calls())
	}
}

// answerTokens answers a question about one finding of the 20-file pull
// request of twentyFilePR with the reviewer's tools and returns the model
// input tokens.
func answerTokens(t testing.TB) int {
	src, _ := twentyFilePR()
	src.base = map[string]string{}
	path := prPath(3)
	finding := &review.LedgerEntry{State: review.FindingOpen, Finding: review.Finding{FilePath: path, LineStart: 30, LineEnd: 31,
		Severity: review.SeverityWarning, Category: review.CategoryBug, Title: "The error of computeChecked is dropped",
		Description: "err is assigned and never checked.", CodeSnippet: strings.Split(prFile(3, true), "\n")[29]}}
	srv := llmtest.NewQueue(t, llmtest.JSON(map[string]any{"answer": "Because err is never read (" + path + ":30).",
		"classification": "question", "learning": nil}))
	p := newTest(Deps{
		Config: testLLM(func(c *config.LLM) { c.Model = "gpt-4o" }),
		LLM:    llm.New(llm.Config{BaseURL: srv.URL(), Model: "gpt-4o"}, nil),
		Tools:  func(src review.Source, d *diff.Diff) Toolbox { return tools.New(src, d, config.Default().LLM) },
	})
	res, err := p.Answer(t.Context(), task.AnswerRequest{Source: src, Finding: finding, Repo: config.DefaultRepo(),
		Question: review.Question{Kind: review.QuestionReply, CommentID: 2, ThreadCommentID: 1, Path: path, Line: 30,
			Author: "alice", Body: "Why is this a bug? computeChecked never fails in practice."},
		Thread: []review.ThreadMessage{{Author: "mergeguard[bot]", Bot: true, Body: "The error of computeChecked is dropped."}}})
	if err != nil {
		t.Fatal(err)
	}
	return res.Cost.InputTokens
}

// TestAnswerTokens: a question about one finding of a 20-file pull request
// costs under 6,000 input tokens (issue 14).
func TestAnswerTokens(t *testing.T) {
	n := answerTokens(t)
	t.Logf("input tokens of an answer: %d", n)
	if n == 0 || n >= 6000 {
		t.Errorf("%d input tokens, want 1..5999", n)
	}
}

// BenchmarkAnswerTokens reports the input tokens of that answer.
func BenchmarkAnswerTokens(b *testing.B) {
	n := 0
	for b.Loop() {
		n = answerTokens(b)
	}
	b.ReportMetric(float64(n), "input-tokens")
}

// TestAnswerUsesTools: the answerer reads the repository with the
// reviewer's tools before answering.
func TestAnswerUsesTools(t *testing.T) {
	src, _ := twentyFilePR()
	src.base = map[string]string{}
	srv := llmtest.NewQueue(t,
		llmtest.ToolCalls(llmtest.Call("call_1", "read_file_part", map[string]any{"file_path": prPath(4), "start_line": 1, "end_line": 5})),
		llmtest.JSON(map[string]any{"answer": "f4 computes in context too (" + prPath(4) + ":1).", "classification": "question", "learning": nil}))
	p := newTest(Deps{
		Config: testLLM(func(c *config.LLM) { c.Model = "gpt-4o" }),
		LLM:    llm.New(llm.Config{BaseURL: srv.URL(), Model: "gpt-4o"}, nil),
		Tools:  func(src review.Source, d *diff.Diff) Toolbox { return tools.New(src, d, config.Default().LLM) },
	})
	res, err := p.Answer(t.Context(), task.AnswerRequest{Source: src, Repo: config.DefaultRepo(),
		Question: review.Question{Kind: review.QuestionAsk, CommentID: 1, Author: "alice", Writer: true, Body: "Does file 4 do the same?"}})
	if err != nil {
		t.Fatal(err)
	}
	if srv.Calls() != 2 || !strings.Contains(res.Text, prPath(4)+":1") {
		t.Fatalf("%d calls, answer %q; want a tool call then the answer", srv.Calls(), res.Text)
	}
	if results := srv.Requests()[1].ToolResults(); !strings.Contains(results["call_1"], "step 1 of file 4") {
		t.Errorf("the tool answered %q, want file 4's first lines", results["call_1"])
	}
}
