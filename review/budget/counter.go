// Package budget fits a model's prompt into its token budget (DESIGN.md
// section 4): it estimates tokens per section with the model's tokenizer,
// shares the budget between sections by proportional allocation, truncates
// files around their lines of interest and reports what was cut.
package budget

import (
	"strings"
	"sync"

	tiktoken "github.com/pkoukk/tiktoken-go"
	tiktokenloader "github.com/pkoukk/tiktoken-go-loader"
)

// Counter estimates how many tokens a text costs a model. Implementations
// are safe for concurrent use.
type Counter interface {
	Count(text string) int
}

// Encodings are the tiktoken encodings the package knows.
const (
	O200kBase  = "o200k_base"  // gpt-4o, gpt-4.1, gpt-4.5, gpt-5, o1, o3, o4
	CL100kBase = "cl100k_base" // gpt-4, gpt-3.5-turbo
)

// Estimate counts one token per 4 bytes of UTF-8, rounded up: OpenAI's rule
// of thumb for English text and code. For text in other scripts, which
// takes 2 or 3 bytes a character, it errs on the high side. It is used for
// models whose tokenizer is not known (Llama, Mistral, Qwen...).
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
// gpt-4.5, gpt-5 and the o-series; cl100k_base for gpt-4 and gpt-3.5;
// Estimate for any other model. A provider prefix such as "openai/" or
// "azure/" is ignored.
func (t *Tokenizers) ForModel(model string) Counter {
	switch EncodingForModel(model) {
	case O200kBase:
		return t.o200k
	case CL100kBase:
		return t.cl100k
	}
	return Estimate{}
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

// encoding is one tiktoken encoding, loaded on first use.
type encoding struct {
	name string
	once sync.Once
	tk   *tiktoken.Tiktoken
	err  error
}

// Count returns the number of tokens of text. Special tokens such as
// <|endoftext|> are counted as ordinary text. Should the embedded
// vocabulary fail to load, which only a broken build can cause, it falls
// back to Estimate.
func (e *encoding) Count(text string) int {
	e.once.Do(e.load)
	if e.err != nil {
		return Estimate{}.Count(text)
	}
	return len(e.tk.EncodeOrdinary(text))
}

// load builds the encoder from the embedded vocabulary without touching
// tiktoken-go's package-level loader and cache.
func (e *encoding) load() {
	var pattern string
	var special map[string]int
	switch e.name {
	case O200kBase:
		pattern = o200kPattern
		special = map[string]int{tiktoken.ENDOFTEXT: 199999, tiktoken.ENDOFPROMPT: 200018}
	case CL100kBase:
		pattern = cl100kPattern
		special = map[string]int{
			tiktoken.ENDOFTEXT: 100257, tiktoken.FIM_PREFIX: 100258, tiktoken.FIM_MIDDLE: 100259,
			tiktoken.FIM_SUFFIX: 100260, tiktoken.ENDOFPROMPT: 100276,
		}
	}
	ranks, err := tiktokenloader.NewOfflineLoader().LoadTiktokenBpe(e.name + ".tiktoken")
	if err != nil {
		e.err = err
		return
	}
	bpe, err := tiktoken.NewCoreBPE(ranks, special, pattern)
	if err != nil {
		e.err = err
		return
	}
	set := make(map[string]any, len(special))
	for k := range special {
		set[k] = true
	}
	e.tk = tiktoken.NewTiktoken(bpe, &tiktoken.Encoding{
		Name: e.name, PatStr: pattern, MergeableRanks: ranks, SpecialTokens: special,
	}, set)
}

// The split patterns of the encodings, as in tiktoken-go v0.1.8 (which does
// not export them) and OpenAI's tiktoken.
const (
	o200kPattern = `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?` +
		`|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?` +
		`|\p{N}{1,3}` +
		`| ?[^\s\p{L}\p{N}]+[\r\n/]*` +
		`|\s*[\r\n]+` +
		`|\s+(?!\S)` +
		`|\s+`
	cl100kPattern = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
)
