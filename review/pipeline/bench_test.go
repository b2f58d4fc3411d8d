package pipeline

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/diff"
	"github.com/mergeguard/mergeguard/review/llm"
	"github.com/mergeguard/mergeguard/review/llm/llmtest"
	"github.com/mergeguard/mergeguard/review/source/difftext"
	"github.com/mergeguard/mergeguard/review/task"
)

// generatedDiff is a pull request modifying files files, each with two
// hunks of hunkLines changed lines, as git writes it.
func generatedDiff(files, hunkLines int) string {
	var b strings.Builder
	for i := range files {
		p := fmt.Sprintf("pkg/mod%03d/file%03d.go", i/10, i)
		fmt.Fprintf(&b, "diff --git a/%s b/%s\nindex 1111111..2222222 100644\n--- a/%s\n+++ b/%s\n", p, p, p, p)
		for h, start := range []int{10, 200} {
			fmt.Fprintf(&b, "@@ -%d,%d +%d,%d @@ func f%d() {\n", start, 6+hunkLines, start, 6+2*hunkLines, h)
			for k := range 3 {
				fmt.Fprintf(&b, " \tctx := context.Background() // %d\n", k)
			}
			for k := range hunkLines {
				fmt.Fprintf(&b, "-\tvalue%d := compute(%d, items[%d])\n", k, k, i)
			}
			for k := range 2 * hunkLines {
				fmt.Fprintf(&b, "+\tvalue%d, err := computeContext(ctx, %d, items[%d])\n", k, k, i)
			}
			for k := range 3 {
				fmt.Fprintf(&b, " \treturn result%d\n", k)
			}
		}
	}
	return b.String()
}

// BenchmarkPlanVerifyReport reviews a generated 500-file pull request
// without an LLM: parse, plan, the built-in analyzers, verify and report.
func BenchmarkPlanVerifyReport(b *testing.B) {
	text := generatedDiff(500, 10)
	src, err := difftext.New(text)
	if err != nil {
		b.Fatal(err)
	}
	p := newTest(Deps{Config: testLLM()})
	repo := config.DefaultRepo()
	if _, err := p.Run(b.Context(), task.Request{Source: src, Repo: repo}); err != nil { // warm up gitleaks
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		res, err := p.Run(b.Context(), task.Request{Source: src, Repo: repo})
		if err != nil {
			b.Fatal(err)
		}
		if res.Verdict.Stats.FilesReviewed != 500 {
			b.Fatalf("reviewed %d files", res.Verdict.Stats.FilesReviewed)
		}
	}
}

// BenchmarkParallelChunks reviews 20 chunks (one ~1,100-token file each)
// against a fake LLM answering
// each call after 200 ms; every chunk makes a chain of two calls (a tool
// call, then the answer). With Concurrency 20 the review should take about
// one chain: the ratio metric is the review's time over the chain's 400 ms.
func BenchmarkParallelChunks(b *testing.B) {
	const latency, chain = 200 * time.Millisecond, 2
	srv := llmtest.New(b, func(r llmtest.Request) llmtest.Response {
		if len(r.ToolResults()) == 0 {
			return llmtest.ToolCalls(llmtest.Call("c1", "read_file_part", map[string]string{"file_path": "pkg/mod000/file000.go"}))
		}
		return answer()
	}, llmtest.WithLatency(latency))
	client := llm.New(llm.Config{BaseURL: srv.URL(), Model: "gpt-4o"}, nil)
	src, err := difftext.New(generatedDiff(20, 8))
	if err != nil {
		b.Fatal(err)
	}
	p := newTest(Deps{
		Config: testLLM(func(c *config.LLM) { c.Model, c.Concurrency, c.MaxChunkTokens = "gpt-4o", 20, 1500 }),
		LLM:    client,
		Tools:  func(src review.Source, _ *diff.Diff) Toolbox { return fileTools{src} },
	})
	// Warm up: the tokenizer and the gitleaks rules load on first use.
	if _, err := p.Run(b.Context(), task.Request{Source: src, Repo: config.DefaultRepo()}); err != nil {
		b.Fatal(err)
	}
	var elapsed time.Duration
	for b.Loop() {
		start := time.Now()
		res, err := p.Run(b.Context(), task.Request{Source: src, Repo: config.DefaultRepo()})
		elapsed += time.Since(start)
		if err != nil {
			b.Fatal(err)
		}
		if res.Verdict.Stats.Chunks != 20 || res.Verdict.Stats.LLMCalls != 20*chain {
			b.Fatalf("chunks %d, LLM calls %d", res.Verdict.Stats.Chunks, res.Verdict.Stats.LLMCalls)
		}
	}
	b.ReportMetric(float64(elapsed)/float64(b.N)/float64(chain*latency), "x_chain")
}
