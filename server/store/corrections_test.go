package store_test

import (
	"math"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/jackc/pgx/v5"

	"github.com/mergeguard/mergeguard/review/budget"
	"github.com/mergeguard/mergeguard/server/store"
	"github.com/mergeguard/mergeguard/server/store/storetest"
)

// TestObserveRatio checks that the stored ratios of a model only rise,
// each sample teaching its own part, that every sample that counts is
// counted, concurrent ones included, and that Corrections reads them all
// back.
func TestObserveRatio(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	ascii := func(r float64) budget.Sample { return budget.Sample{Ratio: r, Counts: true} }
	steps := []struct {
		model string
		smp   budget.Sample
		want  budget.Correction
	}{
		{"llama3.1:8b", ascii(1.10), budget.Correction{Model: "llama3.1:8b", Ratio: 1.10, Samples: 1}},
		{"llama3.1:8b", ascii(1.30), budget.Correction{Model: "llama3.1:8b", Ratio: 1.30, Samples: 2}},
		{"llama3.1:8b", ascii(1.05), budget.Correction{Model: "llama3.1:8b", Ratio: 1.30, Samples: 3}}, // never lowered
		{"llama3.1:8b", budget.Sample{Ratio: 1.4}, budget.Correction{Model: "llama3.1:8b", Ratio: 1.40, Samples: 3}},
		{"llama3.1:8b", budget.Sample{Other: true, Ratio: 2.5, Counts: true},
			budget.Correction{Model: "llama3.1:8b", Ratio: 1.40, Samples: 3, OtherRatio: 2.5, OtherSamples: 1}},
		{"llama3.1:8b", budget.Sample{Other: true, Ratio: 2, Counts: true},
			budget.Correction{Model: "llama3.1:8b", Ratio: 1.40, Samples: 3, OtherRatio: 2.5, OtherSamples: 2}},
		{"llama3.1:8b", budget.Sample{Other: true, Ratio: 3},
			budget.Correction{Model: "llama3.1:8b", Ratio: 1.40, Samples: 3, OtherRatio: 3, OtherSamples: 2}},
		{"qwen", ascii(0.9), budget.Correction{Model: "qwen", Ratio: 0.9, Samples: 1}},
		{"glm", budget.Sample{Other: true, Ratio: 1.5, Counts: true}, budget.Correction{Model: "glm", OtherRatio: 1.5, OtherSamples: 1}},
		{"phi", budget.Sample{}, budget.Correction{Model: "phi"}}, // taught nothing yet: kept all the same
	}
	ignoreTime := cmpopts.IgnoreFields(budget.Correction{}, "UpdatedAt")
	for _, st := range steps {
		got, err := s.ObserveRatio(t.Context(), st.model, st.smp)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(st.want, got, ignoreTime); d != "" || got.UpdatedAt.IsZero() {
			t.Errorf("ObserveRatio(%s, %+v) (-want +got):\n%s", st.model, st.smp, d)
		}
	}
	var wg sync.WaitGroup
	for i := range 10 {
		wg.Go(func() {
			if _, err := s.ObserveRatio(t.Context(), "mistral", ascii(1+float64(i)/100)); err != nil {
				t.Error(err)
			}
			if _, err := s.ObserveRatio(t.Context(), "mistral", budget.Sample{Other: true, Ratio: 2 + float64(i)/100, Counts: i%2 == 0}); err != nil {
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
		{Model: "glm", OtherRatio: 1.5, OtherSamples: 1},
		{Model: "llama3.1:8b", Ratio: 1.40, Samples: 3, OtherRatio: 3, OtherSamples: 2},
		{Model: "mistral", Ratio: 1.09, Samples: 10, OtherRatio: 2.09, OtherSamples: 5},
		{Model: "phi"},
		{Model: "qwen", Ratio: 0.9, Samples: 1},
	}
	if d := cmp.Diff(want, all, ignoreTime); d != "" {
		t.Errorf("Corrections (-want +got):\n%s", d)
	}
	for _, bad := range []struct {
		model string
		smp   budget.Sample
	}{{"", ascii(1)}, {"m", ascii(-1)}, {"m", ascii(math.NaN())}, {"m", budget.Sample{Other: true, Ratio: math.Inf(1)}}} {
		if _, err := s.ObserveRatio(t.Context(), bad.model, bad.smp); err == nil {
			t.Errorf("ObserveRatio(%q, %+v) succeeded", bad.model, bad.smp)
		}
	}
}

// TestTokenCorrectionsMigration checks migration 000007 on data: a
// correction learned before keeps its ratio as the ASCII part's, with no
// non-ASCII ratio yet; going down keeps the corrections that have an ASCII
// ratio and drops the others, which 000006 cannot hold.
func TestTokenCorrectionsMigration(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: migrates an empty database step by step, about 5 s; skipped by -short, make test runs it")
	}
	t.Parallel()
	url := storetest.Empty(t)
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(t.Context())
	exec := func(sql string) {
		t.Helper()
		if _, err := conn.Exec(t.Context(), sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	read := func(sql string) []string {
		t.Helper()
		rows, err := conn.Query(t.Context(), sql)
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		got, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	if err := store.MigrateUp(t.Context(), url); err != nil {
		t.Fatal(err)
	}
	downTo6(t, url)
	exec(`INSERT INTO model_token_corrections (model, ratio, samples) VALUES ('old', 1.3, 4)`)
	if err := store.MigrateUp(t.Context(), url); err != nil {
		t.Fatal(err)
	}
	exec(`INSERT INTO model_token_corrections (model, ratio, samples, other_ratio, other_samples) VALUES ('new', 0, 0, 2.5, 3)`)
	all := `SELECT model || ' ' || ratio || ' ' || samples || ' ' || other_ratio || ' ' || other_samples FROM model_token_corrections ORDER BY 1`
	if d := cmp.Diff([]string{"new 0 0 2.5 3", "old 1.3 4 0 0"}, read(all)); d != "" {
		t.Errorf("after 000007 up (-want +got):\n%s", d)
	}
	downTo6(t, url)
	if d := cmp.Diff([]string{"old 1.3 4"}, read(`SELECT model || ' ' || ratio || ' ' || samples FROM model_token_corrections`)); d != "" {
		t.Errorf("after 000007 down (-want +got):\n%s", d)
	}
	cols := read(`SELECT column_name::text FROM information_schema.columns WHERE table_name = 'model_token_corrections' ORDER BY 1`)
	if d := cmp.Diff([]string{"model", "ratio", "samples", "updated_at"}, cols); d != "" {
		t.Errorf("columns after 000007 down (-want +got):\n%s", d)
	}
}

// downTo6 steps the migrations down until 000006 is the last applied:
// 000007 and every later one.
func downTo6(t *testing.T, url string) {
	t.Helper()
	for migrationVersion(t, url).Version > 6 {
		if err := store.MigrateDown(t.Context(), url, 1); err != nil {
			t.Fatal(err)
		}
	}
}
