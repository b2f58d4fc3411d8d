package main

import (
	"context"
	"net/http"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/review/budget"
	"github.com/mergeguard/mergeguard/review/diff"
	"github.com/mergeguard/mergeguard/review/lint"
	"github.com/mergeguard/mergeguard/review/llm/llmtest"
)

// TestLLMRetrySettings: llm.retry_base and llm.retry_max reach the model
// client. A server failing without saying when to retry is retried three
// times after a millisecond each (the default's first wait, half a second
// or more, would not fit the call's 400 ms); a server asking to wait
// longer than retry_max is not retried at all.
func TestLLMRetrySettings(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name     string
		answer   llmtest.Response
		deadline time.Duration
		calls    int
	}{
		{"no hint: retry_base", llmtest.Unavailable(), 400 * time.Millisecond, 4},
		{"asks for more than retry_max", llmtest.RateLimited("2"), 10 * time.Second, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.New(t, func(llmtest.Request) llmtest.Response { return tt.answer })
			cfg := config.Default().LLM
			cfg.BaseURL, cfg.APIKey, cfg.Model = srv.URL(), "test", "gpt-4o-mini"
			cfg.RetryBase, cfg.RetryMax = time.Millisecond, time.Second
			deps, hasLLM := pipelineDeps(testProcess, cfg, http.DefaultTransport, budget.NewCorrections(nil), nil, nil)
			if !hasLLM {
				t.Fatal("no model client")
			}
			ctx, cancel := context.WithTimeout(t.Context(), tt.deadline)
			defer cancel()
			_, err := deps.LLM.Chat(ctx, openai.ChatCompletionRequest{
				Messages: []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: "hello"}}})
			if err == nil {
				t.Fatal("the call succeeded against a failing server")
			}
			if got := srv.Calls(); got != tt.calls {
				t.Errorf("the server was called %d times, want %d (%v)", got, tt.calls, err)
			}
		})
	}
}

// TestDockerfilesGetBuildChecks: the linters every review runs check
// Dockerfiles with BuildKit's build checks (package buildcheck, which only
// this composition root links), not only with hadolint's rules.
func TestDockerfilesGetBuildChecks(t *testing.T) {
	t.Parallel()
	content := []byte("FROM alpine:3.20\nMAINTAINER someone@example.com\n")
	d, err := diff.ParseString("diff --git a/Dockerfile b/Dockerfile\nnew file mode 100644\n--- /dev/null\n+++ b/Dockerfile\n@@ -0,0 +1,2 @@\n+FROM alpine:3.20\n+MAINTAINER someone@example.com\n")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range linters(nil) {
		if !l.Applies("Dockerfile") {
			continue
		}
		rep, err := l.Lint(t.Context(), []lint.File{{Diff: d.Files[0], Content: content}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range rep.Findings {
			if f.Rule == "MaintainerDeprecated" {
				return
			}
		}
		t.Fatalf("%s found %v, notes %q; want BuildKit's MaintainerDeprecated", l.Name(), rep.Findings, rep.Notes)
	}
	t.Fatal("no linter applies to a Dockerfile")
}
