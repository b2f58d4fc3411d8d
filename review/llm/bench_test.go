package llm_test

import (
	"testing"
	"time"

	"github.com/mergeguard/mergeguard/review/llm"
	"github.com/mergeguard/mergeguard/review/llm/llmtest"
)

// BenchmarkChat measures one completion through the client and the fake
// server: request encoding, HTTP on loopback, response decoding.
func BenchmarkChat(b *testing.B) {
	answer := llmtest.ToolCalls(llmtest.Call("call_1", "read_file_part", map[string]any{"file_path": "main.go"})).WithUsage(1000, 50)
	fake := llmtest.New(b, func(llmtest.Request) llmtest.Response { return answer })
	c := llm.New(llm.Config{BaseURL: fake.URL(), Model: "gpt-4o"}, nil)
	req := userRequest("Review this change.")
	for b.Loop() {
		if _, err := c.Chat(b.Context(), req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkChatParallelLatency runs 16 callers against a server answering
// in 20ms, as agents reviewing chunks in parallel do: ns/op near 20ms/16
// shows the client adds no serialisation.
func BenchmarkChatParallelLatency(b *testing.B) {
	fake := llmtest.New(b, func(llmtest.Request) llmtest.Response { return llmtest.Text("ok") },
		llmtest.WithLatency(20*time.Millisecond))
	c := llm.New(llm.Config{BaseURL: fake.URL(), Model: "gpt-4o"}, nil)
	req := userRequest("Review this change.")
	b.SetParallelism(8) // 8 × GOMAXPROCS(2) = 16 goroutines
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := c.Chat(b.Context(), req); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
