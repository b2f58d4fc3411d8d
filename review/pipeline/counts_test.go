package pipeline

import (
	"context"
	"sync"
	"testing"

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/review/budget"
	"github.com/mergeguard/mergeguard/review/llm"
	"github.com/mergeguard/mergeguard/review/llm/llmtest"
	"github.com/mergeguard/mergeguard/review/source/difftext"
	"github.com/mergeguard/mergeguard/review/task"
)

// countMeter is a counter that adds up the calls and the bytes it counts,
// passing CountContext and CountLines through.
type countMeter struct {
	c            budget.ContextCounter
	mu           sync.Mutex
	calls, bytes int
	big          map[string]int // how often each text of 1 KB or more was counted
}

func (m *countMeter) add(text string) {
	m.mu.Lock()
	m.calls++
	m.bytes += len(text)
	if len(text) >= 1024 {
		m.big[text]++
	}
	m.mu.Unlock()
}

func (m *countMeter) Count(text string) int {
	m.add(text)
	return m.c.Count(text)
}

func (m *countMeter) CountContext(ctx context.Context, text string) (int, error) {
	m.add(text)
	return m.c.CountContext(ctx, text)
}

func (m *countMeter) CountLines(ctx context.Context, text string) (int, []int, error) {
	m.add(text)
	return budget.CountLines(ctx, m.c, text)
}

// TestCountsEachTextOnce reviews a 2,248-line diff in chunks, some files
// cut to fit, with the LLM, and checks what the run counted: no text of
// 1 KB or more twice, and in all about the size of the prompts the model
// received (each file in the plan, then inside its chunk's prompt).
func TestCountsEachTextOnce(t *testing.T) {
	srv := llmtest.New(t, func(llmtest.Request) llmtest.Response { return answer() })
	client := llm.New(llm.Config{BaseURL: srv.URL(), Model: "gpt-4o"}, nil)
	text := diffFixture(t, "go-reviewdog_large-multi-hunk-2248-lines_2741682.diff")
	src, err := difftext.New(text)
	if err != nil {
		t.Fatal(err)
	}
	m := &countMeter{c: testTokenizers.ForModel("gpt-4o"), big: map[string]int{}}
	res, err := newTest(Deps{Config: testLLM(func(c *config.LLM) { c.Model, c.ContextTokens, c.MaxOutputTokens = "gpt-4o", 16000, 1000 }), LLM: client, Counter: m}).
		Run(t.Context(), task.Request{Source: src, Repo: config.DefaultRepo()})
	if err != nil {
		t.Fatal(err)
	}
	prompts := 0
	for _, r := range srv.Requests() {
		for _, msg := range r.Messages {
			prompts += len(msg.Content)
		}
	}
	t.Logf("diff %d bytes, %d chunks, %d requests of %d bytes; counted %d texts, %d bytes", len(text), res.Verdict.Stats.Chunks,
		srv.Calls(), prompts, m.calls, m.bytes)
	for s, n := range m.big {
		if n > 1 {
			t.Errorf("counted %d times: %.80q", n, s)
		}
	}
	// Before the planner's line counts were reused, a cut file was
	// counted again line by line: 216,074 bytes in 910 calls, 1.38 times
	// the diff and the prompts; now 176,280 bytes in 23 calls, 1.13 times.
	if limit := (len(text) + prompts) * 5 / 4; m.bytes > limit {
		t.Errorf("counted %d bytes, want at most %d (the diff and the prompts, and a quarter more)", m.bytes, limit)
	}
	if res.Verdict.Stats.Chunks < 2 || res.Verdict.Truncation == nil {
		t.Errorf("chunks = %d, truncation = %+v: want the diff split and a file cut", res.Verdict.Stats.Chunks, res.Verdict.Truncation)
	}
}
