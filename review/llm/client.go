// Package llm is MergeGuard's client for chat completions on any
// OpenAI-compatible server (OpenAI, Azure OpenAI, vLLM, Ollama, Mistral...).
// It wraps github.com/sashabaranov/go-openai, which does not retry, with
// retries of rate limits, server errors and transport failures (exponential
// backoff with jitter, honouring Retry-After and x-ratelimit-reset-*), a
// typed *Error callers can classify, and the cost of the tokens used.
//
// The fake server for tests is in review/llm/llmtest.
package llm

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/mergeguard/mergeguard/internal/retry"
)

// Backoff defaults, overridable with WithBackoff.
const (
	defaultBaseDelay = time.Second
	defaultMaxDelay  = time.Minute
)

// Config says which server and model to talk to and how patiently.
type Config struct {
	// BaseURL is the API root including the version, such as
	// "https://api.openai.com/v1" (the default when empty),
	// "http://localhost:11434/v1" (Ollama) or "http://vllm:8000/v1".
	// For Azure it is the resource URL, "https://<resource>.openai.azure.com".
	BaseURL string
	// APIKey is sent as a bearer token (as the api-key header for Azure).
	// When empty no Authorization header is sent, as Ollama and vLLM expect.
	APIKey string
	// Model is used by requests that name no model. For Azure it is the
	// deployment name.
	Model string
	// Timeout bounds each attempt; zero leaves attempts bounded only by the
	// caller's context.
	Timeout time.Duration
	// MaxRetries is how many times a retryable failure is retried after
	// the first attempt; zero means no retry.
	MaxRetries int
	// Azure selects Azure OpenAI's URLs and api-key header.
	Azure bool
	// APIVersion is Azure's api-version query parameter; empty keeps
	// go-openai's default.
	APIVersion string
}

// Clock is the time source the retries use, replaceable in tests.
type Clock interface {
	Now() time.Time
	// Sleep waits for d or until ctx is done, returning ctx's error then.
	Sleep(ctx context.Context, d time.Duration) error
}

// Option adjusts a Client.
type Option func(*Client)

// WithClock replaces the real clock, so that tests of retries need not wait.
func WithClock(c Clock) Option { return func(cl *Client) { cl.clock = c } }

// WithBackoff sets the first retry delay (doubled at each retry) and the
// longest wait. A server asking, through Retry-After or x-ratelimit-reset-*,
// to wait longer than max is not retried: the error is returned at once.
// The defaults are 1s and 1m.
func WithBackoff(base, max time.Duration) Option {
	return func(c *Client) { c.baseDelay, c.maxDelay = base, max }
}

// Client sends chat completions with retries. It is safe for concurrent use.
type Client struct {
	api        *openai.Client
	model      string
	timeout    time.Duration
	maxRetries int
	baseDelay  time.Duration
	maxDelay   time.Duration
	clock      Clock
}

// New returns a client for cfg. httpClient may be nil, in which case a
// client without timeout is used (each attempt is bounded by cfg.Timeout).
func New(cfg Config, httpClient *http.Client, opts ...Option) *Client {
	var oc openai.ClientConfig
	if cfg.Azure {
		oc = openai.DefaultAzureConfig(cfg.APIKey, cfg.BaseURL)
		// The model name is the deployment name, used verbatim.
		oc.AzureModelMapperFunc = func(model string) string { return model }
		if cfg.APIVersion != "" {
			oc.APIVersion = cfg.APIVersion
		}
	} else {
		oc = openai.DefaultConfig(cfg.APIKey)
		if cfg.BaseURL != "" {
			oc.BaseURL = cfg.BaseURL
		}
	}
	if httpClient != nil {
		oc.HTTPClient = httpClient
	}
	c := &Client{
		api:        openai.NewClientWithConfig(oc),
		model:      cfg.Model,
		timeout:    cfg.Timeout,
		maxRetries: max(cfg.MaxRetries, 0),
		baseDelay:  defaultBaseDelay,
		maxDelay:   defaultMaxDelay,
		clock:      realClock{},
	}
	for _, o := range opts {
		o(c)
	}
	return c
}

// Chat sends one chat completion, filling in the configured model when req
// names none. Rate limits (429), server errors (5xx, 408, 409), attempt
// timeouts and transport failures are retried up to MaxRetries times; other
// failures are returned at once. Every failure is an *Error. Nothing is
// retried once ctx is done, nor when the wait would outlast ctx's deadline.
// A response without choices is an error of type invalid_response.
func (c *Client) Chat(ctx context.Context, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
	if req.Model == "" {
		req.Model = c.model
	}
	for attempt := 1; ; attempt++ {
		resp, err := c.send(ctx, req)
		if err == nil && len(resp.Choices) == 0 {
			return resp, &Error{Type: TypeInvalidResponse, Message: "response has no choices", Attempts: attempt}
		}
		if err == nil {
			return resp, nil
		}
		e := classify(ctx, err)
		e.Attempts = attempt
		if !e.Retryable || attempt > c.maxRetries {
			return resp, e
		}
		wait, ok := c.wait(attempt, e.Status, resp.Header())
		if !ok {
			e.Message += fmt.Sprintf(" (server asks to wait more than %s)", c.maxDelay)
			return resp, e
		}
		if deadline, ok := ctx.Deadline(); ok && c.clock.Now().Add(wait).After(deadline) {
			e.Message += fmt.Sprintf(" (no time left to retry in %s)", wait.Round(time.Millisecond))
			return resp, e
		}
		if err := c.clock.Sleep(ctx, wait); err != nil {
			return resp, stopped(err, e)
		}
	}
}

// stopped is the error of a call whose context ended while it waited to
// retry after the failure last.
func stopped(ctxErr error, last *Error) *Error {
	typ := TypeCanceled
	if errors.Is(ctxErr, context.DeadlineExceeded) {
		typ = TypeTimeout
	}
	return &Error{
		Status:   last.Status,
		Type:     typ,
		Code:     last.Code,
		Message:  "stopped waiting to retry after " + last.Type + ": " + last.Message,
		Attempts: last.Attempts,
		Err:      fmt.Errorf("%w (last error: %w)", ctxErr, last),
	}
}

// send makes one attempt, bounded by the attempt timeout.
func (c *Client) send(ctx context.Context, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
	if c.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	return c.api.CreateChatCompletion(ctx, req)
}

// wait is how long to wait before retry number attempt (1 for the first)
// after an answer of the HTTP status with header h: the server's hint when
// it gave one, plus up to 10% jitter so that concurrent callers spread out,
// else an exponential backoff with jitter.
// It reports false when the server's hint exceeds the longest wait.
func (c *Client) wait(attempt, status int, h http.Header) (time.Duration, bool) {
	if hint, ok := retryHint(h, status, c.clock.Now()); ok {
		if hint > c.maxDelay {
			return 0, false
		}
		return hint + retry.Jitter(hint/20, 1), true // [hint, 1.1·hint]
	}
	d := retry.Backoff{Base: c.baseDelay, Max: c.maxDelay}.Delay(attempt)
	if d <= 0 {
		d = c.maxDelay
	}
	return retry.Jitter(d*3/4, 1.0/3), true // [d/2, d]
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) Sleep(ctx context.Context, d time.Duration) error { return retry.Sleep(ctx, d) }
