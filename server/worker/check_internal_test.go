package worker

import (
	"testing"

	"github.com/mergeguard/mergeguard/github"
	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/pipeline"
)

// TestModelSkippedGate: a refreshed gate keeps a review whose model was
// skipped neutral, as the review's own check was: the reason is read back
// from the stored verdict's note; a blocked check stays blocked.
func TestModelSkippedGate(t *testing.T) {
	t.Parallel()
	skipped := &review.Verdict{Notes: []string{"Reviewed 3 files.",
		pipeline.ModelSkippedNote + `title contains "WIP". The built-in analyzers and linters reviewed every changed file and decide the check.`}}
	tests := []struct {
		name       string
		v          *review.Verdict
		conclusion string // of the check, success before
		want       string
	}{
		{"model skipped, nothing blocks", skipped, github.ConclusionSuccess, github.ConclusionNeutral},
		{"model skipped, blocked", skipped, github.ConclusionFailure, github.ConclusionFailure},
		{"model reviewed", &review.Verdict{Notes: []string{"Reviewed 3 files."}}, github.ConclusionSuccess, github.ConclusionSuccess},
		{"no verdict", nil, github.ConclusionSuccess, github.ConclusionSuccess},
	}
	for _, tt := range tests {
		c := &github.Check{Conclusion: tt.conclusion, Summary: "No open findings."}
		modelSkippedCheck(c, modelSkippedOf(tt.v))
		if c.Conclusion != tt.want {
			t.Errorf("%s: conclusion %s, want %s", tt.name, c.Conclusion, tt.want)
		}
	}
	if got, want := modelSkippedOf(skipped), `title contains "WIP"`; got != want {
		t.Errorf("modelSkippedOf = %q, want %q", got, want)
	}
}
