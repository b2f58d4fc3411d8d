package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/task"
)

// TestFailureNotice: the pull request is told what its author can fix in
// the error's own words, and for anything else only where to look: never
// the model server's words or an internal error.
func TestFailureNotice(t *testing.T) {
	t.Parallel()
	unavailable := fmt.Errorf("%w: 429 from the model: secret-internal-detail", task.ErrLLMUnavailable)
	tests := map[string]struct {
		err      error
		has, not string
	}{
		"a broken configuration: its error": {&task.RepoConfigError{Err: errors.New(".mergeguard.yml:3: unknown key")}, ".mergeguard.yml:3: unknown key", "logs"},
		"bad options: their error":          {UserError{errors.New("run options: bad")}, "run options: bad", "logs"},
		"the model kept failing":            {unavailable, "kept failing (rate limits or server errors) over 3 attempts", "secret-internal-detail"},
		"the analyzers posted":              {AnalyzersPostedError{unavailable}, "built-in analyzers and linters are posted", "secret-internal-detail"},
		"timed out":                         {fmt.Errorf("%w (30m)", ErrTimedOut), "took longer than the time a review may take", "30m"},
		"describe failed":                   {NotDescribedError{errors.New("502")}, "`/mergeguard describe`", "502"},
		"anything else: the logs":           {errors.New("pq: connection refused"), "The cause is in MergeGuard's logs", "pq:"},
	}
	for name, tt := range tests {
		got := FailureNotice("run1", 3, tt.err)
		if !strings.Contains(got, tt.has) || strings.Contains(got, tt.not) {
			t.Errorf("%s: %q; want it to say %q and not %q", name, got, tt.has, tt.not)
		}
	}
}

// TestReviewText: a bare diff is reviewed and nothing posted; a skip is a
// skip; the model unavailable gives the review without it and the error.
func TestReviewText(t *testing.T) {
	t.Parallel()
	src := fakeSource{change: review.Change{}}
	res := &task.Result{Notice: "n"}
	unavailable := fmt.Errorf("x: %w", task.ErrLLMUnavailable)
	broken := errors.New("broken")
	tests := map[string]struct {
		pl      fakePipeline
		ending  Ending
		result  bool
		wantErr error
	}{
		"reviewed":                 {pl: fakePipeline{RunValue: res}, ending: EndedSucceeded, result: true},
		"skipped":                  {pl: fakePipeline{RunValue: &task.Result{Skipped: true, SkipReason: "empty"}}, ending: EndedSkipped, result: true},
		"the model is unavailable": {pl: fakePipeline{RunValue: res, RunError: unavailable}, ending: EndedSucceeded, result: true, wantErr: task.ErrLLMUnavailable},
		"the pipeline fails":       {pl: fakePipeline{RunValue: res, RunError: broken}, wantErr: broken},
	}
	for name, tt := range tests {
		o, err := ReviewText(context.Background(), &tt.pl, ReviewInput{Source: src, MaxTokens: 9})
		if !errors.Is(err, tt.wantErr) || o.Ending != tt.ending || (o.Result != nil) != tt.result || o.Posted != nil {
			t.Errorf("%s: %+v, %v; want %s, a result %v, %v", name, o, err, tt.ending, tt.result, tt.wantErr)
		}
		if r := tt.pl.Requests[0]; r.MaxTokens != 9 || r.ReadRepoFile || r.History != nil {
			t.Errorf("%s: request %+v, want the budget, no repository file, no history", name, r)
		}
	}
}
