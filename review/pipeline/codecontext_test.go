package pipeline

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/review/codectx"
	"github.com/mergeguard/mergeguard/review/diff"
	"github.com/mergeguard/mergeguard/review/llm"
	"github.com/mergeguard/mergeguard/review/llm/llmtest"
	"github.com/mergeguard/mergeguard/review/source/localgit"
	"github.com/mergeguard/mergeguard/review/task"
)

// TestCodeContextInPrompt checks that a chunk's prompt holds, as read-only
// data, the definition in another file of a function the change calls.
func TestCodeContextInPrompt(t *testing.T) {
	if !codectx.Available {
		t.Skip("no code context without cgo")
	}
	repo := newGitRepo(t)
	users := "package store\n\n// ByID returns the user with id, or nil when there is none.\nfunc (u *Users) ByID(id int64) (*User, error) {\n\treturn nil, nil\n}\n"
	base := repo.commit("base", map[string]string{
		"store/users.go":     users,
		"billing/invoice.go": "package billing\n\nfunc Owner(u *store.Users, id int64) string {\n\treturn \"\"\n}\n",
	})
	head := repo.commit("feature", map[string]string{
		"billing/invoice.go": "package billing\n\nfunc Owner(u *store.Users, id int64) string {\n\towner, err := u.ByID(id)\n\tif err != nil {\n\t\treturn \"\"\n\t}\n\treturn owner.Email\n}\n",
	})
	tests := []struct {
		name          string
		contextTokens int
		want          bool
	}{
		{name: "room for the context", contextTokens: 128000, want: true},
		{name: "a small model", contextTokens: 9000, want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src, err := localgit.New(t.Context(), repo.dir, base, head)
			if err != nil {
				t.Fatal(err)
			}
			srv := llmtest.NewQueue(t, answer())
			client := llm.New(llm.Config{BaseURL: srv.URL(), Model: "gpt-4o"}, nil)
			deps := Deps{Config: testLLM(func(c *config.LLM) { c.Model, c.ContextTokens, c.MaxOutputTokens = "gpt-4o", tt.contextTokens, 1000 }), LLM: client}
			if _, err := newTest(deps).Run(t.Context(), task.Request{Source: src, Repo: config.DefaultRepo()}); err != nil {
				t.Fatal(err)
			}
			reqs := srv.Requests()
			if len(reqs) == 0 {
				t.Fatal("no model request")
			}
			user := reqs[0].Messages[1].Content
			begin := strings.Index(user, "<<<BEGIN CODE ")
			got := begin >= 0 && strings.Contains(user[begin:], "store/users.go:3-6 (definition: ByID)") &&
				strings.Contains(user[begin:], "// ByID returns the user with id, or nil when there is none.")
			if got != tt.want {
				t.Errorf("code context in the prompt = %v, want %v:\n%s", got, tt.want, user)
			}
			if got && (!strings.Contains(user, codeHeader) || strings.Index(user, "<<<BEGIN DIFF") < begin) {
				t.Errorf("the code context is not framed as read-only data before the diff:\n%s", user)
			}
		})
	}
}

// TestChunkCode checks that the code context of a chunk is fitted best
// snippet first, each whole or not at all, and leaves out what the hunks
// already show.
func TestChunkCode(t *testing.T) {
	d, err := diff.ParseString("diff --git a/a.go b/a.go\n--- a/a.go\n+++ b/a.go\n@@ -1,2 +1,2 @@\n package a\n-var x = 1\n+var x = 2\n")
	if err != nil {
		t.Fatal(err)
	}
	c := chunk{n: 1, files: d.Files}
	snip := func(path string, start int, score int, lines ...string) codectx.Snippet {
		return codectx.Snippet{Kind: codectx.Definition, For: "a.go", Path: path, Name: "f", Start: start, End: start + len(lines) - 1, Lines: lines, Score: score}
	}
	best := snip("b.go", 10, 30, "// F returns nil.", "func F() *T { return nil }")
	worse := snip("c.go", 1, 20, strings.Repeat("word ", 80))
	shown := snip("a.go", 1, 40, "package a", "var x = 2")
	counter := testTokenizers.ForModel("gpt-4o")
	all := map[string][]codectx.Snippet{"a.go": {shown, best, worse}}
	tests := []struct {
		name  string
		limit int
		want  []string // snippet headers in the text
		cut   bool
	}{
		{name: "everything fits", limit: 1000, want: []string{"b.go:10-11", "c.go:1-1"}},
		{name: "the best only", limit: counter.Count(codectx.Render(best)) + 5, want: []string{"b.go:10-11"}, cut: true},
		{name: "nothing", limit: 3, cut: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text, cut, err := chunkCode(t.Context(), c, all, counter, tt.limit)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, l := range strings.Split(text, "\n") {
				if i := strings.Index(l, " ("); i > 0 && strings.Contains(l, ".go:") {
					got = append(got, l[:i])
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" || cut != tt.cut {
				t.Errorf("snippets (-want +got):\n%s\ncut = %v, want %v\n%s", diff, cut, tt.cut, text)
			}
			if n := counter.Count(text); n > tt.limit {
				t.Errorf("%d tokens, more than %d", n, tt.limit)
			}
		})
	}
}
