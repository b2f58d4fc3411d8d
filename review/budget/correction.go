package budget

import (
	"context"
	"math"
	"sync"
	"time"
)

// A model without a known tokenizer is counted with o200k_base, times a
// correction learned per model from the prompt tokens its server reports
// (usage.prompt_tokens): the largest ratio of the server's count to
// o200k_base's seen on a prompt, with headroom. Until enough prompts were
// seen the correction starts from UnknownModelPercent and comes down to
// what was learned slowly, sample by sample; a ratio higher than the
// correction raises it at once. So the correction only ever rises
// quickly: a prompt unlike those seen before is still counted with the
// margin of the largest ratio seen, and the starting margin is given up
// only as the evidence grows. It never falls below the largest ratio seen
// (with headroom): that ratio is what some real prompt needed.
const (
	// CorrectionHeadroom multiplies the largest ratio seen: prompts vary,
	// and the next one may need a little more than any seen so far.
	CorrectionHeadroom = 1.05
	// CorrectionDecaySamples is how many prompts it takes to come down
	// from UnknownModelPercent to the learned ratio, linearly.
	CorrectionDecaySamples = 200
	// MinCorrectionSample is the fewest tokens (o200k_base's count) a
	// prompt must have to teach the ratio: on a short prompt the server's
	// fixed chat template would dominate it.
	MinCorrectionSample = 500
)

// Correction is what was learned about how a model's server counts
// against o200k_base.
type Correction struct {
	Model string
	// Ratio is the largest ratio seen of the server's prompt tokens to
	// o200k_base's count of the same request; 0 when none was seen.
	Ratio float64
	// Samples is how many prompts taught it.
	Samples   int
	UpdatedAt time.Time
}

// Factor is the number o200k_base's count is multiplied by: Ratio with
// CorrectionHeadroom, or more while the margin of UnknownModelPercent
// decays over the first CorrectionDecaySamples prompts.
func (c Correction) Factor() float64 {
	start := float64(UnknownModelPercent) / 100
	learned := c.Ratio * CorrectionHeadroom
	done := min(float64(c.Samples)/CorrectionDecaySamples, 1)
	return max(learned, start-(start-learned)*done)
}

// Merge combines two records of one model (another replica's, the
// database's): the larger ratio and sample count, the later time.
func (c Correction) Merge(o Correction) Correction {
	c.Ratio = max(c.Ratio, o.Ratio)
	c.Samples = max(c.Samples, o.Samples)
	if o.UpdatedAt.After(c.UpdatedAt) {
		c.UpdatedAt = o.UpdatedAt
	}
	return c
}

// CorrectionStore keeps the corrections where every replica sees them.
// The server's store implements it; Observe's caller may run without one
// (the CLI), learning for its own run only.
type CorrectionStore interface {
	// Corrections returns every model's correction.
	Corrections(ctx context.Context) ([]Correction, error)
	// ObserveRatio records one prompt's ratio for model: the stored ratio
	// becomes the larger of the two and the samples one more. It returns
	// the stored correction.
	ObserveRatio(ctx context.Context, model string, ratio float64) (Correction, error)
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
// UnknownModelPercent).
func NewCorrections(known []Correction) *Corrections {
	c := &Corrections{now: time.Now, m: map[string]Correction{}}
	for _, k := range known {
		c.m[k.Model] = c.m[k.Model].Merge(k)
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

// Factor returns model's factor (Correction.Factor).
func (c *Corrections) Factor(model string) float64 { return c.Get(model).Factor() }

// Ratio returns the ratio a prompt of counted tokens (o200k_base's count)
// that the server counted as server tokens teaches, and whether it teaches
// anything: prompts shorter than MinCorrectionSample and reports of no
// tokens teach nothing.
func Ratio(server, counted int) (float64, bool) {
	if counted < MinCorrectionSample || server <= 0 {
		return 0, false
	}
	return float64(server) / float64(counted), true
}

// Observe learns ratio for model in memory and returns the correction.
func (c *Corrections) Observe(model string, ratio float64) Correction {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := c.m[model]
	k.Model, k.Ratio, k.Samples, k.UpdatedAt = model, max(k.Ratio, ratio), k.Samples+1, c.now()
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
// o200k_base's count times the model's current factor, rounded up.
type corrected struct {
	c     ContextCounter
	model string
	corr  *Corrections
}

// ForModelCorrected is ForModel, except that a model whose tokenizer is
// not known is counted with o200k_base times corr's factor for it, read
// at every count so that what is learned applies at once. A nil corr is
// ForModel.
func (t *Tokenizers) ForModelCorrected(model string, corr *Corrections) ContextCounter {
	if corr == nil || EncodingForModel(model) != "" {
		return t.ForModel(model)
	}
	return Corrected(t.o200k, model, corr)
}

// Corrected counts with base (o200k_base, or a Memo over it) times corr's
// factor for model, read at every count, rounded up.
func Corrected(base ContextCounter, model string, corr *Corrections) ContextCounter {
	return corrected{c: base, model: model, corr: corr}
}

// Base returns the tokenizer a model is counted with before any
// correction: its own encoding, or o200k_base.
func (t *Tokenizers) Base(model string) ContextCounter {
	if EncodingForModel(model) == CL100kBase {
		return t.cl100k
	}
	return t.o200k
}

// Count implements Counter.
func (k corrected) Count(text string) int {
	return scaleBy(k.c.Count(text), k.corr.Factor(k.model))
}

// CountContext implements ContextCounter.
func (k corrected) CountContext(ctx context.Context, text string) (int, error) {
	n, err := k.c.CountContext(ctx, text)
	return scaleBy(n, k.corr.Factor(k.model)), err
}

// CountLines implements LineCounter, scaling the total and each line.
func (k corrected) CountLines(ctx context.Context, text string) (int, []int, error) {
	f := k.corr.Factor(k.model)
	n, lines, err := CountLines(ctx, k.c, text)
	for i := range lines {
		lines[i] = scaleBy(lines[i], f)
	}
	return scaleBy(n, f), lines, err
}

// scaleBy returns n times f, rounded up (a hair of floating-point error
// below an integer does not round it up).
func scaleBy(n int, f float64) int {
	return int(math.Ceil(float64(n)*f - 1e-9))
}
