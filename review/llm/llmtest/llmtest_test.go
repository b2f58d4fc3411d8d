package llmtest_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mergeguard/mergeguard/review/llm/llmtest"
)

func post(t *testing.T, url, body string) (int, http.Header, map[string]any) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("body %q is not JSON: %v", b, err)
	}
	return resp.StatusCode, resp.Header, v
}

func TestCompletionWireFormat(t *testing.T) {
	fake := llmtest.NewQueue(t,
		llmtest.ToolCalls(llmtest.Call("call_1", "list_files", map[string]string{"directory": "."})).WithUsage(10, 5),
		llmtest.Text("hello"),
	)
	status, _, got := post(t, fake.URL()+"/chat/completions",
		`{"model":"gpt-4o","messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}`)
	if status != 200 {
		t.Fatalf("status %d: %v", status, got)
	}
	delete(got, "created")
	want := map[string]any{
		"id": "chatcmpl-fake000001", "object": "chat.completion", "model": "gpt-4o", "system_fingerprint": "fp_llmtest",
		"choices": []any{map[string]any{
			"index": 0.0, "logprobs": nil, "finish_reason": "tool_calls",
			"message": map[string]any{"role": "assistant", "content": nil, "refusal": nil, "tool_calls": []any{
				map[string]any{"id": "call_1", "type": "function",
					"function": map[string]any{"name": "list_files", "arguments": `{"directory":"."}`}},
			}},
		}},
		"usage": map[string]any{"prompt_tokens": 10.0, "completion_tokens": 5.0, "total_tokens": 15.0},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("completion (-want +got):\n%s", d)
	}

	// The second request goes to the route without /v1; its usage is estimated.
	status, _, got = post(t, strings.TrimSuffix(fake.URL(), "/v1")+"/chat/completions",
		`{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}]}`)
	if status != 200 {
		t.Fatalf("status %d: %v", status, got)
	}
	msg := got["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)
	if msg["content"] != "hello" {
		t.Errorf("content = %v", msg["content"])
	}
	if u := got["usage"].(map[string]any); u["prompt_tokens"].(float64) <= 0 || u["completion_tokens"].(float64) <= 0 {
		t.Errorf("estimated usage = %v", u)
	}
	reqs := fake.Requests()
	if len(reqs) != 2 || reqs[0].Messages[0].Content != "hi" || reqs[0].Path != "/v1/chat/completions" ||
		reqs[1].Path != "/chat/completions" {
		t.Errorf("recorded requests = %+v", reqs)
	}
}

func TestRejectsWhatOpenAIRejects(t *testing.T) {
	tool := func(params string) string {
		return `{"model":"m","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":` +
			`{"name":"f","strict":true,"parameters":` + params + `}}]}`
	}
	tests := []struct {
		name, body, message string
	}{
		{"not JSON", `{"model":`, "We could not parse the JSON body"},
		{"no model", `{"messages":[{"role":"user","content":"x"}]}`, "you must provide a model parameter"},
		{"no messages", `{"model":"m","messages":[]}`, "too short"},
		{"tool message without call", `{"model":"m","messages":[{"role":"user","content":"x"},` +
			`{"role":"tool","tool_call_id":"c1","content":"r"}]}`, "must be a response to a preceding message"},
		{"unanswered tool call", `{"model":"m","messages":[{"role":"user","content":"x"},` +
			`{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},` +
			`{"role":"user","content":"y"}]}`, "did not have response messages: c1"},
		{"tool message without content", `{"model":"m","messages":[{"role":"user","content":"x"},` +
			`{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},` +
			`{"role":"tool","tool_call_id":"c1"}]}`, "expected a string, got null"},
		{"strict optional property", tool(`{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"}},` +
			`"required":["a"],"additionalProperties":false}`), "Missing 'b'"},
		{"strict without additionalProperties", tool(`{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`),
			"'additionalProperties' is required"},
		{"strict nested in anyOf", tool(`{"type":"object","properties":{"a":{"anyOf":[{"type":"object",` +
			`"properties":{"x":{"type":"string"}},"additionalProperties":false},{"type":"null"}]}},` +
			`"required":["a"],"additionalProperties":false}`), "context=('properties', 'a', 'anyOf', 0)"},
		{"bad function name", `{"model":"m","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function",` +
			`"function":{"name":"read file"}}]}`, "does not match pattern"},
		{"streaming", `{"model":"m","stream":true,"messages":[{"role":"user","content":"x"}]}`, "streaming"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := llmtest.NewQueue(t) // no answer may be used
			status, _, got := post(t, fake.URL()+"/chat/completions", tt.body)
			if status != http.StatusBadRequest {
				t.Errorf("status = %d, want 400", status)
			}
			e, _ := got["error"].(map[string]any)
			if msg, _ := e["message"].(string); !strings.Contains(msg, tt.message) {
				t.Errorf("error = %v, want message containing %q", got, tt.message)
			}
			if e["type"] != "invalid_request_error" {
				t.Errorf("error type = %v", e["type"])
			}
			if fake.Calls() != 1 {
				t.Errorf("recorded %d requests, want 1", fake.Calls())
			}
		})
	}
}

func TestStrictSchemaAccepted(t *testing.T) {
	fake := llmtest.NewQueue(t, llmtest.Text("ok"))
	body := `{"model":"m","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":` +
		`{"name":"f","strict":true,"parameters":{"type":"object","properties":{"a":{"type":"string"},` +
		`"b":{"anyOf":[{"type":"integer"},{"type":"null"}]}},"required":["a","b"],"additionalProperties":false}}}],` +
		`"response_format":{"type":"json_schema","json_schema":{"name":"r","strict":true,"schema":{"type":"object",` +
		`"properties":{"items":{"type":"array","items":{"type":"object","properties":{"x":{"type":"string"}},` +
		`"required":["x"],"additionalProperties":false}}},"required":["items"],"additionalProperties":false}}}}`
	if status, _, got := post(t, fake.URL()+"/chat/completions", body); status != 200 {
		t.Fatalf("status %d: %v", status, got)
	}
	req := fake.Requests()[0]
	if req.ResponseFormat == nil || req.ResponseFormat.JSONSchema.Name != "r" || !req.Tools[0].Function.Strict {
		t.Errorf("decoded request = %+v", req)
	}
}

func TestErrorsAndRoutes(t *testing.T) {
	fake := llmtest.NewQueue(t, llmtest.RateLimited("2"))
	status, h, got := post(t, fake.URL()+"/chat/completions", `{"model":"m","messages":[{"role":"user","content":"x"}]}`)
	if status != 429 || h.Get("Retry-After") != "2" {
		t.Errorf("status %d Retry-After %q", status, h.Get("Retry-After"))
	}
	want := map[string]any{"error": map[string]any{"message": got["error"].(map[string]any)["message"],
		"type": "tokens", "param": nil, "code": "rate_limit_exceeded"}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("error body (-want +got):\n%s", d)
	}

	status, _, got = post(t, fake.URL()+"/embeddings", `{}`)
	if status != 404 || !strings.Contains(got["error"].(map[string]any)["message"].(string), "Invalid URL (POST /v1/embeddings)") {
		t.Errorf("unknown route: %d %v", status, got)
	}
}

func TestLatency(t *testing.T) {
	fake := llmtest.New(t, func(llmtest.Request) llmtest.Response { return llmtest.Text("ok") },
		llmtest.WithLatency(30*time.Millisecond))
	start := time.Now()
	post(t, fake.URL()+"/chat/completions", `{"model":"m","messages":[{"role":"user","content":"x"}]}`)
	if d := time.Since(start); d < 30*time.Millisecond {
		t.Errorf("answered after %v, want at least the 30ms latency", d)
	}
}
