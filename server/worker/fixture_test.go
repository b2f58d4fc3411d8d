package worker_test

import (
	"maps"
	"slices"
	"strings"

	"github.com/mergeguard/mergeguard/github/githubtest"
	"github.com/mergeguard/mergeguard/review/llm/llmtest"
)

// The change under review: a new store/users.go with an SQL injection on
// line 10 and a new mathx/div.go dividing without a check on line 4.
const (
	usersGo = "package store\n\nimport (\n\t\"database/sql\"\n\t\"fmt\"\n)\n\n" +
		"// FindUser returns the user with the given name.\n" +
		"func FindUser(db *sql.DB, name string) (*sql.Rows, error) {\n" +
		"\tq := fmt.Sprintf(\"SELECT id FROM users WHERE name = '%s'\", name)\n" +
		"\treturn db.Query(q)\n}\n"
	divGo = "package mathx\n\n// Div divides a by b.\nfunc Div(a, b int) int { return a / b }\n"
)

// finding is a finding as the model writes it.
type finding struct {
	FilePath    string  `json:"file_path"`
	LineStart   int     `json:"line_start"`
	LineEnd     int     `json:"line_end"`
	Side        string  `json:"side"`
	Severity    string  `json:"severity"`
	Category    string  `json:"category"`
	Title       string  `json:"title"`
	Description string  `json:"description"`
	Suggestion  string  `json:"suggestion"`
	CodeSnippet string  `json:"code_snippet"`
	Confidence  float64 `json:"confidence"`
}

var (
	sqlInjection = finding{FilePath: "store/users.go", LineStart: 10, LineEnd: 10, Side: "RIGHT", Severity: "critical",
		Category: "security", Title: "SQL injection", Description: "name is formatted into the query.",
		Suggestion:  "Use a placeholder.",
		CodeSnippet: "q := fmt.Sprintf(\"SELECT id FROM users WHERE name = '%s'\", name)", Confidence: 0.9}
	divByZero = finding{FilePath: "mathx/div.go", LineStart: 4, LineEnd: 4, Side: "RIGHT", Severity: "warning",
		Category: "bug", Title: "Division by zero", Description: "b may be zero.",
		CodeSnippet: "func Div(a, b int) int { return a / b }", Confidence: 0.8}
)

// reviewer answers like a model reviewing the change: the findings of each
// file shown in the request.
func reviewer(req llmtest.Request) llmtest.Response {
	prompt := ""
	for _, m := range req.Messages {
		prompt += m.Content
	}
	found := []finding{}
	for _, f := range []finding{sqlInjection, divByZero} {
		if strings.Contains(prompt, f.FilePath) {
			found = append(found, f)
		}
	}
	return llmtest.JSON(map[string]any{"findings": found, "positive_notes": []any{}})
}

// pr is Codertocat/Hello-World#2 at head, adding files to a base holding
// base.
func pr(head string, base, added map[string]string) githubtest.PR {
	headFiles := maps.Clone(base)
	var d strings.Builder
	for _, p := range slices.Sorted(maps.Keys(added)) {
		headFiles[p] = added[p]
		d.WriteString(githubtest.AddedFileDiff(p, added[p]))
	}
	return githubtest.PR{
		Owner: owner, Repo: repoName, Number: prNumber, Title: "Add user lookup",
		Base: base, Head: headFiles, HeadSHA: head, Diff: d.String(),
	}
}

// standardPR is the change most tests review, at head.
func standardPR(head string) githubtest.PR {
	return pr(head, map[string]string{"README.md": "Hello\n"},
		map[string]string{"store/users.go": usersGo, "mathx/div.go": divGo})
}
