package main

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/github"
	"github.com/mergeguard/mergeguard/github/githubtest"
	"github.com/mergeguard/mergeguard/review/llm/llmtest"
	"github.com/mergeguard/mergeguard/server/store/storetest"
)

// TestServeGitHubApp runs `mergeguard serve` as the GitHub App against a
// fake GitHub and a fake LLM: a signed pull_request opened delivery to
// POST /api/github/hook ends in one review on the pull request.
func TestServeGitHubApp(t *testing.T) {
	t.Parallel()
	const (
		head  = "ec26c3e57ca3a959ca5aad62de7213c562f8c821"
		query = "\tq := \"SELECT id FROM users WHERE name = '\" + name + \"'\""
	)
	gh := githubtest.New(t)
	app := gh.AppConfig(42)
	users := "package store\n\nfunc FindUser(name string) string {\n" + query + "\n\treturn q\n}\n"
	gh.AddPR(githubtest.PR{
		Owner: "Codertocat", Repo: "Hello-World", Number: 2, HeadSHA: head,
		Base: map[string]string{"README.md": "Hello\n"},
		Head: map[string]string{"README.md": "Hello\n", "store/users.go": users},
		Diff: "diff --git a/store/users.go b/store/users.go\nnew file mode 100644\nindex 0000000.." + githubtest.BlobSHA(users)[:7] +
			"\n--- /dev/null\n+++ b/store/users.go\n@@ -0,0 +1,6 @@\n+" + strings.ReplaceAll(strings.TrimSuffix(users, "\n"), "\n", "\n+") + "\n",
	})
	model := llmtest.New(t, func(llmtest.Request) llmtest.Response {
		return llmtest.JSON(map[string]any{"positive_notes": []any{}, "findings": []any{map[string]any{
			"file_path": "store/users.go", "line_start": 4, "line_end": 4, "side": "RIGHT", "severity": "critical",
			"category": "security", "title": "SQL injection", "description": "name is concatenated into the query.",
			"suggestion": "", "code_snippet": strings.TrimSpace(query), "confidence": 0.9,
		}}})
	})

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	s := startServe(t, ctx, map[string]string{
		"DATABASE_URL":              storetest.Empty(t),
		"GITHUB_APP_INTEGRATION_ID": strconv.FormatInt(app.App.IntegrationID, 10),
		"GITHUB_APP_WEBHOOK_SECRET": app.App.WebhookSecret,
		"GITHUB_APP_PRIVATE_KEY":    app.App.PrivateKey,
		"GITHUB_V3_API_URL":         app.V3APIURL,
		"GITHUB_V4_API_URL":         app.V4APIURL,
		"OPENAI_BASE_URL":           model.URL(),
		"MERGEGUARD_MODEL":          "gpt-4o",
	})

	opened := githubtest.Delivery{Event: "pull_request", ID: "delivery-1", Payload: githubtest.Payload(t, "pull_request/opened.payload.json")}
	if status := postDelivery(t.Context(), t, s.base, opened, app.App.WebhookSecret); status != http.StatusOK {
		t.Fatalf("webhook answered %d, want 200\n%s", status, s.logs)
	}

	deadline := time.Now().Add(30 * time.Second)
	for len(gh.Reviews("Codertocat", "Hello-World", 2)) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no review posted\n%s", s.logs)
		}
		time.Sleep(50 * time.Millisecond)
	}
	reviews := gh.Reviews("Codertocat", "Hello-World", 2)
	if len(reviews) != 1 || reviews[0].CommitID != head || len(reviews[0].Comments) != 1 || reviews[0].Comments[0].Line != 4 {
		t.Errorf("reviews %+v, want one on %s with an inline comment on line 4", reviews, head)
	}

	s.stop(t, cancel)
}

// TestGitHubOptionsFromConfig: every GitHub client's timeout and retry
// policy come from the configuration, whose defaults are GitHub's advice
// (a second between content-creating requests) and three retries.
func TestGitHubOptionsFromConfig(t *testing.T) {
	t.Parallel()
	g := config.Default().GitHub
	got := githubOptions(g, "1.2.3")
	want := github.ClientOptions{Version: "1.2.3", Timeout: 30 * time.Second, Retry: github.RetryPolicy{
		MaxRetries: 3, MaxWait: 2 * time.Minute, Backoff: time.Second, MinWriteInterval: time.Second,
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("options of the default configuration (-want +got):\n%s", diff)
	}
	g.MaxRetries, g.RetryBackoff, g.RetryMaxWait, g.MinWriteInterval, g.Timeout = 0, 0, 0, 0, time.Second
	want = github.ClientOptions{Version: "1.2.3", Timeout: time.Second}
	if diff := cmp.Diff(want, githubOptions(g, "1.2.3")); diff != "" {
		t.Errorf("options without retries (-want +got):\n%s", diff)
	}
}
