package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	openai "github.com/sashabaranov/go-openai"

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/llm"
	"github.com/mergeguard/mergeguard/review/llm/llmtest"
)

// fakeClock records the waits instead of sleeping.
type fakeClock struct {
	mu    sync.Mutex
	now   time.Time
	slept []time.Duration
	// onSleep, when set, runs before each wait (e.g. to cancel a context).
	onSleep func()
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Now()} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	if c.onSleep != nil {
		c.onSleep()
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.slept = append(c.slept, d)
	c.now = c.now.Add(d)
	return nil
}

func (c *fakeClock) waits() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.slept...)
}

func newClient(fake *llmtest.Server, clock *fakeClock, maxRetries int) *llm.Client {
	return llm.New(llm.Config{BaseURL: fake.URL(), APIKey: "sk-test", Model: "gpt-4o", MaxRetries: maxRetries},
		nil, llm.WithClock(clock))
}

func userRequest(text string) openai.ChatCompletionRequest {
	return openai.ChatCompletionRequest{Messages: []openai.ChatCompletionMessage{
		{Role: openai.ChatMessageRoleSystem, Content: "You review code."},
		{Role: openai.ChatMessageRoleUser, Content: text},
	}}
}

func TestChatToolCallRoundTrip(t *testing.T) {
	fake := llmtest.NewQueue(t,
		llmtest.ToolCalls(llmtest.Call("call_abc", "read_file_part",
			map[string]any{"file_path": "main.go", "start_line": 1, "end_line": 20})).WithUsage(120, 30),
		llmtest.Text(`{"findings":[]}`).WithUsage(200, 10),
	)
	c := newClient(fake, newFakeClock(), 0)
	req := userRequest("Review main.go")
	req.Tools = []openai.Tool{{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
		Name:        "read_file_part",
		Description: "Read part of a file.",
		Strict:      true,
		Parameters: json.RawMessage(`{"type":"object","properties":{"file_path":{"type":"string"}},` +
			`"required":["file_path"],"additionalProperties":false}`),
	}}}
	req.ToolChoice = "auto"

	resp, err := c.Chat(t.Context(), req)
	if err != nil {
		t.Fatalf("first Chat: %v", err)
	}
	choice := resp.Choices[0]
	if choice.FinishReason != openai.FinishReasonToolCalls {
		t.Errorf("finish reason = %q, want tool_calls", choice.FinishReason)
	}
	wantCalls := []openai.ToolCall{{ID: "call_abc", Type: openai.ToolTypeFunction, Function: openai.FunctionCall{
		Name: "read_file_part", Arguments: `{"end_line":20,"file_path":"main.go","start_line":1}`}}}
	if d := cmp.Diff(wantCalls, choice.Message.ToolCalls); d != "" {
		t.Errorf("tool calls (-want +got):\n%s", d)
	}
	if resp.Usage.PromptTokens != 120 || resp.Usage.CompletionTokens != 30 || resp.Usage.TotalTokens != 150 {
		t.Errorf("usage = %+v, want 120/30/150", resp.Usage)
	}
	if resp.Object != "chat.completion" || resp.Model != "gpt-4o" || !strings.HasPrefix(resp.ID, "chatcmpl-") {
		t.Errorf("response envelope = %q %q %q", resp.ID, resp.Object, resp.Model)
	}

	req.Messages = append(req.Messages, choice.Message, openai.ChatCompletionMessage{
		Role: openai.ChatMessageRoleTool, ToolCallID: "call_abc", Content: "1\tpackage main",
	})
	resp, err = c.Chat(t.Context(), req)
	if err != nil {
		t.Fatalf("second Chat: %v", err)
	}
	if got := resp.Choices[0].Message.Content; got != `{"findings":[]}` {
		t.Errorf("content = %q", got)
	}

	reqs := fake.Requests()
	if len(reqs) != 2 {
		t.Fatalf("fake got %d requests, want 2", len(reqs))
	}
	first, second := reqs[0], reqs[1]
	if first.Model != "gpt-4o" || !first.HasTool("read_file_part") || string(first.ToolChoice) != `"auto"` {
		t.Errorf("first request: model %q, tools %+v, tool_choice %s", first.Model, first.Tools, first.ToolChoice)
	}
	if !first.Tools[0].Function.Strict {
		t.Error("strict flag lost on the wire")
	}
	if got := second.ToolResults(); got["call_abc"] != "1\tpackage main" {
		t.Errorf("tool results = %v", got)
	}
	if got := second.Header.Get("Authorization"); got != "Bearer sk-test" {
		t.Errorf("Authorization = %q", got)
	}
}

func TestChatEmptyAPIKeySendsNoAuthorization(t *testing.T) {
	fake := llmtest.NewQueue(t, llmtest.Text("ok"))
	c := llm.New(llm.Config{BaseURL: fake.URL(), Model: "llama3.1"}, nil)
	if _, err := c.Chat(t.Context(), userRequest("hi")); err != nil {
		t.Fatal(err)
	}
	if h, ok := fake.Requests()[0].Header["Authorization"]; ok {
		t.Errorf("Authorization header sent: %q", h)
	}
}

func TestChatRetriesHonourServerHints(t *testing.T) {
	now := time.Now()
	tests := []struct {
		name     string
		first    llmtest.Response
		min, max time.Duration
	}{
		{"Retry-After seconds", llmtest.RateLimited("7"), 7 * time.Second, 7700 * time.Millisecond},
		{"Retry-After HTTP date", llmtest.RateLimited(now.Add(20 * time.Second).UTC().Format(http.TimeFormat)),
			18 * time.Second, 22 * time.Second},
		{"retry-after-ms", llmtest.RateLimited("").WithHeader("retry-after-ms", "1500"),
			1500 * time.Millisecond, 1650 * time.Millisecond},
		{"429: x-ratelimit-reset of the exhausted limit", llmtest.RateLimited("").
			WithHeader("x-ratelimit-remaining-requests", "0").WithHeader("x-ratelimit-reset-requests", "2.5s").
			WithHeader("x-ratelimit-remaining-tokens", "12000").WithHeader("x-ratelimit-reset-tokens", "30s"),
			2500 * time.Millisecond, 2750 * time.Millisecond},
		{"429 as OpenAI sends it", llmtest.RateLimited(""), 240 * time.Millisecond, 264 * time.Millisecond},
		{"429 with no limit exhausted: backoff around 1s", llmtest.RateLimited("").
			WithHeader("x-ratelimit-remaining-tokens", "12000"), 500 * time.Millisecond, time.Second},
		{"429 without hints: backoff around 1s", llmtest.APIError(http.StatusTooManyRequests, "requests", "rate_limit_exceeded", "slow down"),
			500 * time.Millisecond, time.Second},
		{"500 with OpenAI's x-ratelimit-reset-tokens 6m0s: backoff around 1s", llmtest.ServerError(),
			500 * time.Millisecond, time.Second},
		{"503 plain text with Retry-After", llmtest.Unavailable().WithHeader("Retry-After", "3"),
			3 * time.Second, 3300 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := llmtest.NewQueue(t, tt.first, llmtest.Text("ok"))
			clock := newFakeClock()
			clock.now = now
			resp, err := newClient(fake, clock, 3).Chat(t.Context(), userRequest("hi"))
			if err != nil {
				t.Fatalf("Chat: %v", err)
			}
			if resp.Choices[0].Message.Content != "ok" {
				t.Errorf("content = %q", resp.Choices[0].Message.Content)
			}
			waits := clock.waits()
			if len(waits) != 1 || waits[0] < tt.min || waits[0] > tt.max {
				t.Errorf("waits = %v, want one in [%v, %v]", waits, tt.min, tt.max)
			}
			if fake.Calls() != 2 {
				t.Errorf("calls = %d, want 2", fake.Calls())
			}
		})
	}
}

func TestChatErrors(t *testing.T) {
	tests := []struct {
		name       string
		responses  []llmtest.Response
		maxRetries int
		want       llm.Error // Err and Message are checked loosely
		message    string    // a part of Message
	}{
		{
			name:       "500 retried then given up",
			responses:  []llmtest.Response{llmtest.ServerError(), llmtest.ServerError(), llmtest.ServerError()},
			maxRetries: 2,
			want:       llm.Error{Status: 500, Type: llm.TypeServer, Retryable: true, Attempts: 3},
			message:    "The server had an error",
		},
		{
			name:       "503 plain text body",
			responses:  []llmtest.Response{llmtest.Unavailable(), llmtest.Unavailable()},
			maxRetries: 1,
			want:       llm.Error{Status: 503, Type: llm.TypeServer, Retryable: true, Attempts: 2},
			message:    "upstream connect error",
		},
		{
			name:       "429 without retries",
			responses:  []llmtest.Response{llmtest.RateLimited("1")},
			want:       llm.Error{Status: 429, Type: llm.TypeRateLimited, Code: "rate_limit_exceeded", Retryable: true, Attempts: 1},
			message:    "Rate limit reached",
			maxRetries: 0,
		},
		{
			name:       "400 not retried",
			responses:  []llmtest.Response{llmtest.APIError(400, "invalid_request_error", "", "Invalid 'messages[1].content'")},
			maxRetries: 3,
			want:       llm.Error{Status: 400, Type: llm.TypeBadRequest, Attempts: 1},
			message:    "Invalid 'messages[1].content'",
		},
		{
			name: "context length",
			responses: []llmtest.Response{llmtest.APIError(400, "invalid_request_error", "context_length_exceeded",
				"This model's maximum context length is 128000 tokens.")},
			maxRetries: 3,
			want:       llm.Error{Status: 400, Type: llm.TypeContextLength, Code: "context_length_exceeded", Attempts: 1},
			message:    "maximum context length",
		},
		{
			name:       "401 bad key",
			responses:  []llmtest.Response{llmtest.APIError(401, "invalid_request_error", "invalid_api_key", "Incorrect API key provided: sk-te***st.")},
			maxRetries: 3,
			want:       llm.Error{Status: 401, Type: llm.TypeAuth, Code: "invalid_api_key", Attempts: 1},
			message:    "Incorrect API key",
		},
		{
			name:       "404 unknown model",
			responses:  []llmtest.Response{llmtest.APIError(404, "invalid_request_error", "model_not_found", "The model `gpt-9` does not exist")},
			maxRetries: 3,
			want:       llm.Error{Status: 404, Type: llm.TypeNotFound, Code: "model_not_found", Attempts: 1},
			message:    "does not exist",
		},
		{
			name:       "malformed JSON body",
			responses:  []llmtest.Response{llmtest.Malformed()},
			maxRetries: 3,
			want:       llm.Error{Type: llm.TypeInvalidResponse, Attempts: 1},
			message:    "invalid character '<'",
		},
		{
			name:       "no choices",
			responses:  []llmtest.Response{{Body: `{"id":"x","object":"chat.completion","choices":[],"usage":{}}`}},
			maxRetries: 3,
			want:       llm.Error{Type: llm.TypeInvalidResponse, Attempts: 1},
			message:    "no choices",
		},
		{
			name:       "server asks to wait too long",
			responses:  []llmtest.Response{llmtest.RateLimited("3600")},
			maxRetries: 3,
			want:       llm.Error{Status: 429, Type: llm.TypeRateLimited, Code: "rate_limit_exceeded", Retryable: true, Attempts: 1},
			message:    "more than 1m0s",
		},
	}
	// Compare the classification of an Error, not its text or cause.
	cmpErrorFields := cmp.FilterPath(func(p cmp.Path) bool {
		f := p.Last().String()
		return f == ".Message" || f == ".Err"
	}, cmp.Ignore())
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := llmtest.NewQueue(t, tt.responses...)
			clock := newFakeClock()
			_, err := newClient(fake, clock, tt.maxRetries).Chat(t.Context(), userRequest("hi"))
			var got *llm.Error
			if !errors.As(err, &got) {
				t.Fatalf("Chat error = %v (%T), want *llm.Error", err, err)
			}
			if !strings.Contains(got.Message, tt.message) {
				t.Errorf("Message = %q, want it to contain %q", got.Message, tt.message)
			}
			if d := cmp.Diff(tt.want, *got, cmpErrorFields); d != "" {
				t.Errorf("error (-want +got):\n%s", d)
			}
			if fake.Calls() != len(tt.responses) {
				t.Errorf("calls = %d, want %d", fake.Calls(), len(tt.responses))
			}
			if len(clock.waits()) != got.Attempts-1 {
				t.Errorf("waited %d times for %d attempts", len(clock.waits()), got.Attempts)
			}
		})
	}
}

func TestChatBackoffGrows(t *testing.T) {
	fake := llmtest.NewQueue(t, llmtest.ServerError(), llmtest.ServerError(), llmtest.ServerError(), llmtest.Text("ok"))
	clock := newFakeClock()
	c := llm.New(llm.Config{BaseURL: fake.URL(), Model: "m", MaxRetries: 3}, nil,
		llm.WithClock(clock), llm.WithBackoff(100*time.Millisecond, 300*time.Millisecond))
	if _, err := c.Chat(t.Context(), userRequest("hi")); err != nil {
		t.Fatal(err)
	}
	waits := clock.waits()
	bounds := [][2]time.Duration{{50, 100}, {100, 200}, {150, 300}} // milliseconds: half to full of 100, 200, 300 (capped)
	if len(waits) != len(bounds) {
		t.Fatalf("waits = %v", waits)
	}
	for i, b := range bounds {
		if waits[i] < b[0]*time.Millisecond || waits[i] > b[1]*time.Millisecond {
			t.Errorf("wait %d = %v, want in [%dms, %dms]", i, waits[i], b[0], b[1])
		}
	}
}

func TestChatStopsWhenContextEnds(t *testing.T) {
	t.Run("canceled while waiting to retry", func(t *testing.T) {
		fake := llmtest.NewQueue(t, llmtest.ServerError())
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		clock := newFakeClock()
		clock.onSleep = cancel
		_, err := newClient(fake, clock, 5).Chat(ctx, userRequest("hi"))
		var e *llm.Error
		if !errors.As(err, &e) || e.Type != llm.TypeCanceled || !errors.Is(err, context.Canceled) {
			t.Fatalf("error = %v, want a canceled *llm.Error", err)
		}
		if fake.Calls() != 1 {
			t.Errorf("calls = %d, want 1 (no retry after cancel)", fake.Calls())
		}
	})
	t.Run("deadline before the server's Retry-After", func(t *testing.T) {
		fake := llmtest.NewQueue(t, llmtest.RateLimited("30"))
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		clock := newFakeClock()
		_, err := newClient(fake, clock, 5).Chat(ctx, userRequest("hi"))
		var e *llm.Error
		if !errors.As(err, &e) || e.Type != llm.TypeRateLimited || !strings.Contains(e.Message, "no time left") {
			t.Fatalf("error = %v, want rate_limited with no time left", err)
		}
		if len(clock.waits()) != 0 || fake.Calls() != 1 {
			t.Errorf("waits %v, calls %d; want no wait, 1 call", clock.waits(), fake.Calls())
		}
	})
	t.Run("canceled during a slow answer", func(t *testing.T) {
		fake := llmtest.NewQueue(t, llmtest.Text("late").After(10*time.Second))
		ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
		defer cancel()
		_, err := newClient(fake, newFakeClock(), 5).Chat(ctx, userRequest("hi"))
		var e *llm.Error
		if !errors.As(err, &e) || e.Type != llm.TypeTimeout || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("error = %v, want a timeout *llm.Error", err)
		}
		if fake.Calls() != 1 {
			t.Errorf("calls = %d, want 1", fake.Calls())
		}
	})
	t.Run("attempt timeout is retried", func(t *testing.T) {
		fake := llmtest.NewQueue(t, llmtest.Text("late").After(10*time.Second), llmtest.Text("ok"))
		clock := newFakeClock()
		c := llm.New(llm.Config{BaseURL: fake.URL(), Model: "m", MaxRetries: 1, Timeout: 50 * time.Millisecond},
			nil, llm.WithClock(clock))
		resp, err := c.Chat(t.Context(), userRequest("hi"))
		if err != nil {
			t.Fatalf("Chat: %v", err)
		}
		if resp.Choices[0].Message.Content != "ok" || fake.Calls() != 2 {
			t.Errorf("content %q after %d calls", resp.Choices[0].Message.Content, fake.Calls())
		}
	})
}

func TestChatTransportError(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there any more
	clock := newFakeClock()
	c := llm.New(llm.Config{BaseURL: "http://" + addr + "/v1", Model: "m", MaxRetries: 2}, nil, llm.WithClock(clock))
	_, err = c.Chat(t.Context(), userRequest("hi"))
	var e *llm.Error
	if !errors.As(err, &e) || e.Type != llm.TypeTransport || !e.Retryable || e.Attempts != 3 {
		t.Fatalf("error = %#v, want transport after 3 attempts", err)
	}
}

func TestChatRejectedByFake(t *testing.T) {
	// A tool message answering no tool call is rejected as OpenAI does.
	fake := llmtest.NewQueue(t)
	req := userRequest("hi")
	req.Messages = append(req.Messages, openai.ChatCompletionMessage{Role: "tool", ToolCallID: "call_x", Content: "x"})
	_, err := newClient(fake, newFakeClock(), 3).Chat(t.Context(), req)
	var e *llm.Error
	if !errors.As(err, &e) || e.Status != 400 || !strings.Contains(e.Message, "must be a response to a preceding message") {
		t.Fatalf("error = %v, want OpenAI's 400 about tool messages", err)
	}
}

func TestAzure(t *testing.T) {
	fake := llmtest.NewQueue(t, llmtest.Text("ok"))
	base := strings.TrimSuffix(fake.URL(), "/v1")
	c := llm.New(llm.Config{BaseURL: base, APIKey: "azkey", Model: "gpt-4o", Azure: true, APIVersion: "2024-10-21"}, nil)
	_, err := c.Chat(t.Context(), userRequest("hi"))
	// The fake serves OpenAI's routes only, so Azure's route is a 404 whose
	// request tells the URL and headers the client used.
	var e *llm.Error
	if !errors.As(err, &e) || e.Type != llm.TypeNotFound {
		t.Fatalf("error = %v, want not_found from the fake", err)
	}
	if !strings.Contains(e.Message, "POST /openai/deployments/gpt-4o/chat/completions") {
		t.Errorf("message = %q, want the Azure deployment route", e.Message)
	}
}

func TestCost(t *testing.T) {
	prices := map[string]config.Price{
		"gpt-4o":      {InputPerMillion: 2.5, OutputPerMillion: 10},
		"gpt-4o-mini": {InputPerMillion: 0.15, OutputPerMillion: 0.6},
	}
	u := openai.Usage{PromptTokens: 1_000_000, CompletionTokens: 500_000, TotalTokens: 1_500_000}
	tests := []struct {
		model string
		want  review.CostInfo
	}{
		{"gpt-4o", review.CostInfo{InputTokens: 1_000_000, OutputTokens: 500_000, TotalCost: 7.5}},
		{"gpt-4o-2024-08-06", review.CostInfo{InputTokens: 1_000_000, OutputTokens: 500_000, TotalCost: 7.5}},
		{"gpt-4o-mini-2024-07-18", review.CostInfo{InputTokens: 1_000_000, OutputTokens: 500_000, TotalCost: 0.45}},
		{"llama3.1", review.CostInfo{InputTokens: 1_000_000, OutputTokens: 500_000}},
	}
	for _, tt := range tests {
		got := llm.Cost(prices, tt.model, u)
		if d := cmp.Diff(tt.want, got, cmpopts.EquateApprox(0, 1e-9)); d != "" {
			t.Errorf("Cost(%s) (-want +got):\n%s", tt.model, d)
		}
	}
}
