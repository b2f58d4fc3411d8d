package llm

import (
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/mergeguard/mergeguard/review"
)

// Price is what a model costs, in US dollars per million tokens.
type Price struct {
	InputPerMillion  float64 `json:"input_per_million" yaml:"input_per_million"`
	OutputPerMillion float64 `json:"output_per_million" yaml:"output_per_million"`
}

// Cost prices the usage of one or more completions of model. The model is
// looked up exactly, then by the longest key that is a prefix of it followed
// by "-" (so "gpt-4o" prices "gpt-4o-2024-08-06", the name servers answer
// with). An unknown model costs 0; its tokens are still counted. Cached
// prompt tokens are priced as ordinary input tokens.
func Cost(prices map[string]Price, model string, u openai.Usage) review.CostInfo {
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
		TotalCost: (float64(u.PromptTokens)*p.InputPerMillion +
			float64(u.CompletionTokens)*p.OutputPerMillion) / 1e6,
	}
}
