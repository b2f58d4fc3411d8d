package llmtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strings"
)

// Request is one chat-completion request as the fake decoded it from the
// wire. Body and Header are kept verbatim.
type Request struct {
	Path   string
	Header http.Header
	Body   []byte

	Model               string
	Messages            []Message
	Tools               []Tool
	ToolChoice          json.RawMessage // "auto", "none", "required" or an object
	ResponseFormat      *ResponseFormat
	Temperature         *float64
	MaxTokens           int
	MaxCompletionTokens int
	ParallelToolCalls   *bool
	Stream              bool
}

// Message is one message of a request. Content holds the text, joined from
// text parts when the client sent an array.
type Message struct {
	Role       string     `json:"role"`
	Content    string     `json:"-"`
	HasContent bool       `json:"-"` // false when content was absent or null
	Name       string     `json:"name,omitempty"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
}

// ToolCall is a function call, in a request's assistant message or in a
// response.
type ToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function FunctionCall `json:"function"`
}

// FunctionCall names the function and carries its arguments as JSON text.
type FunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Tool is a tool offered in a request.
type Tool struct {
	Type     string   `json:"type"`
	Function Function `json:"function"`
}

// Function is a function tool's definition.
type Function struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
	Strict      bool            `json:"strict,omitempty"`
}

// ResponseFormat is the request's response_format.
type ResponseFormat struct {
	Type       string      `json:"type"`
	JSONSchema *JSONSchema `json:"json_schema,omitempty"`
}

// JSONSchema is a json_schema response format.
type JSONSchema struct {
	Name   string          `json:"name"`
	Schema json.RawMessage `json:"schema"`
	Strict bool            `json:"strict"`
}

type contentPart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type wireMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	Name       string          `json:"name"`
	ToolCalls  []ToolCall      `json:"tool_calls"`
	ToolCallID string          `json:"tool_call_id"`
}

type wireRequest struct {
	Model               string          `json:"model"`
	Messages            []wireMessage   `json:"messages"`
	Tools               []Tool          `json:"tools"`
	ToolChoice          json.RawMessage `json:"tool_choice"`
	ResponseFormat      *ResponseFormat `json:"response_format"`
	Temperature         *float64        `json:"temperature"`
	MaxTokens           int             `json:"max_tokens"`
	MaxCompletionTokens int             `json:"max_completion_tokens"`
	ParallelToolCalls   *bool           `json:"parallel_tool_calls"`
	Stream              bool            `json:"stream"`
}

// decodeRequest reads the request; a non-zero status and message say why
// the body was rejected, as OpenAI words it.
func decodeRequest(r *http.Request) (Request, int, string) {
	req := Request{Path: r.URL.Path, Header: r.Header.Clone()}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return req, http.StatusBadRequest, "could not read the request body: " + err.Error()
	}
	req.Body = body
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		return req, http.StatusBadRequest, "Unsupported content type: '" + r.Header.Get("Content-Type") +
			"'. This API method only accepts 'application/json' requests."
	}
	var w wireRequest
	if err := json.Unmarshal(body, &w); err != nil {
		return req, http.StatusBadRequest, "We could not parse the JSON body of your request. " +
			"(HINT: This likely means you aren't using your HTTP library correctly.) " + err.Error()
	}
	req.Model, req.Tools, req.ToolChoice = w.Model, w.Tools, w.ToolChoice
	req.ResponseFormat, req.Temperature, req.Stream = w.ResponseFormat, w.Temperature, w.Stream
	req.MaxTokens, req.MaxCompletionTokens, req.ParallelToolCalls = w.MaxTokens, w.MaxCompletionTokens, w.ParallelToolCalls
	for i, m := range w.Messages {
		msg := Message{Role: m.Role, Name: m.Name, ToolCalls: m.ToolCalls, ToolCallID: m.ToolCallID}
		c := bytes.TrimSpace(m.Content)
		switch {
		case len(c) == 0 || string(c) == "null":
		case c[0] == '"':
			msg.HasContent = json.Unmarshal(c, &msg.Content) == nil
		case c[0] == '[':
			var parts []contentPart
			if err := json.Unmarshal(c, &parts); err != nil {
				return req, http.StatusBadRequest, fmt.Sprintf("Invalid type for 'messages[%d].content': %v", i, err)
			}
			msg.Content, msg.HasContent = joinText(parts), true
		default:
			return req, http.StatusBadRequest, fmt.Sprintf(
				"Invalid type for 'messages[%d].content': expected one of a string or array of objects.", i)
		}
		req.Messages = append(req.Messages, msg)
	}
	return req, 0, ""
}

var functionName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// validate checks what OpenAI checks before running a model, returning its
// message or "".
func validate(req Request) string {
	if req.Model == "" {
		return "you must provide a model parameter"
	}
	if req.Stream {
		return "llmtest: streaming is not supported by the fake"
	}
	if len(req.Messages) == 0 {
		return "[] is too short - 'messages'"
	}
	pending := map[string]bool{} // tool_call_ids awaiting their tool message
	for i, m := range req.Messages {
		if len(pending) > 0 && m.Role != "tool" {
			return "An assistant message with 'tool_calls' must be followed by tool messages responding to each " +
				"'tool_call_id'. The following tool_call_ids did not have response messages: " + strings.Join(slices.Sorted(maps.Keys(pending)), ", ")
		}
		switch m.Role {
		case "system", "developer", "user":
			if !m.HasContent {
				return fmt.Sprintf("Invalid value for 'messages[%d].content': expected a string, got null.", i)
			}
		case "assistant":
			if !m.HasContent && len(m.ToolCalls) == 0 {
				return fmt.Sprintf("Invalid value for 'messages[%d].content': expected a string, got null.", i)
			}
			for _, c := range m.ToolCalls {
				if c.ID == "" || c.Type != "function" || c.Function.Name == "" {
					return fmt.Sprintf("Missing required parameter: 'messages[%d].tool_calls[0].id', 'type' or 'function.name'.", i)
				}
				pending[c.ID] = true
			}
		case "tool":
			if !pending[m.ToolCallID] {
				return "Invalid parameter: messages with role 'tool' must be a response to a preceding message with 'tool_calls'."
			}
			if !m.HasContent {
				return fmt.Sprintf("Invalid value for 'messages[%d].content': expected a string, got null.", i)
			}
			delete(pending, m.ToolCallID)
		default:
			return fmt.Sprintf("Invalid value: '%s'. Supported values are: 'system', 'assistant', 'user', 'tool', and 'developer'.", m.Role)
		}
	}
	if len(pending) > 0 {
		return "An assistant message with 'tool_calls' must be followed by tool messages responding to each " +
			"'tool_call_id'. The following tool_call_ids did not have response messages: " + strings.Join(slices.Sorted(maps.Keys(pending)), ", ")
	}
	for i, t := range req.Tools {
		if t.Type != "function" {
			return fmt.Sprintf("Invalid value: '%s'. Supported values are: 'function'. (tools[%d].type)", t.Type, i)
		}
		if !functionName.MatchString(t.Function.Name) {
			return fmt.Sprintf("Invalid 'tools[%d].function.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.", i)
		}
		if t.Function.Strict {
			if msg := strictSchema(t.Function.Parameters); msg != "" {
				return fmt.Sprintf("Invalid schema for function '%s': %s", t.Function.Name, msg)
			}
		}
	}
	if rf := req.ResponseFormat; rf != nil && rf.Type == "json_schema" {
		if rf.JSONSchema == nil || rf.JSONSchema.Name == "" {
			return "Missing required parameter: 'response_format.json_schema.name'."
		}
		if rf.JSONSchema.Strict {
			if msg := strictSchema(rf.JSONSchema.Schema); msg != "" {
				return fmt.Sprintf("Invalid schema for response_format '%s': %s", rf.JSONSchema.Name, msg)
			}
		}
	}
	return ""
}

// strictSchema checks the rules of OpenAI's strict mode that clients most
// often break: the root is an object, and every object lists every property
// in required and sets additionalProperties to false. It returns OpenAI's
// kind of message or "".
func strictSchema(raw json.RawMessage) string {
	var root map[string]any
	if err := json.Unmarshal(raw, &root); err != nil {
		return "schema must be a JSON object: " + err.Error()
	}
	if root["type"] != "object" {
		return "schema must be a JSON Schema of 'type: \"object\"', got 'type: \"" + fmt.Sprint(root["type"]) + "\"'."
	}
	return strictNode(root, nil)
}

func strictNode(node map[string]any, path []string) string {
	where := "(" + strings.Join(path, ", ") + ")"
	props, hasProps := node["properties"].(map[string]any)
	if hasProps || node["type"] == "object" {
		if node["additionalProperties"] != false {
			return "In context=" + where + ", 'additionalProperties' is required to be supplied and to be false."
		}
		req, _ := node["required"].([]any)
		for _, name := range slices.Sorted(maps.Keys(props)) {
			if !slices.Contains(req, any(name)) {
				return "In context=" + where + ", 'required' is required to be supplied and to be an array " +
					"including every key in properties. Missing '" + name + "'."
			}
		}
	}
	var subs []map[string]any
	var subPaths [][]string
	add := func(v any, p ...string) {
		if m, ok := v.(map[string]any); ok {
			subs = append(subs, m)
			subPaths = append(subPaths, append(slices.Clone(path), p...))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(props)) {
		add(props[name], "'properties'", "'"+name+"'")
	}
	add(node["items"], "'items'")
	for _, key := range []string{"$defs", "definitions"} {
		defs, _ := node[key].(map[string]any)
		for _, name := range slices.Sorted(maps.Keys(defs)) {
			add(defs[name], "'"+key+"'", "'"+name+"'")
		}
	}
	anyOf, _ := node["anyOf"].([]any)
	for i, v := range anyOf {
		add(v, "'anyOf'", fmt.Sprint(i))
	}
	for i, sub := range subs {
		if msg := strictNode(sub, subPaths[i]); msg != "" {
			return msg
		}
	}
	return ""
}
