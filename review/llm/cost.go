package llm

import (
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/review"
)

// Cost prices the usage of one or more completions of model. The model is
// looked up exactly, then by the longest key that is a prefix of it followed
// by "-" (so "gpt-4o" prices "gpt-4o-2024-08-06", the name servers answer
// with). An unknown model costs 0; its tokens are still counted. Cached
// prompt tokens are priced as ordinary input tokens.
func Cost(prices map[string]config.Price, model string, u openai.Usage) review.CostInfo {
	p, ok := prices[model]
	if !ok {
		best := ""
		for k, v := range prices {
			if strings.HasPrefix(model, k+"-") && len(k) > len(best) {
				best, p = k, v
			}
		}
	}
	return review.CostInfo{
		InputTokens:  u.PromptTokens,
		OutputTokens: u.CompletionTokens,
		TotalCost:    p.Cost(u.PromptTokens, u.CompletionTokens),
	}
}
