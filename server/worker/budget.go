package worker

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	openai "github.com/sashabaranov/go-openai"

	"github.com/mergeguard/mergeguard/review/pipeline"
)

// ErrTokenBudget is returned by a BudgetedLLM call once the review's token
// budget is spent; the agent that made it fails and the run is skipped.
var ErrTokenBudget = errors.New("per-review token budget exhausted")

// tokenBudget counts the tokens one review spends against its cap.
type tokenBudget struct {
	max  int64
	used atomic.Int64
}

type budgetKey struct{}

// withTokenBudget gives ctx a budget of max tokens; max <= 0 means none.
func withTokenBudget(ctx context.Context, max int) context.Context {
	if max <= 0 {
		return ctx
	}
	return context.WithValue(ctx, budgetKey{}, &tokenBudget{max: int64(max)})
}

// tokenBudgetExceeded reports whether the review of ctx ran out of budget,
// and how many tokens it used.
func tokenBudgetExceeded(ctx context.Context) (used int, over bool) {
	b, ok := ctx.Value(budgetKey{}).(*tokenBudget)
	if !ok {
		return 0, false
	}
	u := b.used.Load()
	return int(u), u >= b.max
}

// BudgetedLLM wraps the pipeline's chat client so that each call counts
// against the per-review token budget a worker puts in the call's context:
// once the budget is spent, further calls fail with ErrTokenBudget without
// reaching the model. Calls outside a budgeted review pass through.
func BudgetedLLM(next pipeline.ChatClient) pipeline.ChatClient {
	return budgetedLLM{next: next}
}

type budgetedLLM struct{ next pipeline.ChatClient }

func (c budgetedLLM) Chat(ctx context.Context, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
	b, ok := ctx.Value(budgetKey{}).(*tokenBudget)
	if !ok {
		return c.next.Chat(ctx, req)
	}
	if used := b.used.Load(); used >= b.max {
		return openai.ChatCompletionResponse{}, fmt.Errorf("%w (%d of %d tokens used)", ErrTokenBudget, used, b.max)
	}
	resp, err := c.next.Chat(ctx, req)
	b.used.Add(int64(resp.Usage.TotalTokens))
	return resp, err
}
