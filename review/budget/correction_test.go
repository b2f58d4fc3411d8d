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

// TestCorrectionCount checks the corrected count of each part: the
// ASCII part times Factor, the non-ASCII part at a token per byte coming
// down to the learned ratio, never below it.
func TestCorrectionCount(t *testing.T) {
	h := budget.CorrectionHeadroom
	s := budget.Split{ASCII: 1000, Other: 100, OtherBytes: 400}
	tests := []struct {
		name string
		c    budget.Correction
		want float64
	}{
		{"nothing learned: 1.25 and a token per byte", budget.Correction{}, 1250 + 400},
		{"the other ratio learned, no sample: still a token per byte", budget.Correction{OtherRatio: 2}, 1250 + 400},
		{"half way down", budget.Correction{OtherRatio: 2, OtherSamples: budget.CorrectionDecaySamples / 2}, 1250 + (400+200*h)/2},
		{"down to the learned ratio", budget.Correction{OtherRatio: 2, OtherSamples: budget.CorrectionDecaySamples}, 1250 + 200*h},
		{"a ratio above a token per byte raises it at once", budget.Correction{OtherRatio: 5}, 1250 + 500*h},
		{"both learned", budget.Correction{Ratio: 1, Samples: 1000, OtherRatio: 3, OtherSamples: 1000}, 1000*h + 300*h},
	}
	for _, tt := range tests {
		if got, want := tt.c.Count(s), int(math.Ceil(tt.want-1e-9)); got != want {
			t.Errorf("%s: Count(%+v) = %d, want %d", tt.name, s, got, want)
		}
	}
}

// TestTeach checks what a prompt teaches of each part's ratio.
func TestTeach(t *testing.T) {
	ascii := budget.Correction{Ratio: 1.2, Samples: 10}
	tests := []struct {
		name   string
		c      budget.Correction
		server int
		s      budget.Split
		want   budget.Sample
		ok     bool
	}{
		{"ASCII: a sample of the ASCII ratio", budget.Correction{}, 1300, budget.Split{ASCII: 1000}, budget.Sample{Ratio: 1.3, Counts: true}, true},
		{"a few non-ASCII tokens are put to the ASCII part", budget.Correction{}, 1300, budget.Split{ASCII: 980, Other: 20, OtherBytes: 60},
			budget.Sample{Ratio: 1300.0 / 980, Counts: true}, true},
		{"too short to say", budget.Correction{}, 300, budget.Split{ASCII: budget.MinCorrectionSample - 1}, budget.Sample{}, false},
		{"no usage reported", budget.Correction{}, 0, budget.Split{ASCII: 1000}, budget.Sample{}, false},
		{"non-ASCII: what the ASCII part does not explain", ascii, 1200 + 2*600, budget.Split{ASCII: 1000, Other: 600, OtherBytes: 2400},
			budget.Sample{Other: true, Ratio: 2, Counts: true}, true},
		{"too few non-ASCII tokens to be a sample", ascii, 1200 + 2*100, budget.Split{ASCII: 1000, Other: 100, OtherBytes: 400},
			budget.Sample{Other: true, Ratio: 2}, true},
		{"all explained: no ratio", ascii, 1000, budget.Split{ASCII: 1000, Other: 600, OtherBytes: 2400},
			budget.Sample{Other: true, Counts: true}, true},
		{"ASCII ratio unknown: what a token per byte does not explain", budget.Correction{}, 1500 + 400, budget.Split{ASCII: 1000, Other: 100, OtherBytes: 400},
			budget.Sample{Ratio: 1.5}, true},
		{"ASCII ratio unknown, explained by a token per byte", budget.Correction{}, 1000, budget.Split{ASCII: 400, Other: 600, OtherBytes: 2400},
			budget.Sample{}, true},
		{"ASCII ratio unknown, no ASCII", budget.Correction{}, 3000, budget.Split{Other: 600, OtherBytes: 1200},
			budget.Sample{Other: true, Ratio: 5}, true},
	}
	for _, tt := range tests {
		got, ok := tt.c.Teach(tt.server, tt.s)
		if ok != tt.ok || got.Other != tt.want.Other || got.Counts != tt.want.Counts || math.Abs(got.Ratio-tt.want.Ratio) > 1e-9 {
			t.Errorf("%s: Teach(%d, %+v) = %+v, %t; want %+v, %t", tt.name, tt.server, tt.s, got, ok, tt.want, tt.ok)
		}
	}
}

// TestObserve checks that each sample raises its part's ratio only and
// counts when it is a sample.
func TestObserve(t *testing.T) {
	c := budget.Correction{Ratio: 1.2, Samples: 3, OtherRatio: 2, OtherSamples: 5}
	tests := []struct {
		smp  budget.Sample
		want budget.Correction
	}{
		{budget.Sample{Ratio: 1.3, Counts: true}, budget.Correction{Ratio: 1.3, Samples: 4, OtherRatio: 2, OtherSamples: 5}},
		{budget.Sample{Ratio: 1.1, Counts: true}, budget.Correction{Ratio: 1.2, Samples: 4, OtherRatio: 2, OtherSamples: 5}},
		{budget.Sample{Ratio: 1.5}, budget.Correction{Ratio: 1.5, Samples: 3, OtherRatio: 2, OtherSamples: 5}},
		{budget.Sample{Other: true, Ratio: 2.5, Counts: true}, budget.Correction{Ratio: 1.2, Samples: 3, OtherRatio: 2.5, OtherSamples: 6}},
		{budget.Sample{Other: true, Ratio: 1}, budget.Correction{Ratio: 1.2, Samples: 3, OtherRatio: 2, OtherSamples: 5}},
	}
	for _, tt := range tests {
		if got := c.Observe(tt.smp); got != tt.want {
			t.Errorf("Observe(%+v) = %+v, want %+v", tt.smp, got, tt.want)
		}
	}
}

// TestCorrectedCounter checks that a model without a known tokenizer is
// counted with o200k_base's split, each part corrected, which what is
// learned changes at once, and that known models are not corrected.
func TestCorrectedCounter(t *testing.T) {
	tk := tokenizers()
	corr := budget.NewCorrections([]budget.Correction{{Model: "qwen", Ratio: 2, Samples: 1000, OtherRatio: 3, OtherSamples: 1000}})
	text := strings.Repeat("func main() { fmt.Println(\"héllo\") }\n", 50)
	base := tk.ForModel("gpt-4o").Count(text)
	sp, err := tk.Base("llama3").CountSplit(t.Context(), text)
	if err != nil || sp.Total() != base || sp.Other == 0 || sp.OtherBytes <= sp.Other {
		t.Fatalf("split %+v, %v; want %d tokens, some not ASCII", sp, err, base)
	}
	llama := tk.ForModelCorrected("llama3", corr)
	if got, want := llama.Count(text), int(math.Ceil(float64(sp.ASCII)*1.25+float64(sp.OtherBytes))); got != want {
		t.Errorf("before learning: %d tokens, want %d", got, want)
	}
	corr.Observe("llama3", budget.Sample{Ratio: 1.6})
	if got, want := llama.Count(text), int(math.Ceil(float64(sp.ASCII)*1.6*budget.CorrectionHeadroom+float64(sp.OtherBytes))); got != want {
		t.Errorf("after learning 1.6: %d tokens, want %d", got, want)
	}
	h := budget.CorrectionHeadroom
	if got, want := tk.ForModelCorrected("qwen", corr).Count(text), int(math.Ceil(float64(sp.ASCII)*2*h+float64(sp.Other)*3*h)); got != want {
		t.Errorf("loaded correction: %d tokens, want %d", got, want)
	}
	total, lines, err := budget.CountLines(t.Context(), llama, text)
	if err != nil || total != llama.Count(text) || len(lines) != 50 {
		t.Errorf("CountLines = %d, %d lines, %v", total, len(lines), err)
	}
	if got := tk.ForModelCorrected("gpt-4o", corr).Count(text); got != base {
		t.Errorf("gpt-4o corrected to %d tokens, want o200k_base's %d", got, base)
	}
	corr.Learn(budget.Correction{Model: "llama3", Ratio: 1.7, Samples: 5000, OtherRatio: 2, OtherSamples: 7})
	if k := corr.Get("llama3"); k.Ratio != 1.7 || k.Samples != 5000 || k.OtherRatio != 2 || k.OtherSamples != 7 {
		t.Errorf("after Learn: %+v", k)
	}
	corr.Learn(budget.Correction{Model: "llama3", Ratio: 1.1, Samples: 3, OtherRatio: 1})
	if k := corr.Get("llama3"); k.Ratio != 1.7 || k.Samples != 5000 || k.OtherRatio != 2 || k.OtherSamples != 7 {
		t.Errorf("Learn lowered the correction: %+v", k)
	}
	if k := corr.Get("qwen"); k.Model != "qwen" {
		t.Errorf("a loaded correction lost its model: %+v", k)
	}
}

func TestCorrectionsConcurrent(t *testing.T) {
	corr := budget.NewCorrections(nil)
	c := tokenizers().ForModelCorrected("m", corr)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			corr.Observe("m", budget.Sample{Ratio: 1 + float64(i)/10, Counts: true})
			c.Count("some text to count")
		})
	}
	wg.Wait()
	if k := corr.Get("m"); k.Samples != 8 || math.Abs(k.Ratio-1.7) > 1e-9 {
		t.Errorf("after 8 observations: %+v", k)
	}
}

// TestCorrectionScriptSwitch learns a model counted with cl100k_base from
// prompts of code, long past the decay of the starting margin, then
// checks that prompts in other scripts, never seen, are not undercounted:
// the ratio learned on code does not apply to them.
func TestCorrectionScriptSwitch(t *testing.T) {
	tk := tokenizers()
	o200k, cl100k := tk.Base("llama3"), tk.ForModel("gpt-4")
	corr := budget.NewCorrections(nil)
	code := "\tif err := s.parseConfig(ctx, user); err != nil { return fmt.Errorf(\"request deadline: %w\", err) } // 123\n"
	for i := range 2 * budget.CorrectionDecaySamples {
		text := strings.Repeat(code, 20+i%50)
		sp, err := o200k.CountSplit(t.Context(), text)
		if err != nil {
			t.Fatal(err)
		}
		if smp, ok := corr.Get("m").Teach(cl100k.Count(text), sp); ok {
			corr.Observe("m", smp)
		}
	}
	if k := corr.Get("m"); k.Samples != 2*budget.CorrectionDecaySamples || k.Factor() > 1.1 {
		t.Fatalf("after code: %+v, factor %.3f; want the margin given up", k, k.Factor())
	}
	for name, line := range map[string]string{
		"Greek":   "// Ωμέγα καλημέρα κόσμε Ελλάδα\n",
		"Chinese": "// 的一是不了人我在有他这中大来上国个到说们为子和你地出道也时年得\n",
		"Russian": "// Привет, мир: проверка контекста\n",
		"emoji":   "// ✓ 🚀 → naïve façade ünïcödé\n",
	} {
		text := strings.Repeat(line, 200)
		sp, err := o200k.CountSplit(t.Context(), text)
		if err != nil {
			t.Fatal(err)
		}
		if got, server := corr.Get("m").Count(sp), cl100k.Count(text); got < server {
			t.Errorf("%s: counted %d tokens, the server %d", name, got, server)
		}
	}
}
