package budget

import (
	"context"
	"math"
	"sync"
	"time"
)

// A model without a known tokenizer is counted with o200k_base, split by
// script (Split), each part times a ratio learned per model from the
// prompt tokens its server reports (usage.prompt_tokens, or the count a
// context_length_exceeded error states): tokenizers agree within a few
// tens of percent on ASCII text but not on other scripts, and a ratio
// learned on code says nothing of a later prompt in Greek or Chinese.
//
// The ASCII part starts at UnknownModelPercent. The non-ASCII part starts
// at a token per UTF-8 byte of its pieces, a bound no byte-level tokenizer
// (tiktoken's, Llama 3's, Qwen's...) nor a SentencePiece one with byte
// fallback (Llama 2's, Mistral's) exceeds, since each of their tokens
// stands for at least one byte. Each part's margin is given up slowly,
// prompt by prompt, over CorrectionDecaySamples prompts of mostly that
// part, down to the largest ratio those prompts showed, with
// CorrectionHeadroom; a prompt showing a larger ratio raises it at once.
// So a part is never counted below what a real prompt needed, and a
// prompt unlike those seen before is still counted with the margin of the
// largest ratio seen.
const (
	// CorrectionHeadroom multiplies the largest ratio seen: prompts vary,
	// and the next one may need a little more than any seen so far.
	CorrectionHeadroom = 1.05
	// CorrectionDecaySamples is how many prompts it takes to come down
	// from the starting margin to the learned ratio, linearly.
	CorrectionDecaySamples = 200
	// MinCorrectionSample is the fewest tokens (o200k_base's count) a
	// prompt must have to teach a ratio: on a short prompt the server's
	// fixed chat template would dominate it.
	MinCorrectionSample = 500
	// ASCIISamplePercent is the largest share, in percent of its tokens,
	// of non-ASCII tokens a prompt may have to teach the ASCII ratio: its
	// tokens are all put to the ASCII part, which errs high by at most
	// that share.
	ASCIISamplePercent = 2
)

// Correction is what was learned about how a model's server counts
// against o200k_base, the ASCII and the non-ASCII parts of a text apart
// (Split).
type Correction struct {
	Model string
	// Ratio is the largest ratio seen of the server's prompt tokens to
	// o200k_base's count of the ASCII part; 0 when none was seen.
	Ratio float64
	// Samples is how many prompts of ASCII text taught it.
	Samples int
	// OtherRatio is the largest ratio seen for the non-ASCII part: what
	// the ASCII part, at Ratio, did not explain of the server's count, per
	// non-ASCII token of o200k_base; 0 when none was seen.
	OtherRatio float64
	// OtherSamples is how many prompts of mostly non-ASCII text taught it.
	OtherSamples int
	UpdatedAt    time.Time
}

// Factor is the number the ASCII part's count is multiplied by: Ratio
// with CorrectionHeadroom, or more while the margin of
// UnknownModelPercent decays over the first CorrectionDecaySamples
// prompts.
func (c Correction) Factor() float64 {
	start := float64(UnknownModelPercent) / 100
	return decayed(start, c.Ratio*CorrectionHeadroom, c.Samples)
}

// otherTokens is the non-ASCII part of s as the model counts it: a token
// per byte, coming down to OtherRatio with CorrectionHeadroom over the
// first CorrectionDecaySamples prompts, and never below it.
func (c Correction) otherTokens(s Split) float64 {
	return decayed(float64(s.OtherBytes), c.OtherRatio*CorrectionHeadroom*float64(s.Other), c.OtherSamples)
}

// decayed is the larger of learned and start coming down to it linearly
// over CorrectionDecaySamples samples.
func decayed(start, learned float64, samples int) float64 {
	done := min(float64(samples)/CorrectionDecaySamples, 1)
	return max(learned, start-(start-learned)*done)
}

// Count is the model's count of a text of o200k_base's split s:
// the ASCII part times Factor, plus the non-ASCII part, rounded up.
func (c Correction) Count(s Split) int {
	return int(math.Ceil(float64(s.ASCII)*c.Factor() + c.otherTokens(s) - 1e-9))
}

// Merge combines two records of one model (another replica's, the
// database's): the larger ratios and sample counts, the later time.
func (c Correction) Merge(o Correction) Correction {
	c.Ratio = max(c.Ratio, o.Ratio)
	c.Samples = max(c.Samples, o.Samples)
	c.OtherRatio = max(c.OtherRatio, o.OtherRatio)
	c.OtherSamples = max(c.OtherSamples, o.OtherSamples)
	if o.UpdatedAt.After(c.UpdatedAt) {
		c.UpdatedAt = o.UpdatedAt
	}
	return c
}

// Sample is what one prompt teaches: a ratio of one part, which the
// learned one is raised to when it is larger, and whether the prompt
// counts as one more sample of that part (brings its margin down).
type Sample struct {
	// Other is true when it teaches the non-ASCII ratio, false for the
	// ASCII one.
	Other bool
	// Ratio is never negative; 0 teaches no ratio.
	Ratio float64
	// Counts is true for a prompt of mostly that part.
	Counts bool
}

// Teach returns what a prompt of o200k_base's split s (SplitRequest) that
// the server counted as server tokens teaches, given c; false when
// nothing: a prompt shorter than MinCorrectionSample or a report of no
// tokens.
//
// A prompt whose non-ASCII tokens are at most ASCIISamplePercent of its
// tokens is a sample of the ASCII ratio, all its tokens put to the ASCII
// part. Once the ASCII ratio was sampled, any other prompt teaches the
// non-ASCII ratio what the ASCII part, at its ratio, does not explain, and
// is a sample of it when it has MinCorrectionSample non-ASCII tokens or
// more, enough to teach on their own. As the ASCII ratio is the largest
// seen, a prompt whose ASCII part needed less shows a non-ASCII ratio a
// little low, the more so the smaller its non-ASCII share; the largest
// over many prompts is that of those whose ASCII part needed the most,
// close to the truth, and a prompt whose ASCII part needed more than any
// before puts the difference to the non-ASCII part, the safe side.
// Before the ASCII ratio was sampled, such a prompt teaches the ASCII
// ratio what the non-ASCII part, at a token per byte, does not explain,
// as no sample. So every prompt seen, an overflowing one included, is
// covered by what was learned.
func (c Correction) Teach(server int, s Split) (Sample, bool) {
	total := s.Total()
	switch {
	case total < MinCorrectionSample || server <= 0:
		return Sample{}, false
	case s.Other*100 <= total*ASCIISamplePercent:
		return Sample{Ratio: float64(server) / float64(s.ASCII), Counts: true}, true
	case c.Samples == 0 && s.ASCII == 0:
		return Sample{Other: true, Ratio: float64(server) / float64(s.Other)}, true
	case c.Samples == 0:
		rest := float64(server) - float64(s.OtherBytes)
		return Sample{Ratio: max(rest/float64(s.ASCII), 0)}, true
	}
	rest := float64(server) - c.Ratio*float64(s.ASCII)
	return Sample{Other: true, Ratio: max(rest/float64(s.Other), 0), Counts: s.Other >= MinCorrectionSample}, true
}

// Observe returns c having learned smp (not touching UpdatedAt).
func (c Correction) Observe(smp Sample) Correction {
	n := 0
	if smp.Counts {
		n = 1
	}
	if smp.Other {
		c.OtherRatio, c.OtherSamples = max(c.OtherRatio, smp.Ratio), c.OtherSamples+n
	} else {
		c.Ratio, c.Samples = max(c.Ratio, smp.Ratio), c.Samples+n
	}
	return c
}

// CorrectionStore keeps the corrections where every replica sees them.
// The server's store implements it; Observe's caller may run without one
// (the CLI), learning for its own run only.
type CorrectionStore interface {
	// Corrections returns every model's correction.
	Corrections(ctx context.Context) ([]Correction, error)
	// ObserveRatio records one prompt's sample for model
	// (Correction.Observe): the stored ratio of its part becomes the
	// larger of the two and, when it counts, that part's samples one
	// more. It returns the stored correction.
	ObserveRatio(ctx context.Context, model string, smp Sample) (Correction, error)
}

// Corrections holds the corrections in memory, for the counters to read
// at every count. It is safe for concurrent use.
type Corrections struct {
	now func() time.Time
	mu  sync.RWMutex
	m   map[string]Correction
}

// NewCorrections returns corrections starting from known (those loaded
// from a CorrectionStore; none starts every model at
// UnknownModelPercent and a token per non-ASCII byte).
func NewCorrections(known []Correction) *Corrections {
	c := &Corrections{now: time.Now, m: map[string]Correction{}}
	for _, k := range known {
		m := c.m[k.Model].Merge(k)
		m.Model = k.Model
		c.m[k.Model] = m
	}
	return c
}

// Get returns model's correction (a zero one with the model's name when
// nothing was learned).
func (c *Corrections) Get(model string) Correction {
	c.mu.RLock()
	k, ok := c.m[model]
	c.mu.RUnlock()
	if !ok {
		k.Model = model
	}
	return k
}

// Factor returns the factor of model's ASCII part (Correction.Factor).
func (c *Corrections) Factor(model string) float64 { return c.Get(model).Factor() }

// Observe learns smp for model in memory and returns the correction.
func (c *Corrections) Observe(model string, smp Sample) Correction {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := c.m[model].Observe(smp)
	k.Model, k.UpdatedAt = model, c.now()
	c.m[model] = k
	return k
}

// Learn merges a stored correction (what ObserveRatio returned) into
// memory.
func (c *Corrections) Learn(k Correction) {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := c.m[k.Model].Merge(k)
	m.Model = k.Model
	c.m[k.Model] = m
}

// corrected is the counter of a model without a known tokenizer:
// o200k_base's count, split, corrected by the model's current
// correction (Correction.Count).
type corrected struct {
	c     SplitCounter
	model string
	corr  *Corrections
}

// ForModelCorrected is ForModel, except that a model whose tokenizer is
// not known is counted with o200k_base corrected by corr's correction for
// it (Correction.Count), read at every count so that what is learned
// applies at once. A nil corr is ForModel.
func (t *Tokenizers) ForModelCorrected(model string, corr *Corrections) ContextCounter {
	if corr == nil || EncodingForModel(model) != "" {
		return t.ForModel(model)
	}
	return Corrected(t.o200k, model, corr)
}

// Corrected counts with base (o200k_base, or a Memo over it) corrected by
// corr's correction for model, read at every count.
func Corrected(base SplitCounter, model string, corr *Corrections) ContextCounter {
	return corrected{c: base, model: model, corr: corr}
}

// Base returns the tokenizer a model is counted with before any
// correction: its own encoding, or o200k_base.
func (t *Tokenizers) Base(model string) SplitCounter {
	if EncodingForModel(model) == CL100kBase {
		return t.cl100k
	}
	return t.o200k
}

// Count implements Counter.
func (k corrected) Count(text string) int {
	n, _ := k.CountContext(context.Background(), text)
	return n
}

// CountContext implements ContextCounter.
func (k corrected) CountContext(ctx context.Context, text string) (int, error) {
	s, err := k.c.CountSplit(ctx, text)
	return k.corr.Get(k.model).Count(s), err
}

// CountLines implements LineCounter, correcting the total and each line.
func (k corrected) CountLines(ctx context.Context, text string) (int, []int, error) {
	c := k.corr.Get(k.model)
	s, split, err := k.c.CountSplitLines(ctx, text)
	lines := make([]int, len(split))
	for i, l := range split {
		lines[i] = c.Count(l)
	}
	return c.Count(s), lines, err
}
