package pipeline

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/agent"
	"github.com/mergeguard/mergeguard/review/budget"
	"github.com/mergeguard/mergeguard/review/llm"
	"github.com/mergeguard/mergeguard/review/llm/llmtest"
	"github.com/mergeguard/mergeguard/review/source/difftext"
	"github.com/mergeguard/mergeguard/review/task"
)

// megabyteOfLetters is 1 MB of lowercase letters without a space: a single
// pre-token for the tokenizers, whose byte-pair merge took the better part
// of an hour on it.
func megabyteOfLetters() string {
	rng := rand.New(rand.NewPCG(5, 6))
	b := make([]byte, 1<<20)
	for i := range b {
		b[i] = byte('a' + rng.IntN(26))
	}
	return string(b)
}

// addedFileDiff is a diff adding path with lines.
func addedFileDiff(path string, lines ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "diff --git a/%s b/%s\nnew file mode 100644\nindex 0000000..1111111\n--- /dev/null\n+++ b/%s\n", path, path, path)
	fmt.Fprintf(&b, "@@ -0,0 +1,%d @@\n", len(lines))
	for _, l := range lines {
		b.WriteString("+" + l + "\n")
	}
	return b.String()
}

// TestHugeLinesReviewed reviews a pull request adding a 1 MB line without
// spaces, and one whose repository instructions are such a line, with the
// fake LLM, gpt-4o's tokenizer and the built-in analyzers: every prompt
// fits, and a secret in the middle of such a line is still found. Such a
// review took about an hour once (the tokenizer's quadratic merge) and
// then 10 s (gitleaks on the whole line); the time is measured by the
// benchmarks (review/budget BenchmarkCount1MBLine and BenchmarkFit1MBLine),
// not here.
func TestHugeLinesReviewed(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: megabyte lines through the tokenizer and the analyzers, about 1.5 s; skipped by -short, make test runs it")
	}
	letters := megabyteOfLetters()
	small := addedFileDiff("main.go", "package main", "", "func main() {}")
	tests := []struct {
		name         string
		diff         string
		instructions string
		secret       bool
	}{
		{"a 1 MB line in a file", addedFileDiff("table/table.go", "package table", "", `var table = "`+letters+`"`), "", false},
		{"1 MB of repository instructions", small, letters, false},
		{"a secret in the middle of a 1 MB line", addedFileDiff("dist/app.min.js",
			`var a="`+letters[:len(letters)/2]+`";var k="AKIAZ7VRSQ5TJN2XMY4W";var b="`+letters[len(letters)/2:]+`"`), "", true},
	}
	const contextTokens, maxOutput = 32000, 2000
	srv := llmtest.New(t, func(llmtest.Request) llmtest.Response { return answer() })
	p := newTest(Deps{
		Config: testLLM(func(c *config.LLM) { c.Model, c.ContextTokens, c.MaxOutputTokens = "gpt-4o", contextTokens, maxOutput }),
		LLM:    llm.New(llm.Config{BaseURL: srv.URL(), Model: "gpt-4o"}, nil),
	})
	warm, err := difftext.New(small)
	if err != nil {
		t.Fatal(err)
	}
	// Load the vocabulary first.
	if _, err := p.Run(t.Context(), task.Request{Source: warm, Repo: config.DefaultRepo()}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src, err := difftext.New(tt.diff)
			if err != nil {
				t.Fatal(err)
			}
			repo := config.DefaultRepo()
			repo.Instructions = tt.instructions
			before := len(srv.Requests())
			res, err := p.Run(t.Context(), task.Request{Source: src, Repo: repo})
			if err != nil {
				t.Fatal(err)
			}
			// A minified file is skipped by the model (generated code),
			// never by the analyzers.
			if !tt.secret && (res.Verdict.Stats.FilesReviewed != 1 || res.Verdict.Stats.LLMCalls == 0) {
				t.Errorf("stats = %+v, want the file reviewed by the model", res.Verdict.Stats)
			}
			counter := testTokenizers.ForModel("gpt-4o")
			for i, r := range srv.Requests()[before:] {
				n := budget.CountMessages(counter, openaiMessages(r), openaiTools(r)) + counter.Count(agent.OutputSchema)
				if n > contextTokens-maxOutput {
					t.Errorf("request %d: %d prompt tokens, more than %d", i, n, contextTokens-maxOutput)
				}
			}
			found := false
			for _, f := range res.Findings {
				found = found || strings.Contains(f.Title, "aws-access-token")
			}
			if found != tt.secret {
				t.Errorf("secret found = %v, want %v", found, tt.secret)
			}
			for _, a := range res.Verdict.Agents {
				if a.Status != review.AgentSuccess {
					t.Errorf("agent %s: %s %s", a.Agent, a.Status, a.Error)
				}
			}
		})
	}
}
