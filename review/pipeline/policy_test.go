package pipeline

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/llm"
	"github.com/mergeguard/mergeguard/review/llm/llmtest"
	"github.com/mergeguard/mergeguard/review/task"
)

// manyFiles is a diff adding n Go files of a few lines each.
func manyFiles(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "diff --git a/pkg%d/f.go b/pkg%d/f.go\nnew file mode 100644\n--- /dev/null\n+++ b/pkg%d/f.go\n@@ -0,0 +1,3 @@\n+package pkg%d\n+\n+func F() int { return %d }\n", i, i, i, i, i)
	}
	return b.String()
}

func noFindings(llmtest.Request) llmtest.Response { return answer().WithUsage(1000, 100) }

func TestPolicyLimits(t *testing.T) {
	tests := map[string]struct {
		files     int
		deps      Deps
		req       func(*task.Request)
		wantCalls int
		check     func(t *testing.T, res *task.Result)
	}{
		"chunks over llm.max_chunks get the analyzers only": {
			files: 12,
			deps:  Deps{Config: testLLM(func(c *config.LLM) { c.MaxChunks, c.MaxChunkTokens = 2, 256 })},
			// the 12 files make 3 chunks; only 2 go to the model
			wantCalls: 2,
			check: func(t *testing.T, res *task.Result) {
				if !containsNote(res.Verdict.Notes, "more than llm.max_chunks (2)") {
					t.Errorf("notes %q do not name the chunk cap", res.Verdict.Notes)
				}
			},
		},
		"the token budget stops the model calls and skips the review": {
			files:     12,
			deps:      Deps{Config: testLLM(func(c *config.LLM) { c.MaxChunkTokens, c.Concurrency = 256, 1 })},
			req:       func(r *task.Request) { r.MaxTokens = 2000 },
			wantCalls: 2, // 1,100 tokens each: the third call finds the budget spent
			check: func(t *testing.T, res *task.Result) {
				if !res.Skipped || !strings.Contains(res.SkipReason, "per-review budget of 2000 tokens") {
					t.Errorf("skipped %v (%q), want skipped for the budget", res.Skipped, res.SkipReason)
				}
				if !strings.Contains(res.Notice, "did not finish reviewing") {
					t.Errorf("notice %q, want one for the pull request", res.Notice)
				}
			},
		},
		"max_files keeps the model from an explicit request too, not the analyzers": {
			files:     20,
			req:       func(r *task.Request) { r.Repo.MaxFiles = 10; r.Automatic = false },
			wantCalls: 0,
			check: func(t *testing.T, res *task.Result) {
				if res.Skipped || !strings.Contains(res.ModelSkipped, "more than max_files (10)") || !containsNote(res.Verdict.Notes, "Model review skipped") {
					t.Errorf("skipped %v, model skipped %q, notes %q; want the model skipped for max_files", res.Skipped, res.ModelSkipped, res.Verdict.Notes)
				}
				if res.Verdict.Verdict == review.DecisionApprove {
					t.Errorf("verdict %s without a model review", res.Verdict.Verdict)
				}
			},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			srv := llmtest.New(t, noFindings)
			deps := tt.deps
			deps.LLM = llm.New(llm.Config{BaseURL: srv.URL(), Model: "gpt-4o"}, nil)
			deps.Config.Model = "gpt-4o"
			req := task.Request{Source: &memSource{diff: manyFiles(tt.files)}, Repo: config.DefaultRepo()}
			if tt.req != nil {
				tt.req(&req)
			}
			res, err := newTest(deps).Run(t.Context(), req)
			if err != nil {
				t.Fatal(err)
			}
			if got := srv.Calls(); got != tt.wantCalls {
				t.Errorf("model calls = %d, want %d", got, tt.wantCalls)
			}
			tt.check(t, res)
		})
	}
}

func containsNote(notes []string, part string) bool {
	for _, n := range notes {
		if strings.Contains(n, part) {
			return true
		}
	}
	return false
}

func TestRepoConfigReadFromBase(t *testing.T) {
	tests := map[string]struct {
		base      map[string]string
		read      bool
		wantErr   bool
		wantSkips bool
	}{
		"invalid file on the base fails with its line": {base: map[string]string{".mergeguard.yml": "enabled: true\nauto_reveiw: {}\n"}, read: true, wantErr: true},
		"file disabling MergeGuard is honoured":        {base: map[string]string{".mergeguard.yml": "enabled: false\n"}, read: true, wantSkips: true},
		"no file keeps the defaults":                   {base: map[string]string{}, read: true},
		"not read when the request says so":            {base: map[string]string{".mergeguard.yml": "enabled: false\n"}, read: false},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			src := &memSource{diff: manyFiles(1), base: tt.base, head: map[string]string{".mergeguard.yml": "enabled: false\n"}}
			res, err := newTest(Deps{Config: testLLM()}).Run(t.Context(), task.Request{Source: src, Repo: config.DefaultRepo(), ReadRepoFile: tt.read})
			var cfgErr *task.RepoConfigError
			if tt.wantErr {
				if !errors.As(err, &cfgErr) || !strings.Contains(err.Error(), `.mergeguard.yml:2: unknown key "auto_reveiw"`) {
					t.Fatalf("Run: %v, want a task.RepoConfigError naming the line", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.Skipped != tt.wantSkips {
				t.Errorf("skipped = %v (%s), want %v", res.Skipped, res.SkipReason, tt.wantSkips)
			}
		})
	}
}

func TestLLMUnavailableOnlyWhenEveryReviewerFailed(t *testing.T) {
	ok := review.AgentResult{Agent: "reviewer:chunk-1", Stage: review.StageReviewer, Status: review.AgentSuccess}
	rate := review.AgentResult{Agent: "reviewer:chunk-2", Stage: review.StageReviewer, Status: review.AgentError, ErrorType: llm.TypeRateLimited}
	bad := review.AgentResult{Agent: "reviewer:chunk-3", Stage: review.StageReviewer, Status: review.AgentError, ErrorType: "invalid_output"}
	analyzer := review.AgentResult{Agent: "analyzer:secrets", Stage: review.StageReviewer, Status: review.AgentSuccess}
	tests := map[string]struct {
		agents []review.AgentResult
		want   bool
	}{
		"all transient":              {[]review.AgentResult{rate, rate, analyzer}, true},
		"one succeeded":              {[]review.AgentResult{rate, ok}, false},
		"a model error is no outage": {[]review.AgentResult{rate, bad}, false},
		"analyzers only":             {[]review.AgentResult{analyzer}, false},
	}
	for name, tt := range tests {
		if got := errors.Is(llmUnavailable(tt.agents), task.ErrLLMUnavailable); got != tt.want {
			t.Errorf("%s: unavailable = %v, want %v", name, got, tt.want)
		}
	}
}

// TestCancelledReviewEndsWithTheContext: a review whose context ends (a
// newer head, the run timeout, shutdown) returns the context's error instead
// of a verdict made of whatever the stages managed.
func TestCancelledReviewEndsWithTheContext(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := newTest(Deps{Config: testLLM()}).Run(ctx, task.Request{Source: &memSource{diff: manyFiles(3)}, Repo: config.DefaultRepo()})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run on a cancelled context: %v, want context.Canceled", err)
	}
}
