package llmtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/mergeguard/mergeguard/review/budget"
)

// Response is what the fake answers to one request. The zero Status is 200.
// When Body is set, or Status is not a success, Body is sent verbatim with
// ContentType (default application/json); otherwise a chat completion is
// built from Content, ToolCalls, FinishReason and Usage.
type Response struct {
	Status      int
	Header      http.Header
	Body        string
	ContentType string
	// Delay holds the answer back; a client that gives up first gets
	// nothing.
	Delay time.Duration

	Content      string
	ToolCalls    []ToolCall
	FinishReason string // default "tool_calls" with tool calls, else "stop"
	// Usage defaults to an estimate of 4 bytes a token.
	Usage *Usage
	// Model defaults to the request's model.
	Model string
}

// Usage is a completion's token counts.
type Usage struct {
	PromptTokens     int
	CompletionTokens int
}

// Text answers with an assistant message.
func Text(content string) Response { return Response{Content: content} }

// JSON answers with v marshalled as the assistant message's content, as a
// model following response_format json_schema would. A string or
// json.RawMessage is sent as is. A value that does not marshal (a bug in
// the test) is answered 500 with the reason.
func JSON(v any) Response {
	switch x := v.(type) {
	case string:
		return Response{Content: x}
	case json.RawMessage:
		return Response{Content: string(x)}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return APIError(http.StatusInternalServerError, "server_error", "", "llmtest.JSON: "+err.Error())
	}
	return Response{Content: string(b)}
}

// ToolCalls answers with an assistant message calling tools.
func ToolCalls(calls ...ToolCall) Response { return Response{ToolCalls: calls} }

// Call builds a function call. args is marshalled to the arguments' JSON
// text, except a string, which is sent as is (to send malformed JSON). A
// value that does not marshal (a bug in the test) gives arguments naming
// the reason, which are not JSON.
func Call(id, name string, args any) ToolCall {
	text, ok := args.(string)
	if !ok {
		b, err := json.Marshal(args)
		if err != nil {
			b = []byte("llmtest.Call: " + err.Error())
		}
		text = string(b)
	}
	return ToolCall{ID: id, Type: "function", Function: FunctionCall{Name: name, Arguments: text}}
}

// APIError answers status with OpenAI's error body. code may be empty
// (sent as null).
func APIError(status int, typ, code, message string) Response {
	return Response{Status: status, Body: errorBody(typ, code, message)}
}

// RateLimited answers 429 as OpenAI does when a tokens-per-minute limit is
// hit: with OpenAI's rate-limit headers, the tokens limit exhausted
// (x-ratelimit-remaining-tokens 0, x-ratelimit-reset-tokens 240ms), and the
// Retry-After header set to retryAfter (seconds or an HTTP date) unless it
// is empty.
func RateLimited(retryAfter string) Response {
	r := APIError(http.StatusTooManyRequests, "tokens", "rate_limit_exceeded",
		"Rate limit reached for gpt-4o in organization org-fake on tokens per min (TPM): "+
			"Limit 30000, Used 30000, Requested 120. Please try again in 240ms.")
	r.Header = rateLimitHeaders("499", "0", "240ms")
	if retryAfter != "" {
		r.Header.Set("Retry-After", retryAfter)
	}
	return r
}

// ServerError answers 500 with OpenAI's body for its own failures and the
// rate-limit headers OpenAI sends on every answer: no limit is exhausted,
// yet x-ratelimit-reset-tokens names a long wait (6m0s).
func ServerError() Response {
	r := APIError(http.StatusInternalServerError, "server_error", "",
		"The server had an error while processing your request. Sorry about that!")
	r.Header = rateLimitHeaders("499", "29880", "6m0s")
	return r
}

// rateLimitHeaders are OpenAI's x-ratelimit-* headers for a limit of 500
// requests and 30000 tokens a minute.
func rateLimitHeaders(remainingRequests, remainingTokens, resetTokens string) http.Header {
	return http.Header{
		"X-Ratelimit-Limit-Requests":     {"500"},
		"X-Ratelimit-Remaining-Requests": {remainingRequests},
		"X-Ratelimit-Reset-Requests":     {"120ms"},
		"X-Ratelimit-Limit-Tokens":       {"30000"},
		"X-Ratelimit-Remaining-Tokens":   {remainingTokens},
		"X-Ratelimit-Reset-Tokens":       {resetTokens},
	}
}

// Unavailable answers 503 with a plain-text body, as proxies and
// overloaded self-hosted servers do.
func Unavailable() Response {
	return Response{Status: http.StatusServiceUnavailable, ContentType: "text/plain; charset=utf-8",
		Body: "upstream connect error or disconnect/reset before headers. reset reason: overflow"}
}

// Malformed answers 200 with a body that is not JSON, as a misrouted proxy
// might.
func Malformed() Response {
	return Response{ContentType: "application/json", Body: "<html><body>Bad Gateway</body></html>"}
}

// WithUsage sets the token counts of the answer.
func (r Response) WithUsage(prompt, completion int) Response {
	r.Usage = &Usage{PromptTokens: prompt, CompletionTokens: completion}
	return r
}

// After delays the answer by d.
func (r Response) After(d time.Duration) Response {
	r.Delay = d
	return r
}

// WithHeader sets a response header, replacing any value it had.
func (r Response) WithHeader(key, value string) Response {
	h := r.Header.Clone()
	if h == nil {
		h = http.Header{}
	}
	h.Set(key, value)
	r.Header = h
	return r
}

// WithFinishReason sets the choice's finish_reason, such as "length".
func (r Response) WithFinishReason(reason string) Response {
	r.FinishReason = reason
	return r
}

// The wire format of a chat completion.
type (
	wireCompletion struct {
		ID                string       `json:"id"`
		Object            string       `json:"object"`
		Created           int64        `json:"created"`
		Model             string       `json:"model"`
		Choices           []wireChoice `json:"choices"`
		Usage             wireUsage    `json:"usage"`
		SystemFingerprint string       `json:"system_fingerprint"`
	}
	wireChoice struct {
		Index        int        `json:"index"`
		Message      wireAnswer `json:"message"`
		Logprobs     any        `json:"logprobs"`
		FinishReason string     `json:"finish_reason"`
	}
	wireAnswer struct {
		Role      string     `json:"role"`
		Content   *string    `json:"content"`
		Refusal   *string    `json:"refusal"`
		ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	}
	wireUsage struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
		TotalTokens      int `json:"total_tokens"`
	}
)

// completion builds the body of a successful answer.
func completion(id int, req Request, r Response, promptTokens int) wireCompletion {
	msg := wireAnswer{Role: "assistant", ToolCalls: slices.Clone(r.ToolCalls)}
	if r.Content != "" || len(r.ToolCalls) == 0 {
		msg.Content = &r.Content
	}
	for i := range msg.ToolCalls {
		if msg.ToolCalls[i].ID == "" {
			msg.ToolCalls[i].ID = fmt.Sprintf("call_%d_%d", id, i)
		}
		if msg.ToolCalls[i].Type == "" {
			msg.ToolCalls[i].Type = "function"
		}
	}
	finish := r.FinishReason
	if finish == "" {
		finish = "stop"
		if len(r.ToolCalls) > 0 {
			finish = "tool_calls"
		}
	}
	u := r.Usage
	if u == nil {
		count := budget.Estimate{}.Count
		out := count(r.Content)
		for _, c := range r.ToolCalls {
			out += count(c.Function.Name) + count(c.Function.Arguments)
		}
		u = &Usage{PromptTokens: promptTokens, CompletionTokens: max(out, 1)}
	}
	model := r.Model
	if model == "" {
		model = req.Model
	}
	return wireCompletion{
		ID:      fmt.Sprintf("chatcmpl-fake%06d", id),
		Object:  "chat.completion",
		Created: time.Now().Unix(),
		Model:   model,
		Choices: []wireChoice{{Index: 0, Message: msg, FinishReason: finish}},
		Usage: wireUsage{
			PromptTokens:     u.PromptTokens,
			CompletionTokens: u.CompletionTokens,
			TotalTokens:      u.PromptTokens + u.CompletionTokens,
		},
		SystemFingerprint: "fp_llmtest",
	}
}
