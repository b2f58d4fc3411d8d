package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/agent"
)

// question is a single-turn model call whose answer is one JSON object:
// the re-check of a critical finding, the learnings check, the walkthrough.
type question struct {
	// name names the call in errors and, with schema, in response_format.
	name, system, schema string
	// maxOutput caps the answer's tokens (and the model's own cap).
	maxOutput int
}

// ask makes the call with user as the user message and decodes the JSON
// object of the answer into v (prose around it is ignored). It returns the
// call's cost, also with an error after the model answered. The call is
// bounded by the agent timeout.
func (r *run) ask(ctx context.Context, q question, user string, v any) (review.CostInfo, error) {
	deps := r.p.d
	req := openai.ChatCompletionRequest{
		Model: deps.Config.Model,
		Messages: []openai.ChatCompletionMessage{
			{Role: openai.ChatMessageRoleSystem, Content: q.system},
			{Role: openai.ChatMessageRoleUser, Content: user},
		},
		MaxCompletionTokens: min(deps.Config.MaxOutputTokens, q.maxOutput),
	}
	if agent.ResponseFormat(deps.Config.ResponseFormat) == agent.FormatJSONSchema {
		req.ResponseFormat = &openai.ChatCompletionResponseFormat{
			Type:       openai.ChatCompletionResponseFormatTypeJSONSchema,
			JSONSchema: &openai.ChatCompletionResponseFormatJSONSchema{Name: q.name, Schema: json.RawMessage(q.schema), Strict: true},
		}
	}
	ctx, cancel := context.WithTimeout(ctx, deps.Config.AgentTimeout)
	defer cancel()
	resp, err := r.llm.Chat(ctx, req)
	if err != nil {
		return review.CostInfo{}, fmt.Errorf("%s: %w", q.name, err)
	}
	cost := r.cost(resp.Model, resp.Usage)
	if len(resp.Choices) == 0 {
		return cost, fmt.Errorf("%s: the model returned no choices", q.name)
	}
	content := resp.Choices[0].Message.Content
	if i, j := strings.IndexByte(content, '{'), strings.LastIndexByte(content, '}'); i >= 0 && j > i {
		content = content[i : j+1]
	}
	if err := json.Unmarshal([]byte(content), v); err != nil {
		return cost, fmt.Errorf("%s: unparsable answer: %w", q.name, err)
	}
	return cost, nil
}

// errIncomplete is an answer whose JSON lacks a required field.
var errIncomplete = errors.New("the answer lacks a required field")
