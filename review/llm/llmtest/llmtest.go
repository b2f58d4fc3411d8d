// Package llmtest is a fake OpenAI-compatible chat-completions server for
// tests. It speaks the real wire format at /v1/chat/completions (and
// /chat/completions): it decodes the request JSON a client sends, rejects
// what OpenAI rejects (missing model, tool messages answering no tool call,
// unanswered tool calls, strict schemas that are not strict), records every
// request, and answers from a script with bodies shaped like OpenAI's:
// completions, tool calls, usage, and error bodies
// {"error":{"message","type","param","code"}}.
//
// It does not stream: a request with "stream": true is answered 400.
package llmtest

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mergeguard/mergeguard/review/budget"
)

// Server is a running fake. It is closed when the test ends.
type Server struct {
	t       testing.TB
	srv     *httptest.Server
	answer  func(Request) Response
	latency time.Duration
	// count counts a text's tokens for the usage and the context limit;
	// nil counts a token per 4 bytes.
	count func(string) int
	// contextTokens, when not 0, is the model's context: a request whose
	// prompt and completion tokens exceed it is refused.
	contextTokens int

	mu        sync.Mutex
	requests  []Request
	ids       int
	overflows int
}

// Option adjusts a Server.
type Option func(*Server)

// WithLatency delays every answer by d (on top of a response's own delay),
// as a real model would; for benchmarks of concurrent pipelines.
func WithLatency(d time.Duration) Option { return func(s *Server) { s.latency = d } }

// WithTokenizer counts the prompt tokens (of the usage it reports and
// against WithContext's limit) with count instead of a token per 4 bytes:
// a model whose tokenizer differs from the client's.
func WithTokenizer(count func(text string) int) Option { return func(s *Server) { s.count = count } }

// WithContext makes the model's context tokens long: as OpenAI does, a
// request whose prompt tokens plus max_completion_tokens (or max_tokens)
// exceed it is answered 400 with code context_length_exceeded and a
// message stating both numbers ("This model's maximum context length is
// N tokens. However, you requested T tokens (P in the messages, C in the
// completion)...").
func WithContext(tokens int) Option { return func(s *Server) { s.contextTokens = tokens } }

// New starts a fake that answers each valid chat-completion request with
// answer's response. answer may be called concurrently.
func New(t testing.TB, answer func(Request) Response, opts ...Option) *Server {
	t.Helper()
	s := &Server{t: t, answer: answer}
	for _, o := range opts {
		o(s)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/chat/completions", s.serveChat)
	mux.HandleFunc("/chat/completions", s.serveChat)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound,
			fmt.Sprintf("Invalid URL (%s %s)", r.Method, r.URL.Path))
	})
	s.srv = httptest.NewServer(mux)
	t.Cleanup(s.srv.Close)
	return s
}

// NewQueue starts a fake that answers requests with responses in order. A
// request past the end fails the test and is answered 500.
func NewQueue(t testing.TB, responses ...Response) *Server {
	t.Helper()
	var mu sync.Mutex
	next := 0
	return New(t, func(req Request) Response {
		mu.Lock()
		defer mu.Unlock()
		if next >= len(responses) {
			t.Errorf("llmtest: request %d beyond the %d scripted responses (last message: %.200q)",
				next+1, len(responses), req.LastMessage().Content)
			next++
			return APIError(http.StatusInternalServerError, "server_error", "", "llmtest: script exhausted")
		}
		next++
		return responses[next-1]
	})
}

// URL is the base URL to configure a client with; it ends in /v1.
func (s *Server) URL() string { return s.srv.URL + "/v1" }

// Requests returns the chat-completion requests received so far, in order,
// including those the fake rejected as invalid.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Calls is how many chat-completion requests were received.
func (s *Server) Calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.requests)
}

func (s *Server) serveChat(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeError(w, http.StatusMethodNotAllowed,
			fmt.Sprintf("Invalid method for URL (%s %s)", r.Method, r.URL.Path))
		return
	}
	req, status, msg := decodeRequest(r)
	s.mu.Lock()
	s.requests = append(s.requests, req)
	s.mu.Unlock()
	if status != 0 {
		writeError(w, status, msg)
		return
	}
	if msg := validate(req); msg != "" {
		writeError(w, http.StatusBadRequest, msg)
		return
	}

	prompt := s.promptTokens(req)
	if msg := s.overflow(req, prompt); msg != "" {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(errorBodyParam("invalid_request_error", "context_length_exceeded", "messages", msg)))
		return
	}
	resp := s.answer(req)
	if !sleep(r, s.latency+resp.Delay) {
		return // the client went away
	}
	for k, vs := range resp.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	if resp.Body != "" || resp.Status >= 300 {
		ct := resp.ContentType
		if ct == "" {
			ct = "application/json"
		}
		w.Header().Set("Content-Type", ct)
		w.WriteHeader(cmp.Or(resp.Status, http.StatusOK))
		_, _ = w.Write([]byte(resp.Body))
		return
	}
	s.mu.Lock()
	s.ids++
	id := s.ids
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(cmp.Or(resp.Status, http.StatusOK))
	_ = json.NewEncoder(w).Encode(completion(id, req, resp, prompt))
}

// Overflows is how many requests were refused for exceeding the context
// (WithContext).
func (s *Server) Overflows() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.overflows
}

// overflow returns the error message of a request of prompt tokens too
// long for the context, or "".
func (s *Server) overflow(req Request, prompt int) string {
	if s.contextTokens <= 0 {
		return ""
	}
	out := cmp.Or(req.MaxCompletionTokens, req.MaxTokens)
	if prompt+out <= s.contextTokens {
		return ""
	}
	s.mu.Lock()
	s.overflows++
	s.mu.Unlock()
	return fmt.Sprintf("This model's maximum context length is %d tokens. However, you requested %d tokens "+
		"(%d in the messages, %d in the completion). Please reduce the length of the messages or completion.",
		s.contextTokens, prompt+out, prompt, out)
}

// sleep waits d unless the request is canceled first; it reports whether
// the request is still wanted.
func sleep(r *http.Request, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	}
}

// writeError answers with OpenAI's error body.
func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(errorBody("invalid_request_error", "", msg)))
}

func errorBody(typ, code, msg string) string { return errorBodyParam(typ, code, "", msg) }

func errorBodyParam(typ, code, param, msg string) string {
	var c, p any
	if code != "" {
		c = code
	}
	if param != "" {
		p = param
	}
	b, _ := json.Marshal(map[string]any{"error": map[string]any{
		"message": msg, "type": typ, "param": p, "code": c,
	}})
	return string(b)
}

// PromptTokens is how many prompt tokens the fake counts in r (the usage
// it reports, and what WithContext compares with the context).
func (s *Server) PromptTokens(r Request) int { return s.promptTokens(r) }

// promptTokens counts a request's prompt tokens as a chat template would:
// each message's content, name and tool calls with 4 tokens of framing,
// 3 to prime the reply, the tools' definitions and, with a tokenizer set,
// the response format's schema.
func (s *Server) promptTokens(req Request) int {
	count := s.count
	if count == nil {
		count = budget.Estimate{}.Count
	}
	n := 3
	for _, m := range req.Messages {
		n += 4 + count(m.Content) + count(m.Name) + count(m.ToolCallID)
		for _, c := range m.ToolCalls {
			n += count(c.Function.Name) + count(c.Function.Arguments)
		}
	}
	for _, t := range req.Tools {
		n += count(t.Function.Name) + count(t.Function.Description) + count(string(t.Function.Parameters))
	}
	if s.count != nil && req.ResponseFormat != nil && req.ResponseFormat.JSONSchema != nil {
		n += count(string(req.ResponseFormat.JSONSchema.Schema))
	}
	return n
}

// LastMessage is the request's last message, or a zero Message.
func (r Request) LastMessage() Message {
	if len(r.Messages) == 0 {
		return Message{}
	}
	return r.Messages[len(r.Messages)-1]
}

// ToolResults returns the tool messages of the request, by tool_call_id.
func (r Request) ToolResults() map[string]string {
	out := map[string]string{}
	for _, m := range r.Messages {
		if m.Role == "tool" {
			out[m.ToolCallID] = m.Content
		}
	}
	return out
}

// HasTool reports whether the request offers a function tool named name.
func (r Request) HasTool(name string) bool {
	for _, t := range r.Tools {
		if t.Function.Name == name {
			return true
		}
	}
	return false
}

// joinText joins the text parts of array content.
func joinText(parts []contentPart) string {
	var texts []string
	for _, p := range parts {
		if p.Type == "text" {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n")
}
