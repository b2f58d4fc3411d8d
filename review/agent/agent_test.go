package agent

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	openai "github.com/sashabaranov/go-openai"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/llm"
)

// scriptedChat answers requests from a script, one entry per call, and
// records every request. An entry returning a nil response blocks until the
// context ends.
type scriptedChat struct {
	mu     sync.Mutex
	script []func(req openai.ChatCompletionRequest) (*openai.ChatCompletionResponse, error)
	reqs   []openai.ChatCompletionRequest
}

func (s *scriptedChat) Chat(ctx context.Context, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
	s.mu.Lock()
	i := len(s.reqs)
	s.reqs = append(s.reqs, req)
	s.mu.Unlock()
	if i >= len(s.script) {
		return openai.ChatCompletionResponse{}, errors.New("script exhausted")
	}
	resp, err := s.script[i](req)
	if resp == nil && err == nil {
		<-ctx.Done()
		return openai.ChatCompletionResponse{}, ctx.Err()
	}
	if resp == nil {
		return openai.ChatCompletionResponse{}, err
	}
	return *resp, err
}

func reply(content string) func(openai.ChatCompletionRequest) (*openai.ChatCompletionResponse, error) {
	return func(openai.ChatCompletionRequest) (*openai.ChatCompletionResponse, error) {
		return &openai.ChatCompletionResponse{
			Choices: []openai.ChatCompletionChoice{{Message: openai.ChatCompletionMessage{Role: "assistant", Content: content}, FinishReason: "stop"}},
			Usage:   openai.Usage{PromptTokens: 100, CompletionTokens: 20, TotalTokens: 120},
		}, nil
	}
}

func toolCall(name, args string) func(openai.ChatCompletionRequest) (*openai.ChatCompletionResponse, error) {
	return func(openai.ChatCompletionRequest) (*openai.ChatCompletionResponse, error) {
		return &openai.ChatCompletionResponse{
			Choices: []openai.ChatCompletionChoice{{Message: openai.ChatCompletionMessage{
				Role: "assistant",
				ToolCalls: []openai.ToolCall{{ID: "call_" + name, Type: openai.ToolTypeFunction,
					Function: openai.FunctionCall{Name: name, Arguments: args}}},
			}, FinishReason: "tool_calls"}},
			Usage: openai.Usage{PromptTokens: 100, CompletionTokens: 20, TotalTokens: 120},
		}, nil
	}
}

func blockUntilDone() func(openai.ChatCompletionRequest) (*openai.ChatCompletionResponse, error) {
	return func(openai.ChatCompletionRequest) (*openai.ChatCompletionResponse, error) { return nil, nil }
}

// fakeTools answers every tool with a fixed text and records the calls.
type fakeTools struct {
	mu     sync.Mutex
	answer string
	calls  []string
}

func (f *fakeTools) Definitions() []openai.Tool {
	return []openai.Tool{{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
		Name: "read_file_part", Description: "read a file", Parameters: map[string]any{"type": "object"}}}}
}

func (f *fakeTools) Call(_ context.Context, name, args string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, name+" "+args)
	if name == "missing" {
		return "", errors.New("unknown tool")
	}
	return f.answer, nil
}

// byteCounter counts a token per 4 bytes, rounded up.
type byteCounter struct{}

func (byteCounter) Count(s string) int { return (len(s) + 3) / 4 }

const answer = `{"findings":[{"file_path":"main.go","line_start":3,"line_end":3,"side":"RIGHT","severity":"critical","category":"security","title":"SQL injection","description":"user input in query","suggestion":"","code_snippet":"db.Query(q + id)","confidence":0.9}],"positive_notes":[{"file_path":"main.go","note":"clear names"}]}`

func testConfig(c ChatClient) Config {
	return Config{
		Client: c, Model: "test-model", ContextTokens: 8000, MaxOutputTokens: 1000, MaxTurns: 4,
		Timeout: 5 * time.Second, ResponseFormat: FormatJSONSchema, Counter: byteCounter{},
		Cost: func(_ string, u openai.Usage) review.CostInfo {
			return review.CostInfo{InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens,
				TotalCost: float64(u.PromptTokens)*1e-6 + float64(u.CompletionTokens)*2e-6}
		},
	}
}

func task(tb Toolbox) Task {
	return Task{Name: "reviewer:chunk-1", Stage: review.StageReviewer, System: "You review code.", User: "diff here", Tools: tb}
}

func TestRunToolCallsThenFindings(t *testing.T) {
	chat := &scriptedChat{script: []func(openai.ChatCompletionRequest) (*openai.ChatCompletionResponse, error){
		toolCall("read_file_part", `{"file_path":"main.go"}`),
		toolCall("missing", `{}`),
		reply("Here is my review:\n```json\n" + answer + "\n```"),
	}}
	tb := &fakeTools{answer: "1: package main"}
	var events []map[string]any
	tk := task(tb)
	tk.Emit = func(typ review.EventType, data map[string]any) {
		if typ != review.EventToolCalled {
			t.Errorf("event type %q", typ)
		}
		events = append(events, data)
	}
	res := Run(t.Context(), testConfig(chat), tk)

	if res.Status != review.AgentSuccess || res.Turns != 3 || res.LLMCalls != 3 || res.ToolCalls != 2 || res.Issues != 1 {
		t.Fatalf("result = %+v", res)
	}
	wantCost := review.CostInfo{InputTokens: 300, OutputTokens: 60, TotalCost: 300e-6 + 60*2e-6}
	if diff := cmp.Diff(wantCost, res.Cost, cmpopts.EquateApprox(0, 1e-12)); diff != "" {
		t.Errorf("cost (-want +got):\n%s", diff)
	}
	want := review.Finding{FilePath: "main.go", LineStart: 3, LineEnd: 3, Side: review.SideRight,
		Severity: review.SeverityCritical, Category: review.CategorySecurity, Title: "SQL injection",
		Description: "user input in query", CodeSnippet: "db.Query(q + id)", Confidence: 0.9}
	if diff := cmp.Diff([]review.Finding{want}, res.Output.Findings); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{`read_file_part {"file_path":"main.go"}`, "missing {}"}, tb.calls); diff != "" {
		t.Errorf("tool calls (-want +got):\n%s", diff)
	}
	// The tool's error reaches the model as the tool message.
	last := chat.reqs[2].Messages
	if got := last[len(last)-1]; got.Role != openai.ChatMessageRoleTool || got.Content != "error: unknown tool" || got.ToolCallID != "call_missing" {
		t.Errorf("last message = %+v", got)
	}
	if len(events) != 2 || events[0]["tool"] != "read_file_part" || events[1]["error"] != "unknown tool" {
		t.Errorf("events = %v", events)
	}
	if rf := chat.reqs[0].ResponseFormat; rf == nil || rf.Type != openai.ChatCompletionResponseFormatTypeJSONSchema || !rf.JSONSchema.Strict {
		t.Errorf("response format = %+v", rf)
	}
}

func TestRunMalformedJSON(t *testing.T) {
	tests := map[string]struct {
		script     []func(openai.ChatCompletionRequest) (*openai.ChatCompletionResponse, error)
		wantStatus review.AgentStatus
		wantType   string
		wantCalls  int
	}{
		"retried once then parsed": {
			script:     []func(openai.ChatCompletionRequest) (*openai.ChatCompletionResponse, error){reply("I think it is fine {broken"), reply(answer)},
			wantStatus: review.AgentSuccess, wantCalls: 2,
		},
		"unparsable twice is an agent error": {
			script:     []func(openai.ChatCompletionRequest) (*openai.ChatCompletionResponse, error){reply("no json"), reply(`{"findings": 3}`)},
			wantStatus: review.AgentError, wantType: ErrorTypeInvalidOutput, wantCalls: 2,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			chat := &scriptedChat{script: tc.script}
			res := Run(t.Context(), testConfig(chat), task(nil))
			if res.Status != tc.wantStatus || res.ErrorType != tc.wantType || res.LLMCalls != tc.wantCalls {
				t.Fatalf("result = %+v", res)
			}
			retry := chat.reqs[1].Messages
			if got := retry[len(retry)-1].Content; !strings.Contains(got, "could not be used") {
				t.Errorf("retry message = %q", got)
			}
		})
	}
}

func TestRunMaxTurns(t *testing.T) {
	tool := toolCall("read_file_part", `{}`)
	tests := map[string]struct {
		last         func(openai.ChatCompletionRequest) (*openai.ChatCompletionResponse, error)
		wantFindings int
	}{
		"forced answer keeps partial findings": {last: reply(answer), wantFindings: 1},
		"model ignores the limit":              {last: tool, wantFindings: 0},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			chat := &scriptedChat{script: []func(openai.ChatCompletionRequest) (*openai.ChatCompletionResponse, error){tool, tool, tc.last}}
			cfg := testConfig(chat)
			cfg.MaxTurns = 3
			res := Run(t.Context(), cfg, task(&fakeTools{answer: "x"}))
			if res.Status != review.AgentTruncated || res.Turns != 3 || len(res.Output.Findings) != tc.wantFindings {
				t.Fatalf("result = %+v", res)
			}
			if len(chat.reqs[2].Tools) != 0 || len(chat.reqs[1].Tools) == 0 {
				t.Errorf("tools offered on turns 2/3: %d/%d", len(chat.reqs[1].Tools), len(chat.reqs[2].Tools))
			}
			msgs := chat.reqs[2].Messages
			if got := msgs[len(msgs)-1].Content; got != lastTurnNote {
				t.Errorf("last message = %q", got)
			}
		})
	}
}

func TestRunTimeout(t *testing.T) {
	chat := &scriptedChat{script: []func(openai.ChatCompletionRequest) (*openai.ChatCompletionResponse, error){blockUntilDone()}}
	cfg := testConfig(chat)
	cfg.Timeout = 50 * time.Millisecond
	res := Run(t.Context(), cfg, task(nil))
	if res.Status != review.AgentTimeout || res.TimeoutSeconds != 0.05 || res.Error != "" {
		t.Fatalf("result = %+v", res)
	}
}

func TestRunCanceled(t *testing.T) {
	chat := &scriptedChat{script: []func(openai.ChatCompletionRequest) (*openai.ChatCompletionResponse, error){blockUntilDone()}}
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(20*time.Millisecond, cancel)
	res := Run(ctx, testConfig(chat), task(nil))
	if res.Status != review.AgentError || res.ErrorType != ErrorTypeCanceled {
		t.Fatalf("result = %+v", res)
	}
}

// cancelingCounter is byteCounter that cancels a context the first time
// it counts a text longer than over bytes, as if the review were canceled
// while the prompt is counted.
type cancelingCounter struct {
	over   int
	cancel context.CancelFunc
}

func (c cancelingCounter) Count(s string) int {
	if len(s) > c.over {
		c.cancel()
	}
	return byteCounter{}.Count(s)
}

// TestRunStopsWhileCounting cancels the review while the agent counts its
// prompt or cuts a tool answer: no further request is sent.
func TestRunStopsWhileCounting(t *testing.T) {
	big := strings.Repeat("line of code ", 5000)
	tests := []struct {
		name     string
		user     string
		requests int
	}{
		{"counting the first prompt", big, 0},
		{"cutting a tool answer", "diff here", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool := toolCall("read_file_part", `{"file_path":"big.go"}`)
			chat := &scriptedChat{script: []func(openai.ChatCompletionRequest) (*openai.ChatCompletionResponse, error){tool, reply(answer)}}
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			cfg := testConfig(chat)
			cfg.ContextTokens = 30000
			cfg.Counter = cancelingCounter{over: len(big) - 1, cancel: cancel}
			tk := task(&fakeTools{answer: big + big + big})
			tk.User = tt.user
			res := Run(ctx, cfg, tk)
			if res.Status != review.AgentError || res.ErrorType != ErrorTypeCanceled || len(chat.reqs) != tt.requests {
				t.Fatalf("result = %+v after %d requests, want canceled after %d", res, len(chat.reqs), tt.requests)
			}
		})
	}
}

func TestRunLLMError(t *testing.T) {
	apiErr := &openai.APIError{HTTPStatusCode: 500, Message: "internal error"}
	chat := &scriptedChat{script: []func(openai.ChatCompletionRequest) (*openai.ChatCompletionResponse, error){
		func(openai.ChatCompletionRequest) (*openai.ChatCompletionResponse, error) { return nil, apiErr },
	}}
	res := Run(t.Context(), testConfig(chat), task(nil))
	if res.Status != review.AgentError || res.ErrorType != ErrorTypeLLM || !strings.Contains(res.Error, "internal error") {
		t.Fatalf("result = %+v", res)
	}
}

// TestRunStaysWithinContext feeds tool answers far larger than the context
// and checks that no request's prompt exceeds ContextTokens -
// MaxOutputTokens.
func TestRunStaysWithinContext(t *testing.T) {
	tool := toolCall("read_file_part", `{"file_path":"big.go"}`)
	chat := &scriptedChat{script: []func(openai.ChatCompletionRequest) (*openai.ChatCompletionResponse, error){tool, tool, tool, tool, reply(answer)}}
	cfg := testConfig(chat)
	cfg.ContextTokens, cfg.MaxOutputTokens, cfg.MaxTurns = 3000, 500, 6
	res := Run(t.Context(), cfg, task(&fakeTools{answer: strings.Repeat("line of code ", 5000)}))
	if res.Status != review.AgentTruncated && res.Status != review.AgentSuccess {
		t.Fatalf("result = %+v", res)
	}
	c := conversation{cfg: cfg}
	for i, req := range chat.reqs {
		c.msgs = req.Messages
		if n := c.tokens(req); n > cfg.ContextTokens-cfg.MaxOutputTokens {
			t.Errorf("request %d: prompt of %d tokens exceeds %d", i, n, cfg.ContextTokens-cfg.MaxOutputTokens)
		}
	}
	if res.MaxPromptTokens > 2500 || res.MaxPromptTokens < 2000 {
		t.Errorf("MaxPromptTokens = %d, want the budget nearly used", res.MaxPromptTokens)
	}
}

func TestRunPromptTooLarge(t *testing.T) {
	chat := &scriptedChat{}
	cfg := testConfig(chat)
	cfg.ContextTokens = 1200
	tk := task(nil)
	tk.User = strings.Repeat("x", 4000)
	res := Run(t.Context(), cfg, tk)
	if res.Status != review.AgentError || res.ErrorType != ErrorTypeContextOverflow || len(chat.reqs) != 0 {
		t.Fatalf("result = %+v, %d requests sent", res, len(chat.reqs))
	}
}

func TestParseOutput(t *testing.T) {
	tests := map[string]struct {
		in      string
		want    []review.Finding
		wantErr bool
	}{
		"bare": {in: `{"findings":[],"positive_notes":[]}`, want: nil},
		"fenced with prose": {
			in: "Sure.\n```json\n{\"findings\":[{\"file_path\":\"./a.go\",\"line_start\":5,\"line_end\":2,\"side\":\"left\",\"severity\":\"BLOCKER\",\"category\":\"Security\",\"title\":\" t \",\"confidence\":7}]}\n```\nDone.",
			want: []review.Finding{{FilePath: "a.go", LineStart: 5, LineEnd: 5, Side: review.SideLeft,
				Severity: review.SeverityInfo, Category: review.CategorySecurity, Title: "t", Confidence: 1}},
		},
		// A path is data: white space at its ends is part of the name.
		"path kept byte for byte": {
			in: `{"findings":[{"file_path":" settings.py","line_start":2,"title":"key"},{"file_path":"./tab\t.py ","line_start":1,"title":"x"}]}`,
			want: []review.Finding{
				{FilePath: " settings.py", LineStart: 2, LineEnd: 2, Side: review.SideRight, Severity: review.SeverityInfo, Category: review.CategoryQuality, Title: "key"},
				{FilePath: "tab\t.py ", LineStart: 1, LineEnd: 1, Side: review.SideRight, Severity: review.SeverityInfo, Category: review.CategoryQuality, Title: "x"},
			},
		},
		"prose around object": {in: `Result: {"findings":[]} ok`, want: nil},
		"no json":             {in: "looks good to me", wantErr: true},
		"wrong shape":         {in: `{"findings":"none"}`, wantErr: true},
		"missing findings":    {in: `{"verdict":"approve"}`, wantErr: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := ParseOutput(tc.in)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got.Findings); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRunShrinksAfterOverflow: a server refusing a prompt as too long
// (context_length_exceeded) gets it once more with the newest tool answer
// cut by at least a quarter; a second refusal fails the run.
func TestRunShrinksAfterOverflow(t *testing.T) {
	overflow := func(openai.ChatCompletionRequest) (*openai.ChatCompletionResponse, error) {
		return nil, &llm.Error{Status: 400, Type: llm.TypeContextLength, Code: "context_length_exceeded", Message: "too long"}
	}
	tool := toolCall("read_file_part", `{"file_path":"big.go"}`)
	tests := []struct {
		name       string
		script     []func(openai.ChatCompletionRequest) (*openai.ChatCompletionResponse, error)
		tools      Toolbox
		wantStatus review.AgentStatus
		wantType   string
		wantReqs   int
	}{
		{"cut and sent again", []func(openai.ChatCompletionRequest) (*openai.ChatCompletionResponse, error){tool, overflow, reply(answer)},
			&fakeTools{answer: strings.Repeat("line of code ", 5000)}, review.AgentSuccess, "", 3},
		{"only once", []func(openai.ChatCompletionRequest) (*openai.ChatCompletionResponse, error){tool, overflow, overflow},
			&fakeTools{answer: strings.Repeat("line of code ", 5000)}, review.AgentError, llm.TypeContextLength, 3},
		{"nothing to cut", []func(openai.ChatCompletionRequest) (*openai.ChatCompletionResponse, error){overflow},
			nil, review.AgentError, llm.TypeContextLength, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			chat := &scriptedChat{script: tt.script}
			res := Run(t.Context(), testConfig(chat), task(tt.tools))
			if res.Status != tt.wantStatus || res.ErrorType != tt.wantType || len(chat.reqs) != tt.wantReqs {
				t.Fatalf("result = %+v after %d requests, want %s %q after %d", res, len(chat.reqs), tt.wantStatus, tt.wantType, tt.wantReqs)
			}
			if tt.wantReqs >= 3 {
				before, after := chat.reqs[1].Messages, chat.reqs[2].Messages
				b, a := len(before[len(before)-1].Content), len(after[len(after)-1].Content)
				if a > b*3/4 {
					t.Errorf("tool answer of %d bytes sent again with %d bytes, want at most three quarters", b, a)
				}
			}
		})
	}
}
