package pipeline

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/diff"
	"github.com/mergeguard/mergeguard/review/llm"
	"github.com/mergeguard/mergeguard/review/llm/llmtest"
	"github.com/mergeguard/mergeguard/review/task"
)

func TestFileKind(t *testing.T) {
	tests := []struct {
		path string
		want string
	}{
		{"server/api.go", kindSource},
		{"web/app.tsx", kindSource},
		{"server/api_test.go", kindTests},
		{"src/app.spec.ts", kindTests},
		{"tests/test_api.py", kindTests},
		{"pkg/testdata/plan.json", kindTests},
		{"README.md", kindDocs},
		{"docs/guide.html", kindDocs},
		{"config/app.yaml", kindConfig},
		{".gitignore", kindConfig},
		{"Dockerfile", kindBuild},
		{"Makefile", kindBuild},
		{".github/workflows/ci.yml", kindBuild},
		{"go.mod", kindDependencies},
		{"package-lock.json", kindDependencies},
		{"requirements-dev.txt", kindDependencies},
		{"api/v1/api.pb.go", kindGenerated},
		{"vendor/x/y.go", kindGenerated},
		{"assets/logo.bin", kindOther},
	}
	for _, tt := range tests {
		if got := fileKind(&diff.File{NewPath: tt.path, Status: diff.Modified}); got != tt.want {
			t.Errorf("fileKind(%q) = %q, want %q", tt.path, got, tt.want)
		}
	}
}

// walkthroughDiff has a source file, its test, a rename and a binary.
const walkthroughDiff = `diff --git a/app/main.go b/app/main.go
index 1111111..2222222 100644
--- a/app/main.go
+++ b/app/main.go
@@ -1,2 +1,3 @@
 package main
-func main() {}
+func main() {
+}
diff --git a/app/main_test.go b/app/main_test.go
new file mode 100644
index 0000000..3333333
--- /dev/null
+++ b/app/main_test.go
@@ -0,0 +1 @@
+package main
diff --git a/docs/old.md b/docs/new.md
similarity index 100%
rename from docs/old.md
rename to docs/new.md
diff --git a/img/logo.png b/img/logo.png
index 4444444..5555555 100644
Binary files a/img/logo.png and b/img/logo.png differ
`

func TestDiffWalkthrough(t *testing.T) {
	d, err := diff.ParseString(walkthroughDiff)
	if err != nil {
		t.Fatal(err)
	}
	want := &review.Walkthrough{
		Summary: "Changes 4 file(s), +3 −1: 1 source, 1 tests, 1 docs, 1 other.",
		Source:  review.WalkthroughFromDiff,
		Groups: []review.WalkthroughGroup{
			{Name: "source", Files: []review.WalkthroughFile{{FilePath: "app/main.go", ChangeType: "modified", Language: "go",
				Additions: 2, Deletions: 1, Line: "modified go file, +2 −1"}}},
			{Name: "tests", Files: []review.WalkthroughFile{{FilePath: "app/main_test.go", ChangeType: "added", Language: "go",
				Additions: 1, Line: "added go file, +1 −0"}}},
			{Name: "docs", Files: []review.WalkthroughFile{{FilePath: "docs/new.md", OldPath: "docs/old.md", ChangeType: "renamed",
				Language: "markdown", Line: "renamed markdown file: docs/old.md → docs/new.md, +0 −0"}}},
			{Name: "other", Files: []review.WalkthroughFile{{FilePath: "img/logo.png", ChangeType: "modified", Binary: true,
				Line: "modified binary file"}}},
		},
	}
	if diff := cmp.Diff(want, diffWalkthrough(d)); diff != "" {
		t.Errorf("walkthrough (-want +got):\n%s", diff)
	}
}

// isWalkthroughCall reports whether req is the walkthrough call.
func isWalkthroughCall(req llmtest.Request) bool {
	return len(req.Messages) > 0 && strings.HasPrefix(req.Messages[0].Content, "You write the walkthrough")
}

func TestModelWalkthrough(t *testing.T) {
	good := llmtest.JSON(map[string]any{"summary": "Makes main span two lines and tests it.", "files": []map[string]string{
		{"file_path": "app/main.go", "group": "Entry point", "line": "Splits main's body."},
		{"file_path": "app/main_test.go", "group": "Entry point", "line": "Adds a test file."},
		{"file_path": "invented.go", "group": "Ghosts", "line": "Never shown."},
	}})
	tests := []struct {
		name       string
		answer     llmtest.Response
		walk       bool
		wantSource string
		wantGroups []string
		wantCalls  int
		wantNote   bool
	}{
		{name: "model", answer: good, walk: true, wantSource: review.WalkthroughFromModel,
			wantGroups: []string{"Entry point", "docs", "other"}, wantCalls: 1},
		{name: "unparsable answer falls back", answer: llmtest.Text("no JSON here"), walk: true,
			wantSource: review.WalkthroughFromDiff, wantGroups: []string{"source", "tests", "docs", "other"}, wantCalls: 1, wantNote: true},
		{name: "failed call falls back", answer: llmtest.APIError(500, "server_error", "", "boom"), walk: true,
			wantSource: review.WalkthroughFromDiff, wantGroups: []string{"source", "tests", "docs", "other"}, wantCalls: 1, wantNote: true},
		{name: "off", answer: good, wantSource: review.WalkthroughFromDiff,
			wantGroups: []string{"source", "tests", "docs", "other"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.New(t, func(req llmtest.Request) llmtest.Response {
				if isWalkthroughCall(req) {
					return tt.answer
				}
				return answer()
			})
			p := newTest(Deps{Config: testLLM(func(c *config.LLM) { c.Model, c.Walkthrough = "gpt-4o", tt.walk }), LLM: llm.New(llm.Config{BaseURL: srv.URL(), Model: "gpt-4o", MaxRetries: -1}, nil)})
			src := &memSource{change: review.Change{Repository: "o/r", Number: 1, Title: "Split main", HeadSHA: "h", BaseSHA: "b"},
				diff: walkthroughDiff, head: map[string]string{"app/main.go": "package main\nfunc main() {\n}\n", "app/main_test.go": "package main\n"}}
			res, err := p.Run(t.Context(), task.Request{Source: src, Repo: config.DefaultRepo()})
			if err != nil {
				t.Fatal(err)
			}
			w := res.Verdict.Walkthrough
			if w == nil {
				t.Fatal("no walkthrough")
			}
			var groups []string
			for _, g := range w.Groups {
				groups = append(groups, g.Name)
			}
			if w.Source != tt.wantSource || !cmp.Equal(groups, tt.wantGroups) {
				t.Errorf("walkthrough source %q groups %q; want %q %q", w.Source, groups, tt.wantSource, tt.wantGroups)
			}
			calls := 0
			for _, req := range srv.Requests() {
				if isWalkthroughCall(req) {
					calls++
					if !strings.Contains(req.Messages[1].Content, "<<<BEGIN FILES") || req.ResponseFormat == nil {
						t.Errorf("the walkthrough call lacks its data markers or response format:\n%s", req.Messages[1].Content)
					}
				}
			}
			if calls != tt.wantCalls {
				t.Errorf("%d walkthrough calls, want %d", calls, tt.wantCalls)
			}
			noted := strings.Contains(strings.Join(res.Verdict.Notes, "\n"), "walkthrough failed")
			if noted != tt.wantNote {
				t.Errorf("fallback note %v, want %v; notes %q", noted, tt.wantNote, res.Verdict.Notes)
			}
			if tt.wantSource == review.WalkthroughFromModel {
				if w.Summary != "Makes main span two lines and tests it." || w.Groups[0].Files[0].Line != "Splits main's body." {
					t.Errorf("the model's words were not kept: %+v", w)
				}
				if res.Verdict.Stats.LLMCalls != 2 || res.Cost.InputTokens == 0 {
					t.Errorf("stats %+v: want the walkthrough call counted", res.Verdict.Stats)
				}
			}
		})
	}
}
