package budget

import (
	"encoding/json"

	openai "github.com/sashabaranov/go-openai"
)

// Overheads of the chat format, from OpenAI's token-counting cookbook.
const (
	tokensPerMessage = 3 // <|start|>role ... <|end|>
	tokensPerName    = 1
	tokensPerReply   = 3 // every reply is primed with <|start|>assistant<|message|>
)

// CountMessages estimates the prompt tokens of a chat request: the
// messages' content and tool calls with the chat format's overheads, and
// the tool definitions counted as their JSON (a little more than the
// server's own rendering of them, the safe side).
func CountMessages(c Counter, msgs []openai.ChatCompletionMessage, tools []openai.Tool) int {
	n := tokensPerReply
	for _, m := range msgs {
		n += tokensPerMessage + c.Count(m.Role) + c.Count(m.Content)
		for _, p := range m.MultiContent {
			n += c.Count(p.Text)
		}
		if m.Name != "" {
			n += tokensPerName + c.Count(m.Name)
		}
		for _, tc := range m.ToolCalls {
			n += tokensPerMessage + c.Count(tc.ID) + c.Count(tc.Function.Name) + c.Count(tc.Function.Arguments)
		}
		if m.ToolCallID != "" {
			n += c.Count(m.ToolCallID)
		}
	}
	for _, t := range tools {
		if t.Function == nil {
			continue
		}
		b, err := json.Marshal(t.Function)
		if err != nil {
			// An unmarshalable schema fails the request itself; count the
			// parts that are plain text.
			n += c.Count(t.Function.Name) + c.Count(t.Function.Description)
			continue
		}
		n += c.Count(string(b))
	}
	return n
}

// CountRequest estimates the prompt tokens of a whole request as the agents
// count it before sending: CountMessages, plus the JSON schema of a
// json_schema response format.
func CountRequest(c Counter, req openai.ChatCompletionRequest) int {
	n := CountMessages(c, req.Messages, req.Tools)
	if req.ResponseFormat != nil && req.ResponseFormat.JSONSchema != nil {
		switch s := req.ResponseFormat.JSONSchema.Schema.(type) {
		case json.RawMessage:
			n += c.Count(string(s))
		case nil:
		default:
			if b, err := json.Marshal(s); err == nil {
				n += c.Count(string(b))
			}
		}
	}
	return n
}
