package budget_test

import (
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/mergeguard/mergeguard/review/budget"
)

func TestCorrectionFactor(t *testing.T) {
	start := float64(budget.UnknownModelPercent) / 100
	tests := []struct {
		name string
		c    budget.Correction
		want float64
	}{
		{"nothing learned: the starting margin", budget.Correction{}, start},
		{"a higher ratio raises it at once", budget.Correction{Ratio: 1.5, Samples: 1}, 1.5 * budget.CorrectionHeadroom},
		{"a lower ratio lowers it slowly", budget.Correction{Ratio: 1.0, Samples: 20},
			start - (start-budget.CorrectionHeadroom)*20/budget.CorrectionDecaySamples},
		{"down to the learned ratio after the decay", budget.Correction{Ratio: 1.0, Samples: budget.CorrectionDecaySamples}, budget.CorrectionHeadroom},
		{"and never below", budget.Correction{Ratio: 0.8, Samples: 10 * budget.CorrectionDecaySamples}, 0.8 * budget.CorrectionHeadroom},
	}
	for _, tt := range tests {
		if got := tt.c.Factor(); math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("%s: Factor() = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestRatio(t *testing.T) {
	tests := []struct {
		server, counted int
		want            float64
		ok              bool
	}{
		{1300, 1000, 1.3, true},
		{900, 1000, 0.9, true},
		{300, budget.MinCorrectionSample - 1, 0, false}, // too short to say
		{0, 1000, 0, false},                             // no usage reported
	}
	for _, tt := range tests {
		if got, ok := budget.Ratio(tt.server, tt.counted); ok != tt.ok || math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("Ratio(%d, %d) = %v, %t; want %v, %t", tt.server, tt.counted, got, ok, tt.want, tt.ok)
		}
	}
}

// TestCorrectedCounter checks that a model without a known tokenizer is
// counted with o200k_base times its current factor, which what is learned
// changes at once, and that known models are not corrected.
func TestCorrectedCounter(t *testing.T) {
	tk := budget.NewTokenizers()
	corr := budget.NewCorrections([]budget.Correction{{Model: "qwen", Ratio: 2, Samples: 1000}})
	text := strings.Repeat("func main() { fmt.Println(\"héllo\") }\n", 50)
	base := tk.ForModel("gpt-4o").Count(text)
	llama := tk.ForModelCorrected("llama3", corr)
	if got, want := llama.Count(text), int(math.Ceil(float64(base)*1.25)); got != want {
		t.Errorf("before learning: %d tokens, want %d", got, want)
	}
	corr.Observe("llama3", 1.6)
	if got, want := llama.Count(text), int(math.Ceil(float64(base)*1.6*budget.CorrectionHeadroom)); got != want {
		t.Errorf("after learning 1.6: %d tokens, want %d", got, want)
	}
	if got, want := tk.ForModelCorrected("qwen", corr).Count(text), int(math.Ceil(float64(base)*2*budget.CorrectionHeadroom)); got != want {
		t.Errorf("loaded correction: %d tokens, want %d", got, want)
	}
	total, lines, err := budget.CountLines(t.Context(), llama, text)
	if err != nil || total != llama.Count(text) || len(lines) != 50 {
		t.Errorf("CountLines = %d, %d lines, %v", total, len(lines), err)
	}
	if got := tk.ForModelCorrected("gpt-4o", corr).Count(text); got != base {
		t.Errorf("gpt-4o corrected to %d tokens, want o200k_base's %d", got, base)
	}
	corr.Learn(budget.Correction{Model: "llama3", Ratio: 1.7, Samples: 5000})
	if k := corr.Get("llama3"); k.Ratio != 1.7 || k.Samples != 5000 {
		t.Errorf("after Learn: %+v", k)
	}
	corr.Learn(budget.Correction{Model: "llama3", Ratio: 1.1, Samples: 3})
	if k := corr.Get("llama3"); k.Ratio != 1.7 || k.Samples != 5000 {
		t.Errorf("Learn lowered the correction: %+v", k)
	}
}

func TestCorrectionsConcurrent(t *testing.T) {
	corr := budget.NewCorrections(nil)
	c := budget.NewTokenizers().ForModelCorrected("m", corr)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			corr.Observe("m", 1+float64(i)/10)
			c.Count("some text to count")
		})
	}
	wg.Wait()
	if k := corr.Get("m"); k.Samples != 8 || math.Abs(k.Ratio-1.7) > 1e-9 {
		t.Errorf("after 8 observations: %+v", k)
	}
}
