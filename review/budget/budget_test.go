package budget_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	openai "github.com/sashabaranov/go-openai"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/budget"
)

func TestEncodingForModel(t *testing.T) {
	tests := map[string]string{
		"gpt-4o":                  budget.O200kBase,
		"gpt-4o-mini-2024-07-18":  budget.O200kBase,
		"gpt-4.1":                 budget.O200kBase,
		"gpt-5-mini":              budget.O200kBase,
		"o1":                      budget.O200kBase,
		"o3-mini":                 budget.O200kBase,
		"o4-mini-2025-04-16":      budget.O200kBase,
		"openai/gpt-4o":           budget.O200kBase,
		"gpt-4":                   budget.CL100kBase,
		"gpt-4-turbo":             budget.CL100kBase,
		"gpt-3.5-turbo-0125":      budget.CL100kBase,
		"llama3.1:8b":             "",
		"mistral-large-latest":    "",
		"Qwen/Qwen2.5-Coder-32B":  "",
		"ollama":                  "",
		"o":                       "",
		"omni-custom":             "",
		"":                        "",
		"meta-llama/Llama-3.3-70": "",
	}
	for model, want := range tests {
		if got := budget.EncodingForModel(model); got != want {
			t.Errorf("EncodingForModel(%q) = %q, want %q", model, got, want)
		}
	}
}

func TestCounters(t *testing.T) {
	tk := tokenizers()
	tests := []struct {
		model, text string
		want        int
	}{
		// Reference counts from OpenAI's tiktoken (Python): "tiktoken is
		// great!" is 6 tokens in cl100k_base (the OpenAI cookbook), and
		// "hello world!你好，世界！" encodes to 10 cl100k_base tokens
		// (tiktoken-go's tests, converted from the Python library).
		{"gpt-4", "tiktoken is great!", 6},
		{"gpt-3.5-turbo", "hello world!你好，世界！", 10},
		// o200k_base has a larger vocabulary: the same text takes fewer
		// tokens; these counts are what the embedded vocabulary gives.
		{"gpt-4o", "hello world!你好，世界！", 7},
		{"gpt-4o", "tiktoken is great!", 6},
		{"gpt-4o", "", 0},
		{"gpt-4o", "<|endoftext|>", 7}, // special tokens count as text
		// Other models count o200k_base's tokens plus 25%, rounded up:
		// "12345678" is 3 tokens ("123", "456", "78"), "tiktoken is
		// great!" 6.
		{"llama3", "12345678", 4},
		{"llama3", "tiktoken is great!", 8},
		{"mistral-large-latest", "", 0},
	}
	for _, tt := range tests {
		if got := tk.ForModel(tt.model).Count(tt.text); got != tt.want {
			t.Errorf("ForModel(%q).Count(%q) = %d, want %d", tt.model, tt.text, got, tt.want)
		}
	}
	if tk.ForModel("gpt-4o") != tk.ForModel("o3") {
		t.Error("models of one encoding get different counters")
	}
}

// TestUnknownModelErrsHigh checks that the counter of a model without a
// known tokenizer counts more than o200k_base on code, long identifiers
// and base64, where one token per 4 bytes counted up to 2.7 times fewer.
func TestUnknownModelErrsHigh(t *testing.T) {
	src, err := os.ReadFile("fit.go")
	if err != nil {
		t.Fatal(err)
	}
	tk := tokenizers()
	o200k := tk.ForModel("gpt-4o")
	tests := map[string]string{
		"Go code":          string(src),
		"long identifiers": strings.Repeat("requestContextDeadlineExceededErrorHandlerFactory ", 40),
		"base64":           strings.Repeat("TWVyZ2VHdWFyZCByZXZpZXdzIHB1bGwgcmVxdWVzdHMu", 40),
	}
	for _, model := range []string{"llama3.1:8b", "mistral-large-latest", "Qwen/Qwen2.5-Coder-32B"} {
		for name, text := range tests {
			exact := o200k.Count(text)
			if got, want := tk.ForModel(model).Count(text), exact*budget.UnknownModelPercent/100; got < want {
				t.Errorf("%s: %s counted %d tokens, want at least %d (o200k_base: %d)", model, name, got, want, exact)
			}
		}
	}
}

// TestCountLines checks that the one-pass count of the lines adds up to
// the text's count, a count per line.
func TestCountLines(t *testing.T) {
	src, err := os.ReadFile(largeDiff)
	if err != nil {
		t.Fatal(err)
	}
	texts := []string{"", "x", "\n", "a\nb\n", "}\n\n\n  \tfoo\n", "日本\n語\r\nx", string(src)[:20000]}
	tk := tokenizers()
	for _, model := range []string{"gpt-4o", "gpt-4", "llama3"} {
		c := tk.ForModel(model)
		for _, text := range texts {
			total, lines, err := budget.CountLines(t.Context(), c, text)
			if err != nil {
				t.Fatal(err)
			}
			sum := 0
			for _, n := range lines {
				sum += n
			}
			wantLines := 0
			if text != "" {
				wantLines = strings.Count(strings.TrimSuffix(text, "\n"), "\n") + 1
			}
			if total != c.Count(text) || len(lines) != wantLines || (model != "llama3" && sum != total) || sum < total {
				t.Errorf("%s: CountLines(%.20q) = %d, %d lines adding up to %d; want %d, %d lines", model, text, total, len(lines), sum, c.Count(text), wantLines)
			}
		}
	}
}

func TestCounterConcurrentFirstUse(t *testing.T) {
	c := budget.NewTokenizers().ForModel("gpt-4") // a fresh one: its first use is the test
	var wg sync.WaitGroup
	counts := make([]int, 8)
	for i := range counts {
		wg.Go(func() { counts[i] = c.Count("func main() { fmt.Println(42) }") })
	}
	wg.Wait()
	for i, n := range counts {
		if n != counts[0] || n == 0 {
			t.Fatalf("counts = %v (goroutine %d)", counts, i)
		}
	}
}

// tokenizers is the counters the tests share: a Tokenizers loads each
// vocabulary on first use (a quarter of a second) and is safe for
// concurrent use. TestCounterConcurrentFirstUse makes its own.
var tokenizers = sync.OnceValue(budget.NewTokenizers)

// largeDiff is a real diff of 2,248 lines.
const largeDiff = "../diff/testdata/go-reviewdog_large-multi-hunk-2248-lines_2741682.diff"

func numbered(n int) []string {
	lines := make([]string, n)
	for i := range lines {
		lines[i] = fmt.Sprintf("l%d", i+1)
	}
	return lines
}

func TestFitUnderBudgetKeepsEverything(t *testing.T) {
	secs := []budget.Section{{Name: "a", Text: "one\ntwo\n"}, {Name: "b", Text: "three"}}
	got, tr := fit(t, secs, 100, budget.Estimate{})
	if d := cmp.Diff(secs, got); d != "" {
		t.Errorf("sections (-want +got):\n%s", d)
	}
	want := review.Truncation{OriginalLines: 3, KeptLines: 3, SectionsAffected: []string{}}
	if d := cmp.Diff(want, tr); d != "" {
		t.Errorf("truncation (-want +got):\n%s", d)
	}
}

func TestFitSharesProportionally(t *testing.T) {
	// Estimate counts 4 bytes a token; each line "xxx" plus newline is 1 token.
	lines := func(n int) string { return strings.TrimSuffix(strings.Repeat("xxx\n", n), "\n") }
	secs := []budget.Section{
		{Name: "instructions", Text: lines(10), Priority: 2, Min: 1000}, // all or nothing, served first
		{Name: "small", Text: lines(10)},
		{Name: "big", Text: lines(200), Interest: []int{100}},
		{Name: "bigger", Text: lines(400)},
		{Name: "low", Text: lines(50), Priority: -1},
	}
	got, tr := fit(t, secs, 160, budget.Estimate{})
	counts := map[string]int{}
	for _, s := range got {
		counts[s.Name] = budget.Estimate{}.Count(s.Text)
	}
	// 160 - 10 (instructions) = 150 for priority 0: small keeps its 10,
	// big and bigger share 140 as 1:2, low gets nothing.
	if counts["instructions"] != 10 || counts["small"] != 10 {
		t.Errorf("counts = %v, want instructions and small whole", counts)
	}
	// big gets about 140/3 but needs only its window around line 100.
	if c := counts["big"]; c != 23 {
		t.Errorf("big got %d tokens, want 23 (21 lines and 2 markers)", c)
	}
	if c := counts["bigger"]; c < 85 || c > 94 {
		t.Errorf("bigger got %d tokens, want about 2*140/3", c)
	}
	if _, ok := counts["low"]; ok {
		t.Errorf("low kept although the budget ran out: %v", counts)
	}
	if d := cmp.Diff([]string{"big", "bigger", "low"}, tr.SectionsAffected); d != "" {
		t.Errorf("affected (-want +got):\n%s", d)
	}
	if !tr.Truncated || tr.OriginalLines != 670 || tr.KeptLines >= 670 || tr.KeptLines < 100 {
		t.Errorf("truncation = %+v", tr)
	}
	for _, s := range got {
		if s.Name == "big" && !strings.Contains(s.Text, "...") {
			t.Errorf("big was cut without a marker:\n%s", s.Text)
		}
	}
}

func TestFitKeepsLinesOfInterest(t *testing.T) {
	lines := numbered(500)
	secs := []budget.Section{{Name: "f.go", Text: strings.Join(lines, "\n"), Interest: []int{250}}}
	got, tr := fit(t, secs, 40, budget.Estimate{})
	if len(got) != 1 {
		t.Fatalf("got %d sections", len(got))
	}
	text := got[0].Text
	if !strings.Contains(text, "\nl250\n") || !strings.HasPrefix(text, "...\n") || !strings.HasSuffix(text, "\n...") {
		t.Errorf("cut text lost the line of interest or its markers:\n%s", text)
	}
	if tr.KeptLines != strings.Count(text, "\n")-1 {
		t.Errorf("KeptLines = %d for text:\n%s", tr.KeptLines, text)
	}
}

// TestFitNeverExceedsBudget checks the guarantee on random sections and
// budgets, with the real tokenizer and the estimate.
func TestFitNeverExceedsBudget(t *testing.T) {
	src, err := os.ReadFile(largeDiff)
	if err != nil {
		t.Fatal(err)
	}
	corpus := strings.Split(string(src), "\n")
	corpus = append(corpus, "日本語のコメント — ünïcödé ✓ 🚀🚀🚀", strings.Repeat("minified();", 400))
	counters := map[string]budget.Counter{
		"o200k":    tokenizers().ForModel("gpt-4o"),
		"unknown":  tokenizers().ForModel("llama3"),
		"estimate": budget.Estimate{},
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for name, c := range counters {
		for round := range 60 {
			var secs []budget.Section
			for i := range 1 + rng.IntN(6) {
				n := rng.IntN(300)
				start := rng.IntN(len(corpus))
				var lines []string
				for j := range n {
					lines = append(lines, corpus[(start+j)%len(corpus)])
				}
				var interest []int
				for range rng.IntN(4) {
					interest = append(interest, 1+rng.IntN(max(n, 1)))
				}
				secs = append(secs, budget.Section{
					Name: fmt.Sprintf("s%d", i), Text: strings.Join(lines, "\n"),
					Priority: rng.IntN(3), Min: rng.IntN(50), Interest: interest,
				})
			}
			limit := rng.IntN(3000)
			got, tr := fit(t, secs, limit, c)
			sum := 0
			for _, s := range got {
				sum += c.Count(s.Text)
			}
			if sum > limit {
				t.Errorf("%s round %d: %d tokens for a budget of %d", name, round, sum, limit)
			}
			if tr.KeptLines > tr.OriginalLines || (tr.Truncated != (len(tr.SectionsAffected) > 0)) {
				t.Errorf("%s round %d: inconsistent truncation %+v", name, round, tr)
			}
		}
	}
}

func TestFitTinyBudgets(t *testing.T) {
	c := tokenizers().ForModel("gpt-4o")
	long := strings.Repeat("averyveryverylongidentifier", 50)
	for _, limit := range []int{-5, 0, 1, 2, 3, 10} {
		got, tr := fit(t, []budget.Section{{Name: "x", Text: long}}, limit, c)
		sum := 0
		for _, s := range got {
			sum += c.Count(s.Text)
		}
		if sum > max(limit, 0) || !tr.Truncated {
			t.Errorf("budget %d: %d tokens kept, truncation %+v", limit, sum, tr)
		}
		if limit == 10 && (len(got) != 1 || !strings.HasPrefix(got[0].Text, "avery") || !strings.HasSuffix(got[0].Text, " ...")) {
			t.Errorf("budget 10: want the start of the line and a marker, got %+v", got)
		}
	}
}

func TestFitWithoutInterestKeepsHead(t *testing.T) {
	secs := []budget.Section{{Name: "f", Text: strings.Join(numbered(100), "\n")}}
	got, tr := fit(t, secs, 10, budget.Estimate{})
	want := "l1\nl2\nl3\nl4\nl5\nl6\nl7\nl8\nl9\nl10\nl11\n..." // 38 bytes, 10 tokens
	if len(got) != 1 || got[0].Text != want || tr.KeptLines != 11 {
		t.Errorf("got %+v, %+v; want the head:\n%s", got, tr, want)
	}
}

// meter is a Counter that adds up the bytes it counts.
type meter struct {
	c     budget.Counter
	mu    sync.Mutex
	bytes int
}

func (m *meter) Count(text string) int {
	m.mu.Lock()
	m.bytes += len(text)
	m.mu.Unlock()
	return m.c.Count(text)
}

// lineMeter is a meter that is also a LineCounter.
type lineMeter struct{ *meter }

func (m lineMeter) CountLines(ctx context.Context, text string) (int, []int, error) {
	m.mu.Lock()
	m.bytes += len(text)
	m.mu.Unlock()
	return budget.CountLines(ctx, m.c, text)
}

// TestFitCountsLinearly checks that Fit counts about the size of its
// input, not a prefix after another (a 1 MB line was counted 20 times).
func TestFitCountsLinearly(t *testing.T) {
	src, err := os.ReadFile(largeDiff)
	if err != nil {
		t.Fatal(err)
	}
	o200k := tokenizers().ForModel("gpt-4o")
	tests := []struct {
		name   string
		sec    budget.Section
		budget int
	}{
		{"a 2,248-line diff", budget.Section{Name: "d", Text: string(src)}, 2000},
		{"the diff around lines", budget.Section{Name: "d", Text: string(src), Interest: []int{100, 1500}}, 3000},
		{"a 256 KB line", budget.Section{Name: "l", Text: strings.Repeat("abcdefgh ", 28_000)}, 2000},
		{"a 256 KB line of interest", budget.Section{Name: "l", Text: "x\n" + strings.Repeat("abcdefgh ", 28_000), Interest: []int{2}}, 2000},
	}
	for _, tt := range tests {
		// A counter without CountLines counts the text whole, then line
		// by line; one with it, in one pass.
		for passes, byLine := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s, line counter %t", tt.name, byLine), func(t *testing.T) {
				m := &meter{c: o200k}
				var c budget.Counter = m
				if byLine {
					c = lineMeter{m}
				}
				got, tr := fit(t, []budget.Section{tt.sec}, tt.budget, c)
				if len(got) != 1 || !tr.Truncated || o200k.Count(got[0].Text) > tt.budget {
					t.Fatalf("got %d sections, truncation %+v", len(got), tr)
				}
				// The text (once or twice) and a few candidates of about
				// the budget's size (4 bytes a token at most here). Fit
				// used to count 3 to 7 times a long line.
				if limit := (passes+1)*len(tt.sec.Text) + 12*4*tt.budget; m.bytes > limit {
					t.Errorf("counted %d bytes for %d bytes of input, want at most %d", m.bytes, len(tt.sec.Text), limit)
				}
			})
		}
	}
}

func TestFitStopsWhenCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	secs := []budget.Section{{Name: "a", Text: "one\ntwo"}}
	for _, c := range []budget.Counter{tokenizers().ForModel("gpt-4o"), budget.Estimate{}} {
		if _, _, err := budget.Fit(ctx, secs, 1, c); !errors.Is(err, context.Canceled) {
			t.Errorf("Fit(%T) = %v, want context.Canceled", c, err)
		}
	}
}

// oneMBLine is a line of 1 MB of lowercase letters: a single piece for the
// tokenizers, the worst case of the byte-pair merge.
func oneMBLine() string {
	rng := rand.New(rand.NewPCG(3, 4))
	b := make([]byte, 1<<20)
	for i := range b {
		b[i] = byte('a' + rng.IntN(26))
	}
	return string(b)
}

func BenchmarkCount1MBLine(b *testing.B) {
	line := oneMBLine()
	c := tokenizers().ForModel("gpt-4o")
	c.Count("warm up")
	b.SetBytes(int64(len(line)))
	defer budget.ReportCPU(b, len(line))()
	for b.Loop() {
		c.Count(line)
	}
}

func BenchmarkFit1MBLine(b *testing.B) {
	line := oneMBLine()
	c := tokenizers().ForModel("gpt-4o")
	c.Count("warm up")
	secs := []budget.Section{{Name: "min.js", Text: "// minified\n" + line + "\n", Interest: []int{2}}}
	b.SetBytes(int64(len(line)))
	defer budget.ReportCPU(b, len(line))()
	for b.Loop() {
		fit(b, secs, 8000, c)
	}
}

// BenchmarkCount5000LineFile counts a Go file of 5,000 lines, this
// package's sources repeated.
func BenchmarkCount5000LineFile(b *testing.B) {
	var lines []string
	for _, f := range []string{"fit.go", "counter.go", "bpe.go", "prompt.go"} {
		src, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		lines = append(lines, strings.Split(string(src), "\n")...)
	}
	var sb strings.Builder
	for i := range 5000 {
		sb.WriteString(lines[i%len(lines)])
		sb.WriteByte('\n')
	}
	text := sb.String()
	c := tokenizers().ForModel("gpt-4o")
	c.Count("warm up")
	b.SetBytes(int64(len(text)))
	defer budget.ReportCPU(b, len(text))()
	for b.Loop() {
		c.Count(text)
	}
}

func BenchmarkCount5000Lines(b *testing.B) {
	src, err := os.ReadFile(largeDiff)
	if err != nil {
		b.Fatal(err)
	}
	lines := strings.Split(string(src), "\n")
	var sb strings.Builder
	for i := range 5000 {
		sb.WriteString(lines[i%len(lines)])
		sb.WriteByte('\n')
	}
	text := sb.String()
	tk := tokenizers()
	for _, model := range []string{"gpt-4o", "gpt-4", "llama3"} {
		c := tk.ForModel(model)
		c.Count("warm up") // load the vocabulary outside the timing
		b.Run(model, func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				c.Count(text)
			}
		})
	}
}

func BenchmarkFit5000Lines(b *testing.B) {
	src, err := os.ReadFile(largeDiff)
	if err != nil {
		b.Fatal(err)
	}
	lines := strings.Split(string(src), "\n")
	var sb strings.Builder
	for i := range 5000 {
		sb.WriteString(lines[i%len(lines)])
		sb.WriteByte('\n')
	}
	c := tokenizers().ForModel("gpt-4o")
	secs := []budget.Section{{Name: "big.go", Text: sb.String(), Interest: []int{100, 2500, 4900}}}
	c.Count("warm up")
	for b.Loop() {
		fit(b, secs, 8000, c)
	}
}

func TestCountMessages(t *testing.T) {
	c := tokenizers().ForModel("gpt-4o")
	msgs := []openai.ChatCompletionMessage{
		{Role: "system", Content: "You review code."},
		{Role: "user", Content: "Review main.go"},
	}
	base := budget.CountMessages(c, msgs, nil)
	// 3 for the reply, and per message 3 + role + content.
	want := 3 + (3 + c.Count("system") + c.Count("You review code.")) + (3 + c.Count("user") + c.Count("Review main.go"))
	if base != want {
		t.Errorf("CountMessages = %d, want %d", base, want)
	}
	msgs = append(msgs, openai.ChatCompletionMessage{Role: "assistant", ToolCalls: []openai.ToolCall{{
		ID: "call_1", Type: "function", Function: openai.FunctionCall{Name: "list_files", Arguments: `{"directory":"."}`},
	}}})
	tools := []openai.Tool{{Type: "function", Function: &openai.FunctionDefinition{
		Name: "list_files", Description: "List files.", Parameters: json.RawMessage(`{"type":"object","properties":{}}`),
	}}}
	if got := budget.CountMessages(c, msgs, tools); got <= base+10 {
		t.Errorf("tool calls and definitions add only %d tokens", got-base)
	}
}

// fit runs budget.Fit, failing the test on an error.
func fit(t testing.TB, secs []budget.Section, limit int, c budget.Counter) ([]budget.Section, review.Truncation) {
	t.Helper()
	got, tr, err := budget.Fit(t.Context(), secs, limit, c)
	if err != nil {
		t.Fatalf("Fit: %v", err)
	}
	return got, tr
}
