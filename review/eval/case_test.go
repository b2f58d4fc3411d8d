package eval

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseJSONL(t *testing.T) {
	data := `# a comment
{"id":"d1","diff":"diff --git a/x b/x\n","title":"T","golden":[{"file":"x","line":3,"severity":"warning","text":"bug"}],"clean":false}

{"tree":"cases/t","golden":[],"clean":true}
{"repo":"/abs/repo","base":"main","head":"topic","golden":[{"file":"y","start_line":2,"end_line":4,"text":"z"}],"clean":false}
`
	got, err := ParseJSONL([]byte(data), "/data")
	if err != nil {
		t.Fatal(err)
	}
	want := []Case{
		{ID: "d1", Diff: "diff --git a/x b/x\n", Title: "T", Golden: []Golden{{File: "x", Line: 3, Severity: "warning", Text: "bug"}}},
		{ID: "line-4", Tree: "/data/cases/t", Golden: []Golden{}, Clean: true},
		{ID: "line-5", Repo: "/abs/repo", Base: "main", Head: "topic", Golden: []Golden{{File: "y", StartLine: 2, EndLine: 4, Text: "z"}}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ParseJSONL (-want +got):\n%s", diff)
	}
	if s, e := got[2].Golden[0].Lines(); s != 2 || e != 4 {
		t.Errorf("Lines = %d, %d, want 2, 4", s, e)
	}
}

func TestParseJSONLErrors(t *testing.T) {
	tests := []struct{ name, data, want string }{
		{"unknown field", `{"id":"a","diff":"x","golden":[],"bogus":1}`, "unknown field"},
		{"no source", `{"id":"a","golden":[]}`, "exactly one of diff, repo or tree"},
		{"two sources", `{"id":"a","diff":"x","tree":"t"}`, "exactly one of diff, repo or tree"},
		{"clean with golden", `{"id":"a","diff":"x","clean":true,"golden":[{"text":"x"}]}`, "clean case has golden"},
		{"golden without text", `{"id":"a","diff":"x","golden":[{"file":"f","line":1}]}`, "no text"},
		{"lines without file", `{"id":"a","diff":"x","golden":[{"line":1,"text":"t"}]}`, "without a file"},
		{"bad context", `{"id":"a","diff":"x","context_lines":[{"file":"f","start_line":3,"end_line":2}]}`, "context_lines 1"},
		{"duplicate id", "{\"id\":\"a\",\"diff\":\"x\"}\n{\"id\":\"a\",\"diff\":\"y\"}", "used twice"},
		{"not json", `{`, "line 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseJSONL([]byte(tt.data), ".")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestParseMartian(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{"getsentry-sentry-93824.diff": "diff A", "7.diff": "diff B"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	data := `[
 {"pr_title":"Fix spans","url":"https://github.com/getsentry/sentry/pull/93824","original_url":"x",
  "comments":[{"comment":"Null check missing","severity":"High"},{"comment":"Typo","severity":"Low"}]},
 {"pr_title":"Clean","url":"https://github.com/grafana/grafana/pull/7","comments":[]}
]`
	got, err := ParseMartian([]byte(data), dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []Case{
		{ID: "getsentry-sentry-93824", Title: "Fix spans", Body: "https://github.com/getsentry/sentry/pull/93824", Diff: "diff A",
			Golden: []Golden{{Severity: "high", Text: "Null check missing"}, {Severity: "low", Text: "Typo"}}},
		{ID: "grafana-grafana-7", Title: "Clean", Body: "https://github.com/grafana/grafana/pull/7", Diff: "diff B", Clean: true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ParseMartian (-want +got):\n%s", diff)
	}
	_, err = ParseMartian([]byte(`[{"pr_title":"x","url":"https://github.com/a/b/pull/9","comments":[]},{"url":"https://github.com/a/b/issues/1"}]`), dir)
	for _, w := range []string{"a-b-9.diff and 9.diff", "is not https://HOST/OWNER/REPO/pull/N"} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("err = %v, want one containing %q", err, w)
		}
	}
}
