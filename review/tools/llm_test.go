package tools_test

import (
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/mergeguard/mergeguard/review/llm"
	"github.com/mergeguard/mergeguard/review/llm/llmtest"
)

// TestToolLoopWithModel runs the tool loop against the fake OpenAI server:
// the definitions (strict or not) are accepted, the model's calls are
// answered and the answers go back as tool messages.
func TestToolLoopWithModel(t *testing.T) {
	src := newRepo(t)
	for _, strict := range []bool{false, true} {
		tb := toolbox(t, src, strictTools(strict))
		fake := llmtest.NewQueue(t,
			llmtest.ToolCalls(
				llmtest.Call("call_1", "read_file_part", map[string]any{"file_path": "cmd/app/main.go", "start_line": 9, "end_line": 9, "branch": nil}),
				llmtest.Call("call_2", "get_blame", `{"file_path": "../secret", "line_number": 1}`),
				llmtest.Call("call_3", "search_in_files", `{"pattern": "TODO", "file_pattern": "*.md"`), // malformed JSON
			),
			llmtest.Text(`{"findings": []}`),
		)
		client := llm.New(llm.Config{BaseURL: fake.URL(), Model: "gpt-4o"}, nil)
		req := openai.ChatCompletionRequest{
			Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "Review the change."}},
			Tools:    tb.Definitions(),
		}
		for turn := 0; ; turn++ {
			resp, err := client.Chat(t.Context(), req)
			if err != nil {
				t.Fatalf("strict=%v turn %d: %v", strict, turn, err)
			}
			msg := resp.Choices[0].Message
			if len(msg.ToolCalls) == 0 {
				break
			}
			req.Messages = append(req.Messages, msg)
			for _, c := range msg.ToolCalls {
				out, err := tb.Call(t.Context(), c.Function.Name, c.Function.Arguments)
				if err != nil {
					t.Fatal(err)
				}
				req.Messages = append(req.Messages, openai.ChatCompletionMessage{Role: "tool", ToolCallID: c.ID, Content: out})
			}
		}
		reqs := fake.Requests()
		if len(reqs) != 2 {
			t.Fatalf("strict=%v: %d requests", strict, len(reqs))
		}
		for _, tool := range reqs[0].Tools {
			if tool.Function.Strict != strict {
				t.Errorf("strict=%v: tool %s sent with strict=%v", strict, tool.Function.Name, tool.Function.Strict)
			}
		}
		results := reqs[1].ToolResults()
		checks := map[string]string{
			"call_1": "\n9  const port = 9090\n",
			"call_2": "error: path \"../secret\" is outside the repository",
			"call_3": "error: the arguments are not valid JSON",
		}
		for id, want := range checks {
			if !strings.Contains(results[id], want) {
				t.Errorf("strict=%v: result of %s = %q, want it to contain %q", strict, id, results[id], want)
			}
		}
	}
}
