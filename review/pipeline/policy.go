package pipeline

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"

	openai "github.com/sashabaranov/go-openai"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/llm"
	"github.com/mergeguard/mergeguard/review/task"
)

// ErrTokenBudget is returned by a model call of a review once the review's
// token budget (task.Request.MaxTokens) is spent.
var ErrTokenBudget = errors.New("per-review token budget exhausted")

// tokenBudget counts the tokens one review spends against its cap.
type tokenBudget struct {
	max  int64
	used atomic.Int64
}

// exceeded reports whether the budget is spent, and the tokens used.
func (b *tokenBudget) exceeded() (used int, over bool) {
	if b == nil {
		return 0, false
	}
	u := b.used.Load()
	return int(u), u >= b.max
}

// budgetedClient counts each call of next against budget; once the budget
// is spent, further calls fail with ErrTokenBudget without reaching the
// model.
type budgetedClient struct {
	next   ChatClient
	budget *tokenBudget
}

func (c budgetedClient) Chat(ctx context.Context, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
	if used, over := c.budget.exceeded(); over {
		return openai.ChatCompletionResponse{}, fmt.Errorf("%w (%d of %d tokens used)", ErrTokenBudget, used, c.budget.max)
	}
	resp, err := c.next.Chat(ctx, req)
	c.budget.used.Add(int64(resp.Usage.TotalTokens))
	return resp, err
}

// transientLLMErrors are the agent error types that pass with time.
var transientLLMErrors = []string{llm.TypeRateLimited, llm.TypeServer, llm.TypeTimeout, llm.TypeTransport}

// llmUnavailable returns task.ErrLLMUnavailable when every LLM reviewer agent of
// a review failed with a rate limit, a server error, a timeout or a network
// failure.
func llmUnavailable(agents []review.AgentResult) error {
	var total, failed int
	var last string
	for _, a := range agents {
		if a.Stage != review.StageReviewer || strings.HasPrefix(a.Agent, "analyzer:") {
			continue
		}
		total++
		switch {
		case a.Status == review.AgentTimeout:
			failed++
			last = fmt.Sprintf("%s timed out", a.Agent)
		case a.Status == review.AgentError && slices.Contains(transientLLMErrors, a.ErrorType):
			failed++
			last = a.Error
		}
	}
	if total == 0 || failed < total {
		return nil
	}
	return fmt.Errorf("%w: %d of %d reviewer agents failed; last: %s", task.ErrLLMUnavailable, failed, total, last)
}
