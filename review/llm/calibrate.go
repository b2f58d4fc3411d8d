package llm

import (
	"context"
	"errors"
	"regexp"
	"strconv"

	openai "github.com/sashabaranov/go-openai"

	"github.com/mergeguard/mergeguard/review/budget"
)

// Chatter sends one chat completion; *Client implements it.
type Chatter interface {
	Chat(ctx context.Context, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error)
}

// Calibrator is a chat client that teaches the token corrections of models
// without a known tokenizer (budget.Corrections): after each call to such
// a model it compares the prompt tokens the server reports with
// o200k_base's count of the request, counted as the agents count it and
// split into its ASCII and non-ASCII parts (budget.SplitRequest), and
// learns what that teaches of each part's ratio (budget.Correction.Teach);
// so does a context_length_exceeded error that states the server's count.
// Calls to OpenAI models pass through untouched. It is safe for concurrent
// use.
type Calibrator struct {
	next  Chatter
	model string // the model of requests that name none
	base  budget.SplitCounter
	corr  *budget.Corrections
	store budget.CorrectionStore
	// onError is told when the store fails; what was learned is kept in
	// memory all the same.
	onError func(error)
}

// Calibration is what a Calibrator needs.
type Calibration struct {
	// Model is the model of requests that name none.
	Model string
	// Base counts o200k_base's tokens (budget.Tokenizers.Base): share the
	// process's tokenizers rather than loading the vocabulary again, and
	// the counts too (a budget.Memo under the pipeline's corrected
	// counter too): an agent sends its system and user messages again at
	// every turn.
	Base budget.SplitCounter
	// Corrections receives what is learned.
	Corrections *budget.Corrections
	// Store, when not nil, keeps it too; what it answers, other replicas'
	// learning included, is merged back.
	Store budget.CorrectionStore
	// OnError, which may be nil, is told of the store's failures.
	OnError func(error)
}

// NewCalibrator wraps next.
func NewCalibrator(next Chatter, cal Calibration) *Calibrator {
	return &Calibrator{
		next: next, model: cal.Model, corr: cal.Corrections, store: cal.Store, onError: cal.OnError,
		base: cal.Base,
	}
}

// Chat sends req through the wrapped client, then learns from the answer.
func (c *Calibrator) Chat(ctx context.Context, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
	resp, err := c.next.Chat(ctx, req)
	model := req.Model
	if model == "" {
		model = c.model
	}
	if budget.EncodingForModel(model) != "" {
		return resp, err
	}
	server := resp.Usage.PromptTokens
	if err != nil {
		server = 0
		var e *Error
		if errors.As(err, &e) && e.Type == TypeContextLength {
			server = PromptTokensOf(e.Message)
		}
	}
	if server > 0 {
		c.learn(ctx, model, server, budget.SplitRequest(c.base, req))
	}
	return resp, err
}

// learn records what one prompt teaches, in memory then in the store.
func (c *Calibrator) learn(ctx context.Context, model string, server int, counted budget.Split) {
	smp, ok := c.corr.Get(model).Teach(server, counted)
	if !ok {
		return
	}
	c.corr.Observe(model, smp)
	if c.store == nil {
		return
	}
	stored, err := c.store.ObserveRatio(context.WithoutCancel(ctx), model, smp)
	if err != nil {
		if c.onError != nil {
			c.onError(err)
		}
		return
	}
	c.corr.Learn(stored)
}

// overflowCounts find the prompt's size in the message of a
// context_length_exceeded error: OpenAI's ("your messages resulted in N
// tokens"), vLLM's and OpenAI's older one ("you requested N tokens (M in
// the messages, ..."), vLLM's newer one ("your request has M input
// tokens").
var overflowCounts = []*regexp.Regexp{
	regexp.MustCompile(`(\d+) in the messages`),
	regexp.MustCompile(`messages resulted in (\d+) tokens`),
	regexp.MustCompile(`request has (\d+) input tokens`),
}

// PromptTokensOf returns the prompt tokens a context_length_exceeded
// message states, or 0.
func PromptTokensOf(message string) int {
	for _, re := range overflowCounts {
		if m := re.FindStringSubmatch(message); m != nil {
			if n, err := strconv.Atoi(m[1]); err == nil {
				return n
			}
		}
	}
	return 0
}
