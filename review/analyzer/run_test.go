package analyzer

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mergeguard/mergeguard/review/diff"
	"github.com/mergeguard/mergeguard/review/diff/difftest"
)

// TestRunMatchesAnalyze: the shared pass over the files finds what each
// analyzer finds on its own, in the same order.
func TestRunMatchesAnalyze(t *testing.T) {
	text, _ := difftest.Large(512 << 10)
	d, err := diff.ParseString(text)
	if err != nil {
		t.Fatal(err)
	}
	files := append(d.Files, readDiff(t, "../pipeline/testdata/planted.diff")...)
	analyzers := Builtin()
	got := Run(t.Context(), analyzers, files)
	total := 0
	for i, a := range analyzers {
		want, err := a.Analyze(t.Context(), files)
		if err != nil || got[i].Err != nil {
			t.Fatalf("%s: Analyze error %v, Run error %v", a.Name(), err, got[i].Err)
		}
		total += len(want)
		if diff := cmp.Diff(anchors(want), anchors(got[i].Findings)); diff != "" {
			t.Errorf("%s: findings (-Analyze +Run):\n%s", a.Name(), diff)
		}
	}
	if total < 5 {
		t.Errorf("%d findings in all: the test compares too little", total)
	}
}

// TestRunCanceled: a canceled run reports the context's error for every
// analyzer.
func TestRunCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	for _, r := range Run(ctx, Builtin(), readDiff(t, "../pipeline/testdata/planted.diff")) {
		if r.Err == nil {
			t.Errorf("no error from a canceled run: %+v", r)
		}
	}
}
