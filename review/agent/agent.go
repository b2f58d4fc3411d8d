// Package agent runs one LLM agent of the review pipeline: a chat with a
// tool-calling loop bounded in turns, time and context tokens, ending in the
// structured JSON answer of Output. Every run ends as a review.AgentResult:
// success, truncated (turn limit reached; partial findings), error or
// timeout. The package never fails a review: the caller decides what a
// failed agent means.
package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/budget"
	"github.com/mergeguard/mergeguard/review/llm"
	"github.com/mergeguard/mergeguard/review/text"
)

// ChatClient sends one chat completion request. The engine's llm.Client
// (with retries and backoff) implements it.
type ChatClient interface {
	Chat(ctx context.Context, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error)
}

// Toolbox answers the model's tool calls. The engine's tools.Toolbox
// implements it.
type Toolbox interface {
	// Definitions lists the tools offered to the model.
	Definitions() []openai.Tool
	// Call runs a tool with its JSON arguments and returns the text given
	// back to the model. An error is shown to the model as the tool's answer.
	Call(ctx context.Context, name, args string) (string, error)
}

// Counter estimates the number of tokens of a text for the model in use.
type Counter = budget.Counter

// ResponseFormat selects how the final JSON answer is requested.
type ResponseFormat string

// Response formats. Whatever the format, the reply is also accepted as plain
// JSON or a fenced JSON block.
const (
	// FormatJSONSchema sends response_format json_schema (strict), for
	// models with structured outputs.
	FormatJSONSchema ResponseFormat = "json_schema"
	// FormatJSONObject sends response_format json_object.
	FormatJSONObject ResponseFormat = "json_object"
	// FormatText sends no response_format; the prompt asks for JSON.
	FormatText ResponseFormat = "text"
)

// Error types of an AgentResult with status error, besides the llm.Type*
// types of a failed chat call.
const (
	ErrorTypeLLM             = "llm_error"
	ErrorTypeInvalidOutput   = "invalid_output"
	ErrorTypeContextOverflow = "context_overflow"
	ErrorTypeCanceled        = "canceled"
)

// Config is what every agent run of a review shares.
type Config struct {
	Client ChatClient
	Model  string
	// ContextTokens is the model's context window. No request's prompt is
	// allowed to exceed ContextTokens - MaxOutputTokens, counted with
	// Counter.
	ContextTokens   int
	MaxOutputTokens int
	// MaxTurns bounds the chat calls of a run (not counting the one retry
	// of an unparsable answer). The last turn is sent without tools.
	MaxTurns int
	// Timeout bounds a whole run; zero means none.
	Timeout        time.Duration
	ResponseFormat ResponseFormat
	// Temperature is the sampling temperature; zero leaves the server's
	// default (go-openai cannot send 0).
	Temperature float32
	Counter     Counter
	// Cost prices the usage of one call of model (as the server named it);
	// nil counts tokens only.
	Cost func(model string, usage openai.Usage) review.CostInfo
}

// Task is one agent run.
type Task struct {
	Name   string // agent name, e.g. "reviewer:chunk-1"
	Stage  string
	System string
	User   string
	// Tools may be nil: the model then answers from the prompt alone.
	Tools Toolbox
	// Emit, if set, receives a tool.called event per tool call.
	Emit func(t review.EventType, data map[string]any)
	// Answer, when set, is the final answer the task ends with instead of
	// a review's Output.
	Answer *Answer
}

// Answer is a final answer other than a review's: its JSON schema (strict
// mode ready, sent as response_format json_schema) and its parser, which
// keeps what it parsed. A parse error makes the model answer again once.
type Answer struct {
	Name   string
	Schema string
	Parse  func(content string) error
}

// Result is the outcome of a run: the agent result (Issues left for the
// caller to set after verification), the parsed answer and counters.
type Result struct {
	review.AgentResult
	Output    Output
	LLMCalls  int
	ToolCalls int
	// MaxPromptTokens is the largest prompt sent, as Counter counts it.
	MaxPromptTokens int
}

// Texts the model reads when the loop steers it.
const (
	lastTurnNote  = "Tool calls are no longer available (turn limit reached). Reply now with your final answer: only the JSON object described in the system prompt."
	budgetNote    = "The context budget is used up, so tool calls are no longer available. Reply now with your final answer: only the JSON object described in the system prompt."
	droppedNote   = "(Earlier tool calls and their results were removed to stay within the context budget.)"
	retryTemplate = "Your reply could not be used: %v. Reply again with only the JSON object described in the system prompt, no prose."
	// resultReserve keeps room after a tool result for the steering notes
	// and a parse-retry message.
	resultReserve = 300
	// minToolResult is the smallest tool answer worth sending; below it the
	// budget counts as used up.
	minToolResult = 64
)

// Run runs task to its end and never returns an error: failures are in the
// result's status.
func Run(ctx context.Context, cfg Config, task Task) Result {
	start := time.Now()
	r := run(ctx, cfg, task)
	r.Agent, r.Stage = task.Name, task.Stage
	r.ElapsedMS = time.Since(start).Milliseconds()
	r.Issues = len(r.Output.Findings)
	return r
}

func run(parent context.Context, cfg Config, task Task) Result {
	ctx := parent
	if cfg.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(parent, cfg.Timeout)
		defer cancel()
	}
	c := conversation{cfg: cfg, msgs: []openai.ChatCompletionMessage{
		{Role: openai.ChatMessageRoleSystem, Content: task.System},
		{Role: openai.ChatMessageRoleUser, Content: task.User},
	}}
	var res Result
	fail := func(status review.AgentStatus, typ string, err error) Result {
		res.Status = status
		if status == review.AgentTimeout {
			res.TimeoutSeconds = cfg.Timeout.Seconds()
			return res
		}
		res.ErrorType, res.Error = typ, err.Error()
		return res
	}
	// stop is the result of a run whose context is done: canceled with
	// the review, or timed out.
	stop := func() Result {
		if parent.Err() != nil {
			return fail(review.AgentError, ErrorTypeCanceled, fmt.Errorf("review canceled: %w", parent.Err()))
		}
		return fail(review.AgentTimeout, "", nil)
	}
	var (
		forced, retried, exhausted, shrunk bool
	)
	for turn := 1; ; turn++ {
		if ctx.Err() != nil {
			return stop()
		}
		useTools := task.Tools != nil && turn < cfg.MaxTurns && !exhausted
		req := c.request(task, useTools)
		tokens, err := c.fit(ctx, req)
		switch {
		case ctx.Err() != nil:
			return stop()
		case err != nil:
			return fail(review.AgentError, ErrorTypeContextOverflow, err)
		}
		req.Messages = c.msgs
		res.MaxPromptTokens = max(res.MaxPromptTokens, tokens)

		resp, err := cfg.Client.Chat(ctx, req)
		res.LLMCalls++
		res.Turns++
		res.Cost = res.Cost.Add(cfg.cost(resp.Model, resp.Usage))
		switch {
		case err != nil && ctx.Err() != nil:
			return stop()
		case err != nil:
			typ := ErrorTypeLLM
			if le := (*llm.Error)(nil); errors.As(err, &le) {
				typ = le.Type
			}
			// The server counts more than the counter did (a model whose
			// tokenizer is not known; the counter has learned from the
			// error since): cut the newest tool answers and try once more.
			if typ == llm.TypeContextLength && !shrunk && c.shrinkNewest(ctx, req) {
				shrunk = true
				continue
			}
			return fail(review.AgentError, typ, err)
		case len(resp.Choices) == 0:
			return fail(review.AgentError, ErrorTypeLLM, errors.New("the model returned no choices"))
		}
		msg := resp.Choices[0].Message

		if len(msg.ToolCalls) > 0 {
			if !useTools {
				// The model asked for tools it was not offered: stop with
				// what we have (nothing parsed yet).
				res.Status = review.AgentTruncated
				return res
			}
			c.msgs = append(c.msgs, msg)
			for _, call := range msg.ToolCalls {
				res.ToolCalls++
				answer, ok := c.callTool(ctx, task, turn, call)
				exhausted = exhausted || !ok
				c.msgs = append(c.msgs, openai.ChatCompletionMessage{
					Role: openai.ChatMessageRoleTool, ToolCallID: call.ID, Content: answer,
				})
			}
			switch {
			case exhausted:
				c.note(budgetNote)
				forced = true
			case turn+1 >= cfg.MaxTurns:
				c.note(lastTurnNote)
				forced = true
			}
			continue
		}

		out, err := parse(task, msg.Content)
		if err == nil {
			res.Output = out
			res.Status = review.AgentSuccess
			if forced {
				res.Status = review.AgentTruncated
			}
			return res
		}
		if retried {
			return fail(review.AgentError, ErrorTypeInvalidOutput, fmt.Errorf("unparsable answer after one retry: %w", err))
		}
		retried = true
		msg.Content = text.ClipBytes(msg.Content, 2000)
		c.msgs = append(c.msgs, msg)
		c.note(fmt.Sprintf(retryTemplate, err))
	}
}

// conversation holds the messages of a run and keeps them within budget.
type conversation struct {
	cfg       Config
	msgs      []openai.ChatCompletionMessage
	compacted bool
}

// parse reads the model's final answer: the task's own, or a review's
// Output.
func parse(task Task, content string) (Output, error) {
	if task.Answer != nil {
		return Output{}, task.Answer.Parse(content)
	}
	return ParseOutput(content)
}

// schema is the name and JSON schema of the task's final answer.
func schema(task Task) (name, text string) {
	if task.Answer != nil {
		return task.Answer.Name, task.Answer.Schema
	}
	return "review", OutputSchema
}

// request builds the next request, with tools when useTools.
func (c *conversation) request(task Task, useTools bool) openai.ChatCompletionRequest {
	req := openai.ChatCompletionRequest{
		Model:               c.cfg.Model,
		MaxCompletionTokens: c.cfg.MaxOutputTokens,
		Temperature:         c.cfg.Temperature,
	}
	switch c.cfg.ResponseFormat {
	case FormatJSONSchema, "":
		name, text := schema(task)
		req.ResponseFormat = &openai.ChatCompletionResponseFormat{
			Type: openai.ChatCompletionResponseFormatTypeJSONSchema,
			JSONSchema: &openai.ChatCompletionResponseFormatJSONSchema{
				Name: name, Schema: json.RawMessage(text), Strict: true,
			},
		}
	case FormatJSONObject:
		req.ResponseFormat = &openai.ChatCompletionResponseFormat{Type: openai.ChatCompletionResponseFormatTypeJSONObject}
	}
	if useTools {
		req.Tools = task.Tools.Definitions()
		req.ToolChoice = "auto"
	}
	return req
}

// budget is the most prompt tokens a request may carry.
func (c *conversation) budget() int {
	return c.cfg.ContextTokens - c.cfg.MaxOutputTokens
}

// tokens counts the whole prompt of req with the conversation's messages:
// messages, tool definitions and the response schema.
func (c *conversation) tokens(req openai.ChatCompletionRequest) int {
	req.Messages = c.msgs
	return budget.CountRequest(c.cfg.Counter, req)
}

// fit makes the prompt of req fit the budget, dropping the oldest tool
// exchanges first, and returns its size. It fails when even the system and
// user messages do not fit: that request is never sent; or when ctx is done.
func (c *conversation) fit(ctx context.Context, req openai.ChatCompletionRequest) (int, error) {
	for {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		n := c.tokens(req)
		if n <= c.budget() {
			return n, nil
		}
		if !c.dropOldestExchange() {
			return n, fmt.Errorf("prompt of %d tokens exceeds the budget of %d (context %d - output %d)",
				n, c.budget(), c.cfg.ContextTokens, c.cfg.MaxOutputTokens)
		}
	}
}

// dropOldestExchange removes the oldest assistant tool-call message and its
// tool answers, leaving a note in their place once.
func (c *conversation) dropOldestExchange() bool {
	for i := 2; i < len(c.msgs); i++ {
		if len(c.msgs[i].ToolCalls) == 0 {
			continue
		}
		j := i + 1
		for j < len(c.msgs) && c.msgs[j].Role == openai.ChatMessageRoleTool {
			j++
		}
		if j == len(c.msgs) {
			return false // the newest exchange is what the model needs next
		}
		rest := append([]openai.ChatCompletionMessage{}, c.msgs[j:]...)
		c.msgs = c.msgs[:i]
		if !c.compacted {
			c.msgs = append(c.msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: droppedNote})
			c.compacted = true
		}
		c.msgs = append(c.msgs, rest...)
		return true
	}
	return false
}

// shrinkNewest cuts the answers of the newest tool calls so that the
// prompt of req is back within budget as the counter counts it now, and by
// at least a quarter: the server refused it as too long. It reports false
// when there are no tool answers to cut.
func (c *conversation) shrinkNewest(ctx context.Context, req openai.ChatCompletionRequest) bool {
	last := -1
	for i := len(c.msgs) - 1; i >= 2; i-- {
		if len(c.msgs[i].ToolCalls) > 0 {
			last = i
			break
		}
	}
	if last < 0 {
		return false
	}
	answers := 0
	for j := last + 1; j < len(c.msgs) && c.msgs[j].Role == openai.ChatMessageRoleTool; j++ {
		answers++
	}
	if answers == 0 {
		return false
	}
	excess := max(c.tokens(req)-c.budget()+resultReserve, 0)
	c.msgs = slices.Clone(c.msgs) // the refused request keeps its messages
	for j := last + 1; j <= last+answers; j++ {
		m := &c.msgs[j]
		n := c.cfg.Counter.Count(m.Content)
		limit := n - max(excess/answers+1, n/4)
		if limit < minToolResult {
			m.Content = "(tool answer omitted: the context budget is used up)"
			continue
		}
		m.Content = c.truncate(ctx, m.Content, limit)
	}
	return true
}

// note appends a user message steering the model.
func (c *conversation) note(text string) {
	c.msgs = append(c.msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: text})
}

// callTool runs one tool call and returns the answer for the model, cut to
// the room left in the budget. ok is false when no useful room was left.
func (c *conversation) callTool(ctx context.Context, task Task, turn int, call openai.ToolCall) (answer string, ok bool) {
	name, args := call.Function.Name, call.Function.Arguments
	out, err := task.Tools.Call(ctx, name, args)
	if err != nil {
		out = "error: " + err.Error()
	}
	// Room: what the next request (without tools, the worst case being the
	// current tools kept) may still carry.
	room := c.budget() - c.tokens(c.request(task, true)) - 4 - resultReserve
	ok = room >= minToolResult
	if !ok {
		out = "(tool answer omitted: the context budget is used up)"
	} else {
		out = c.truncate(ctx, out, room)
	}
	if task.Emit != nil {
		data := map[string]any{"tool": name, "args": text.ClipBytes(args, 200), "turn": turn, "result_tokens": c.cfg.Counter.Count(out)}
		if err != nil {
			data["error"] = err.Error()
		}
		task.Emit(review.EventToolCalled, data)
	}
	return out, ok
}

// truncate cuts text to at most limit tokens, marking the cut. When ctx is
// done it gives up and returns the mark alone.
func (c *conversation) truncate(ctx context.Context, s string, limit int) string {
	const mark = "\n... (cut to fit the context budget)"
	n := c.cfg.Counter.Count(s)
	if n <= limit {
		return s
	}
	keep := len(s) * limit / n
	for keep > 0 && ctx.Err() == nil {
		cut := text.PrefixBytes(s, keep) + mark
		if c.cfg.Counter.Count(cut) <= limit {
			return cut
		}
		keep = keep * 9 / 10
	}
	return strings.TrimPrefix(mark, "\n")
}

// cost prices one call's usage.
func (cfg Config) cost(model string, u openai.Usage) review.CostInfo {
	if model == "" {
		model = cfg.Model
	}
	if cfg.Cost != nil {
		return cfg.Cost(model, u)
	}
	return review.CostInfo{InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens}
}
