package store_test

import (
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/mergeguard/mergeguard/review/budget"
)

// TestObserveRatio checks that the stored ratio of a model only rises,
// that every observation counts, concurrent ones included, and that
// Corrections reads them all back.
func TestObserveRatio(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	steps := []struct {
		model string
		ratio float64
		want  budget.Correction
	}{
		{"llama3.1:8b", 1.10, budget.Correction{Model: "llama3.1:8b", Ratio: 1.10, Samples: 1}},
		{"llama3.1:8b", 1.30, budget.Correction{Model: "llama3.1:8b", Ratio: 1.30, Samples: 2}},
		{"llama3.1:8b", 1.05, budget.Correction{Model: "llama3.1:8b", Ratio: 1.30, Samples: 3}}, // never lowered
		{"qwen", 0.9, budget.Correction{Model: "qwen", Ratio: 0.9, Samples: 1}},
	}
	ignoreTime := cmpopts.IgnoreFields(budget.Correction{}, "UpdatedAt")
	for _, st := range steps {
		got, err := s.ObserveRatio(t.Context(), st.model, st.ratio)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(st.want, got, ignoreTime); d != "" || got.UpdatedAt.IsZero() {
			t.Errorf("ObserveRatio(%s, %v) (-want +got):\n%s", st.model, st.ratio, d)
		}
	}
	var wg sync.WaitGroup
	for i := range 10 {
		wg.Go(func() {
			if _, err := s.ObserveRatio(t.Context(), "mistral", 1+float64(i)/100); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	all, err := s.Corrections(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want := []budget.Correction{
		{Model: "llama3.1:8b", Ratio: 1.30, Samples: 3},
		{Model: "mistral", Ratio: 1.09, Samples: 10},
		{Model: "qwen", Ratio: 0.9, Samples: 1},
	}
	if d := cmp.Diff(want, all, ignoreTime); d != "" {
		t.Errorf("Corrections (-want +got):\n%s", d)
	}
	for _, bad := range []struct {
		model string
		ratio float64
	}{{"", 1}, {"m", 0}, {"m", -1}} {
		if _, err := s.ObserveRatio(t.Context(), bad.model, bad.ratio); err == nil {
			t.Errorf("ObserveRatio(%q, %v) succeeded", bad.model, bad.ratio)
		}
	}
}
