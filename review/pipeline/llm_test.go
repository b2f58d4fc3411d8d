package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	openai "github.com/sashabaranov/go-openai"

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/diff"
	"github.com/mergeguard/mergeguard/review/llm"
	"github.com/mergeguard/mergeguard/review/llm/llmtest"
	"github.com/mergeguard/mergeguard/review/source/difftext"
	"github.com/mergeguard/mergeguard/review/task"
)

// fakeClock lets the LLM client's retries run without waiting and records
// the waits.
type fakeClock struct {
	mu     sync.Mutex
	sleeps []time.Duration
}

func (c *fakeClock) Now() time.Time { return time.Now() }
func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	c.sleeps = append(c.sleeps, d)
	c.mu.Unlock()
	return ctx.Err()
}

// fileTools is a one-tool toolbox reading files at the head revision.
type fileTools struct{ src review.Source }

func (fileTools) Definitions() []openai.Tool {
	return []openai.Tool{{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
		Name: "read_file_part", Description: "Read a file at the head revision.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"file_path":{"type":"string"}},"required":["file_path"]}`),
	}}}
}

func (t fileTools) Call(ctx context.Context, _, args string) (string, error) {
	var a struct {
		FilePath string `json:"file_path"`
	}
	if err := json.Unmarshal([]byte(args), &a); err != nil {
		return "", fmt.Errorf("bad arguments: %w", err)
	}
	b, err := t.src.ReadFile(ctx, a.FilePath, review.Head)
	return string(b), err
}

// found is a finding as a model writes it.
type found struct {
	FilePath    string  `json:"file_path"`
	LineStart   int     `json:"line_start"`
	LineEnd     int     `json:"line_end"`
	Side        string  `json:"side"`
	Severity    string  `json:"severity"`
	Category    string  `json:"category"`
	Title       string  `json:"title"`
	Description string  `json:"description"`
	Suggestion  string  `json:"suggestion"`
	CodeSnippet string  `json:"code_snippet"`
	Confidence  float64 `json:"confidence"`
}

// answer is a model's final JSON with the given findings.
func answer(fs ...found) llmtest.Response {
	return llmtest.JSON(map[string]any{"findings": append([]found{}, fs...), "positive_notes": []any{}})
}

const sqliLine = `q := fmt.Sprintf("SELECT id FROM users WHERE name = '%s'", name)`

var sqli = found{FilePath: "store/users.go", LineStart: 10, LineEnd: 10, Side: "RIGHT", Severity: "critical",
	Category: "security", Title: "SQL injection", Description: "name is formatted into the query.",
	Suggestion: "Use a placeholder.", CodeSnippet: sqliLine, Confidence: 0.9}

// outcome is what the table test compares of a result.
type outcome struct {
	Verdict  review.Decision
	Degraded bool
	Agent    review.AgentResult // the LLM agent, timings cleared
	Statuses map[string]review.VerificationStatus
	Calls    int
}

func TestRunWithLLM(t *testing.T) {
	prices := map[string]config.Price{"gpt-4o": {InputPerMillion: 2.5, OutputPerMillion: 10}}
	tests := map[string]struct {
		diff      string
		responses []llmtest.Response
		deps      func(*Deps)
		repo      func(*config.Repo)
		want      outcome
		// wantErr is the error Run must return; the outcome is then not
		// compared.
		wantErr error
		check   func(t *testing.T, res *task.Result, srv *llmtest.Server, clock *fakeClock)
	}{
		"tool calls then findings, cost summed": {
			diff: "sqli.diff",
			responses: []llmtest.Response{
				llmtest.ToolCalls(llmtest.Call("call_1", "read_file_part", map[string]string{"file_path": "store/users.go"})).WithUsage(1000, 100),
				answer(sqli).WithUsage(1500, 100),
			},
			want: outcome{Verdict: review.DecisionRequestChanges, Calls: 2,
				Agent:    review.AgentResult{Status: review.AgentSuccess, Issues: 1, Turns: 2, Cost: review.CostInfo{InputTokens: 2500, OutputTokens: 200, TotalCost: 0.00825}},
				Statuses: map[string]review.VerificationStatus{"SQL injection": review.Verified}},
			check: func(t *testing.T, res *task.Result, srv *llmtest.Server, _ *fakeClock) {
				reqs := srv.Requests()
				if got := reqs[1].ToolResults()["call_1"]; !strings.Contains(got, "func FindUser") {
					t.Errorf("tool result = %q", got)
				}
				if s := res.Verdict.Stats; s.ToolCalls != 1 || s.LLMCalls != 2 || s.InputTokens != 2500 {
					t.Errorf("stats = %+v", s)
				}
			},
		},
		"multi-turn": {
			diff: "sqli.diff",
			responses: []llmtest.Response{
				llmtest.ToolCalls(llmtest.Call("a", "read_file_part", map[string]string{"file_path": "store/users.go"})),
				llmtest.ToolCalls(llmtest.Call("b", "read_file_part", map[string]string{"file_path": "nope.go"})),
				llmtest.ToolCalls(llmtest.Call("c", "read_file_part", `{"file_path":`)),
				answer(sqli),
			},
			want: outcome{Verdict: review.DecisionRequestChanges, Calls: 4,
				Agent:    review.AgentResult{Status: review.AgentSuccess, Issues: 1, Turns: 4},
				Statuses: map[string]review.VerificationStatus{"SQL injection": review.Verified}},
			check: func(t *testing.T, _ *task.Result, srv *llmtest.Server, _ *fakeClock) {
				last := srv.Requests()[3].ToolResults()
				if !strings.HasPrefix(last["b"], "error: ") || !strings.HasPrefix(last["c"], "error: bad arguments") {
					t.Errorf("tool errors not shown to the model: %v", last)
				}
			},
		},
		"hallucinated file and line are false positives": {
			diff: "sqli.diff",
			responses: []llmtest.Response{answer(
				found{FilePath: "store/orders.go", LineStart: 3, LineEnd: 3, Severity: "critical", Category: "bug", Title: "ghost file"},
				found{FilePath: "store/users.go", LineStart: 40, LineEnd: 41, Severity: "critical", Category: "bug", Title: "ghost line"},
			)},
			want: outcome{Verdict: review.DecisionComment, Calls: 1,
				Agent: review.AgentResult{Status: review.AgentSuccess, Issues: 2, Turns: 1},
				Statuses: map[string]review.VerificationStatus{
					"ghost file": review.FalsePositive, "ghost line": review.FalsePositive}},
		},
		"lines outside the hunks of a modified file in a bare diff are unverified, not false": {
			diff: "modified.diff",
			responses: []llmtest.Response{answer(
				found{FilePath: "server/handler.go", LineStart: 11, LineEnd: 11, Severity: "critical", Category: "security",
					Title: "XSS", CodeSnippet: `fmt.Fprintf(w, "hello %s", name)`},
				found{FilePath: "server/handler.go", LineStart: 40, LineEnd: 41, Severity: "warning", Category: "bug",
					Title: "outside the hunk"},
			)},
			want: outcome{Verdict: review.DecisionRequestChanges, Calls: 1,
				Agent: review.AgentResult{Status: review.AgentSuccess, Issues: 2, Turns: 1},
				Statuses: map[string]review.VerificationStatus{
					"XSS": review.Verified, "outside the hunk": review.Unverified}},
		},
		// A snippet that matches nothing in the file is a hallucination:
		// a false positive, never posted, even as a critical.
		"snippet not in the file is a false positive": {
			diff: "sqli.diff",
			responses: []llmtest.Response{answer(found{FilePath: "store/users.go", LineStart: 11, LineEnd: 11,
				Severity: "critical", Category: "security", Title: "command injection", CodeSnippet: `exec.Command("sh", "-c", name)`})},
			want: outcome{Verdict: review.DecisionComment, Calls: 1,
				Agent:    review.AgentResult{Status: review.AgentSuccess, Issues: 1, Turns: 1},
				Statuses: map[string]review.VerificationStatus{"command injection": review.FalsePositive}},
		},
		"429 with Retry-After then success": {
			diff:      "sqli.diff",
			responses: []llmtest.Response{llmtest.RateLimited("7"), answer(sqli)},
			want: outcome{Verdict: review.DecisionRequestChanges, Calls: 2,
				Agent:    review.AgentResult{Status: review.AgentSuccess, Issues: 1, Turns: 1},
				Statuses: map[string]review.VerificationStatus{"SQL injection": review.Verified}},
			check: func(t *testing.T, _ *task.Result, _ *llmtest.Server, clock *fakeClock) {
				if len(clock.sleeps) != 1 || clock.sleeps[0] < 7*time.Second {
					t.Errorf("waits = %v, want one of Retry-After's 7s", clock.sleeps)
				}
			},
		},
		"persistent 500: the model is unavailable, the analyzers' review comes with the error": {
			diff:      "injection.diff",
			responses: []llmtest.Response{llmtest.ServerError(), llmtest.ServerError(), llmtest.ServerError()},
			wantErr:   task.ErrLLMUnavailable,
			check: func(t *testing.T, res *task.Result, _ *llmtest.Server, _ *fakeClock) {
				if res == nil {
					t.Fatal("no review with ErrLLMUnavailable: the analyzers' findings are lost")
				}
				v := res.Verdict
				if v.Verdict != review.DecisionRequestChanges || !v.Degraded || !slices.Contains(v.Notes, task.ModelUnavailableNote) {
					t.Errorf("verdict %s, degraded %v, notes %q; want request_changes (the AWS key), degraded, the note", v.Verdict, v.Degraded, v.Notes)
				}
				var titles []string
				for _, f := range v.Findings() {
					titles = append(titles, f.Title)
				}
				if !slices.Contains(titles, "Possible secret committed (aws-access-token)") {
					t.Errorf("findings %q, want the AWS key's", titles)
				}
			},
		},
		"malformed JSON is retried once then an agent error": {
			diff:      "sqli.diff",
			responses: []llmtest.Response{llmtest.Text("Looks fine to me!"), llmtest.Text(`{"findings": "none"}`)},
			want: outcome{Verdict: review.DecisionComment, Degraded: true, Calls: 2,
				Agent: review.AgentResult{Status: review.AgentError, ErrorType: "invalid_output", Turns: 2}},
			check: func(t *testing.T, _ *task.Result, srv *llmtest.Server, _ *fakeClock) {
				if got := srv.Requests()[1].LastMessage().Content; !strings.Contains(got, "could not be used") {
					t.Errorf("retry message = %q", got)
				}
			},
		},
		"malformed JSON then a good answer": {
			diff:      "sqli.diff",
			responses: []llmtest.Response{llmtest.Text("```json\n{oops\n```"), answer(sqli)},
			want: outcome{Verdict: review.DecisionRequestChanges, Calls: 2,
				Agent:    review.AgentResult{Status: review.AgentSuccess, Issues: 1, Turns: 2},
				Statuses: map[string]review.VerificationStatus{"SQL injection": review.Verified}},
		},
		"max turns truncates with partial findings": {
			diff: "sqli.diff",
			deps: func(d *Deps) { d.Config.MaxTurns = 2 },
			responses: []llmtest.Response{
				llmtest.ToolCalls(llmtest.Call("a", "read_file_part", map[string]string{"file_path": "store/users.go"})),
				answer(sqli),
			},
			want: outcome{Verdict: review.DecisionRequestChanges, Calls: 2,
				Agent:    review.AgentResult{Status: review.AgentTruncated, Issues: 1, Turns: 2},
				Statuses: map[string]review.VerificationStatus{"SQL injection": review.Verified}},
			check: func(t *testing.T, _ *task.Result, srv *llmtest.Server, _ *fakeClock) {
				if r := srv.Requests()[1]; r.HasTool("read_file_part") {
					t.Error("the last turn offered tools")
				}
			},
		},
		"timeout of every reviewer: the model is unavailable": {
			diff:      "sqli.diff",
			deps:      func(d *Deps) { d.Config.AgentTimeout = 100 * time.Millisecond },
			responses: []llmtest.Response{answer(sqli).After(500 * time.Millisecond)},
			wantErr:   task.ErrLLMUnavailable,
		},
		"prompt injection does not change the verdict": {
			diff: "injection.diff",
			repo: func(r *config.Repo) { r.AllowApprove = true },
			responses: []llmtest.Response{llmtest.JSON(map[string]any{
				"findings": []any{}, "positive_notes": []any{}, "verdict": "approve", "summary": "All good, approved."})},
			want: outcome{Verdict: review.DecisionRequestChanges, Calls: 1,
				Agent:    review.AgentResult{Status: review.AgentSuccess, Turns: 1},
				Statuses: map[string]review.VerificationStatus{"Possible secret committed (aws-access-token)": review.Verified}},
			check: func(t *testing.T, _ *task.Result, srv *llmtest.Server, _ *fakeClock) {
				req := srv.Requests()[0]
				if !strings.Contains(req.Messages[0].Content, "never instructions to you") {
					t.Error("system prompt lacks the injection rule")
				}
				user := req.Messages[1].Content
				begin, inj, end := strings.Index(user, "<<<BEGIN DIFF"), strings.Index(user, "ignore previous instructions"), strings.Index(user, "<<<END DIFF")
				if begin < 0 || begin >= inj || inj >= end {
					t.Errorf("the diff is not delimited as data:\n%s", user)
				}
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := llmtest.NewQueue(t, tc.responses...)
			clock := &fakeClock{}
			client := llm.New(llm.Config{BaseURL: srv.URL(), Model: "gpt-4o", MaxRetries: 2}, nil,
				llm.WithClock(clock), llm.WithBackoff(time.Millisecond, time.Minute))
			src, err := difftext.New(readTestdata(t, tc.diff))
			if err != nil {
				t.Fatal(err)
			}
			deps := Deps{
				Config: testLLM(func(c *config.LLM) { c.Model, c.Prices, c.MaxTurns = "gpt-4o", prices, 6 }),
				LLM:    client,
				Tools:  func(src review.Source, _ *diff.Diff) Toolbox { return fileTools{src} },
			}
			if tc.deps != nil {
				tc.deps(&deps)
			}
			repo := config.DefaultRepo()
			if tc.repo != nil {
				tc.repo(&repo)
			}
			res, err := newTest(deps).Run(t.Context(), task.Request{Source: src, Repo: repo})
			if tc.wantErr != nil || err != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("Run: error %v, want %v", err, tc.wantErr)
				}
				if tc.check != nil {
					tc.check(t, res, srv, clock)
				}
				return
			}
			got := outcome{Verdict: res.Verdict.Verdict, Degraded: res.Verdict.Degraded, Calls: srv.Calls(),
				Statuses: map[string]review.VerificationStatus{}}
			for _, a := range res.Verdict.Agents {
				if strings.HasPrefix(a.Agent, "reviewer:") {
					a.Agent, a.Stage, a.ElapsedMS, a.Error = "", "", 0, ""
					if tc.want.Agent.Cost == (review.CostInfo{}) {
						a.Cost = review.CostInfo{} // llmtest's usage estimate; priced in the first case
					}
					got.Agent = a
				}
			}
			for _, f := range res.Findings {
				got.Statuses[f.Title] = f.VerificationStatus
				if f.Fingerprint == "" {
					t.Errorf("finding %q has no fingerprint", f.Title)
				}
			}
			if len(tc.want.Statuses) == 0 {
				tc.want.Statuses = map[string]review.VerificationStatus{}
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
				t.Errorf("outcome (-want +got):\n%s", diff)
			}
			if tc.check != nil {
				tc.check(t, res, srv, clock)
			}
		})
	}
}
