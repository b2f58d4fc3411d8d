// Package budget fits a model's prompt into its token budget
// (docs/architecture.md): it estimates tokens per section with the model's
// tokenizer, shares the budget between sections by proportional allocation,
// truncates files around their lines of interest and reports what was cut.
package budget

import (
	"context"
	"strings"
	"sync"

	tiktokenloader "github.com/pkoukk/tiktoken-go-loader"
)

// Counter estimates how many tokens a text costs a model. Implementations
// are safe for concurrent use.
type Counter interface {
	Count(text string) int
}

// ContextCounter is a Counter whose count of a long text stops early, with
// ctx's error, once ctx is done. The counters of Tokenizers implement it.
type ContextCounter interface {
	Counter
	CountContext(ctx context.Context, text string) (int, error)
}

// LineCounter counts a text and its lines in one pass: total is the
// text's count, lines[i] the tokens of the pieces that start on line i
// (lines numbered as a final newline ends the last line; "" has none),
// adding up to total. A line's share is an estimate of its own count,
// close to it. The counters of Tokenizers implement it.
type LineCounter interface {
	CountLines(ctx context.Context, text string) (total int, lines []int, err error)
}

// CountLines counts text and its lines with c: in one pass through c's
// CountLines when it has one; otherwise the text, then each line.
func CountLines(ctx context.Context, c Counter, text string) (int, []int, error) {
	if lc, ok := c.(LineCounter); ok {
		return lc.CountLines(ctx, text)
	}
	total, err := CountContext(ctx, c, text)
	if err != nil {
		return 0, nil, err
	}
	ls := splitLines(text)
	lines := make([]int, len(ls))
	for i, l := range ls {
		if lines[i], err = CountContext(ctx, c, l); err != nil {
			return 0, nil, err
		}
	}
	return total, lines, nil
}

// lineCount is len(splitLines(text)).
func lineCount(text string) int {
	if text == "" {
		return 0
	}
	return strings.Count(strings.TrimSuffix(text, "\n"), "\n") + 1
}

// CountContext counts text with c, through c's CountContext when it has
// one; otherwise it checks ctx once, then counts.
func CountContext(ctx context.Context, c Counter, text string) (int, error) {
	if cc, ok := c.(ContextCounter); ok {
		return cc.CountContext(ctx, text)
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	return c.Count(text), nil
}

// Encodings are the tiktoken encodings the package knows.
const (
	O200kBase  = "o200k_base"  // gpt-4o, gpt-4.1, gpt-4.5, gpt-5, o1, o3, o4
	CL100kBase = "cl100k_base" // gpt-4, gpt-3.5-turbo
)

// UnknownModelPercent is how many tokens, in percent of the o200k_base
// count, a model whose tokenizer is not known (Llama, Mistral, Qwen...) is
// taken to need. Those tokenizers have smaller or similar vocabularies and
// count as many tokens as o200k_base or more (cl100k_base, the base of
// Llama 3's, counts up to ~10% more on code); the margin keeps the
// estimate on the high side. It is where the correction of the ASCII part
// of a text, learned per model from the prompt tokens its server reports,
// starts (Correction, ForModelCorrected); ForModel keeps it fixed for the
// whole text.
const UnknownModelPercent = 125

// Estimate counts one token per 4 bytes of UTF-8, rounded up. It is cheap
// and deterministic but does NOT err on the high side: on Go code it counts
// about 15% fewer tokens than o200k_base, on long identifiers and base64
// two to three times fewer. Use it where the exact count does not matter
// (fakes, tests); Tokenizers never hands it out.
type Estimate struct{}

// Count returns ceil(len(text)/4).
func (Estimate) Count(text string) int { return (len(text) + 3) / 4 }

// Tokenizers hands out counters by model name. The vocabularies are
// embedded (github.com/pkoukk/tiktoken-go-loader: nothing is downloaded)
// and each is loaded once, on first use, then shared; a Tokenizers is safe
// for concurrent use and is meant to live as long as the process.
type Tokenizers struct {
	o200k, cl100k *encoding
}

// NewTokenizers returns counters for the OpenAI encodings, not loaded yet.
func NewTokenizers() *Tokenizers {
	return &Tokenizers{o200k: &encoding{name: O200kBase}, cl100k: &encoding{name: CL100kBase}}
}

// ForModel returns the counter of a model: o200k_base for gpt-4o, gpt-4.1,
// gpt-4.5, gpt-5 and the o-series; cl100k_base for gpt-4 and gpt-3.5; for
// any other model o200k_base's count times UnknownModelPercent/100, rounded
// up. A provider prefix such as "openai/" or "azure/" is ignored.
func (t *Tokenizers) ForModel(model string) ContextCounter {
	switch EncodingForModel(model) {
	case O200kBase:
		return t.o200k
	case CL100kBase:
		return t.cl100k
	}
	return scaled{t.o200k}
}

// EncodingForModel names the tiktoken encoding of a model, or "" when it
// is not an OpenAI model the package knows.
func EncodingForModel(model string) string {
	m := strings.ToLower(model)
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:]
	}
	switch {
	case strings.HasPrefix(m, "gpt-4o"), strings.HasPrefix(m, "gpt-4.1"), strings.HasPrefix(m, "gpt-4.5"),
		strings.HasPrefix(m, "gpt-5"), strings.HasPrefix(m, "chatgpt-4o"),
		isOSeries(m):
		return O200kBase
	case strings.HasPrefix(m, "gpt-4"), strings.HasPrefix(m, "gpt-3.5"), strings.HasPrefix(m, "gpt-35"):
		return CL100kBase
	}
	return ""
}

// isOSeries reports whether m is o1, o3, o4... possibly with a suffix.
func isOSeries(m string) bool {
	if len(m) < 2 || m[0] != 'o' || m[1] < '1' || m[1] > '9' {
		return false
	}
	return len(m) == 2 || m[2] == '-'
}

// scaled is the counter of the models whose tokenizer is not known.
type scaled struct{ c ContextCounter }

// Count returns c's count times UnknownModelPercent/100, rounded up.
func (s scaled) Count(text string) int { return scale(s.c.Count(text)) }

// CountContext is Count, stopping with ctx's error when ctx is done.
func (s scaled) CountContext(ctx context.Context, text string) (int, error) {
	n, err := s.c.CountContext(ctx, text)
	return scale(n), err
}

// CountLines implements LineCounter, scaling the total and each line.
func (s scaled) CountLines(ctx context.Context, text string) (int, []int, error) {
	n, lines, err := CountLines(ctx, s.c, text)
	for i := range lines {
		lines[i] = scale(lines[i])
	}
	return scale(n), lines, err
}

func scale(n int) int { return (n*UnknownModelPercent + 99) / 100 }

// encoding is one tiktoken encoding, loaded on first use.
type encoding struct {
	name string
	once sync.Once
	v    *vocab
	next func(rs []rune, i int) int // the end of the piece at rs[i]
	err  error
}

// load reads the embedded vocabulary, without touching tiktoken-go's
// package-level loader and cache.
func (e *encoding) load() {
	e.next = o200kNext
	if e.name == CL100kBase {
		e.next = cl100kNext
	}
	ranks, err := tiktokenloader.NewOfflineLoader().LoadTiktokenBpe(e.name + ".tiktoken")
	if err != nil {
		e.err = err
		return
	}
	e.v = newVocab(ranks)
}
