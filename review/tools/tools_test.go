package tools_test

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/review/diff"
	"github.com/mergeguard/mergeguard/review/source/difftext"
	"github.com/mergeguard/mergeguard/review/source/localgit"
	"github.com/mergeguard/mergeguard/review/tools"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// checkGolden compares got with testdata/name, rewriting it with -update.
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := "testdata/" + name
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update)", err)
	}
	if d := cmp.Diff(string(want), got); d != "" {
		t.Errorf("%s (-want +got):\n%s", name, d)
	}
}

// TestToolsGolden calls every tool on a real repository, with good and bad
// arguments, and records the results.
func TestToolsGolden(t *testing.T) {
	tb := toolbox(t, newRepo(t), config.Default().LLM)
	calls := []struct{ tool, args string }{
		{"changed_files", ``},
		{"get_commit_messages", `{}`},
		{"get_commit_messages", `{"max_commits": 1}`},
		{"diff_file", `{"file_path": "cmd/app/main.go"}`},
		{"diff_file", `{"file_path": "cmd/app/main.go", "start_hunk": 2, "context_lines": 1}`},
		{"diff_file", `{"file_path": "cmd/app/main.go", "start_hunk": 3}`},
		{"diff_file", `{"file_path": "./pkg//name.go", "context_lines": 10}`},
		{"diff_file", `{"file_path": "assets/logo.png"}`},
		{"diff_file", `{"file_path": "app/main.go"}`},
		{"read_file_part", `{"file_path": "cmd/app/main.go", "start_line": 8, "end_line": 14}`},
		{"read_file_part", `{"file_path": "cmd/app/main.go", "start_line": "8", "end_line": "9", "branch": "base"}`},
		{"get_file_context", `{"file_path": "internal/store/store.go", "start_line": null, "end_line": null, "branch": null}`},
		{"read_file_part", `{"file_path": "big.txt", "start_line": 995, "end_line": 2000}`},
		{"read_file_part", `{"file_path": "big.txt", "start_line": 1001}`},
		{"read_file_part", `{"file_path": "big.txt", "start_line": 20, "end_line": 10}`},
		{"read_file_part", `{"file_path": "big.txt", "start_line": 0}`},
		{"read_file_part", `{"file_path": "big.txt", "start_line": 1.5}`},
		{"read_file_part", `{"file_path": "../../etc/passwd"}`},
		{"read_file_part", `{"file_path": "/etc/passwd"}`},
		{"read_file_part", `{"file_path": "cmd/../../x"}`},
		{"read_file_part", `{"file_path": "a\u0000b"}`},
		{"read_file_part", `{"file_path": "."}`},
		{"read_file_part", `{"file_path": "cmd"}`},
		{"read_file_part", `{"file_path": "internal/store/legacy.go"}`},
		{"read_file_part", `{"file_path": "internal/store/legacy.go", "branch": "base"}`},
		{"read_file_part", `{"file_path": "docs/new.md", "branch": "base"}`},
		{"read_file_part", `{"file_path": "old/name.go"}`},
		{"read_file_part", `{"file_path": "assets/logo.png"}`},
		{"read_file_part", `{"file_path": "missing.go"}`},
		{"read_file_part", `{"file_path": "README.md", "branch": "main"}`},
		{"read_file_part", `{}`},
		{"read_file_part", `{"file_path": 42}`},
		{"get_blame", `{"file_path": "cmd/app/main.go", "line_number": 9}`},
		{"get_blame", `{"file_path": "cmd/app/main.go", "line_number": 12}`},
		{"get_blame", `{"file_path": "cmd/app/main.go", "line_number": 999}`},
		{"get_blame", `{"file_path": "cmd/app/main.go"}`},
		{"search_in_files", `{"pattern": "TODO"}`},
		{"search_in_files", `{"pattern": "TODO", "file_pattern": "*.go", "context_lines": 0}`},
		{"search_in_files", `{"pattern": "func \\w+\\(w http", "file_pattern": "cmd/**", "context_lines": 1, "max_results": 2}`},
		{"search_in_files", `{"pattern": "nothing-matches-this"}`},
		{"search_in_files", `{"pattern": "(unclosed"}`},
		{"search_in_files", `{"pattern": "x", "file_pattern": "[a-"}`},
		{"list_files", `{}`},
		{"list_files", `{"directory": "internal"}`},
		{"list_files", `{"pattern": "**/*.go"}`},
		{"list_files", `{"directory": "cmd", "pattern": "*.go"}`},
		{"list_files", `{"directory": "nowhere"}`},
		{"list_files", `{"directory": "../"}`},
		{"no_such_tool", `{}`},
		{"list_files", `{"directory": `},
		{"list_files", `["a"]`},
	}
	var b strings.Builder
	for _, c := range calls {
		out, err := tb.Call(t.Context(), c.tool, c.args)
		if err != nil {
			t.Fatalf("%s %s: %v", c.tool, c.args, err)
		}
		fmt.Fprintf(&b, "=== %s %s\n%s", c.tool, c.args, out)
		if !strings.HasSuffix(out, "\n") {
			b.WriteString("\n")
		}
	}
	checkGolden(t, "calls.golden", b.String())
}

func TestOutputBounded(t *testing.T) {
	src := newRepo(t)
	tests := []struct {
		limit                 int
		tool, args, note, not string
	}{
		{1500, "read_file_part", `{"file_path": "big.txt"}`, "[output limit reached: lines 1-", ""},
		{1500, "read_file_part", `{"file_path": "big.txt", "start_line": 900, "end_line": 920}`, "Lines 900-920 of 1000", "["},
		{10000, "read_file_part", `{"file_path": "big.txt", "start_line": 1, "end_line": 400}`,
			"[at most 100 lines per call: lines 1-100 shown; call again with start_line=101 for more]", ""},
		{1500, "search_in_files", `{"pattern": "row", "max_results": 200}`, "[output limit reached: narrow the pattern", ""},
		{1500, "list_files", `{}`, "10 files", "["},
		{400, "list_files", `{}`, "more not shown: narrow the directory or pattern]", ""},
		{700, "diff_file", `{"file_path": "cmd/app/main.go"}`, "[1 hunk more: call diff_file with start_hunk=2]", ""},
		{500, "diff_file", `{"file_path": "cmd/app/main.go"}`, "[hunk 1 is too long to show whole", ""},
		{400, "changed_files", `{}`, "more files not shown]", ""},
	}
	for _, tt := range tests {
		tb := toolbox(t, src, limits(tt.limit, 100))
		out, err := tb.Call(t.Context(), tt.tool, tt.args)
		if err != nil {
			t.Fatal(err)
		}
		if len(out) > tt.limit {
			t.Errorf("%s %s: %d bytes, over the %d limit", tt.tool, tt.args, len(out), tt.limit)
		}
		if !strings.Contains(out, tt.note) || (tt.not != "" && strings.Contains(out, tt.not)) {
			t.Errorf("%s %s (limit %d): want %q and not %q in:\n%s", tt.tool, tt.args, tt.limit, tt.note, tt.not, out)
		}
	}
}

func TestCanceledContextIsAnError(t *testing.T) {
	tb := toolbox(t, newRepo(t), config.Default().LLM)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	for _, tool := range []string{"read_file_part", "search_in_files", "list_files", "get_blame", "changed_files"} {
		if _, err := tb.Call(ctx, tool, `{"file_path": "README.md", "pattern": "x", "line_number": 1}`); err == nil {
			t.Errorf("%s with a canceled context: no error", tool)
		}
	}
}

func TestBareDiffSource(t *testing.T) {
	text, err := os.ReadFile("../diff/testdata/go-reviewdog_rename-with-changes_223ba6c.diff")
	if err != nil {
		t.Fatal(err)
	}
	src, err := difftext.New(string(text))
	if err != nil {
		t.Fatal(err)
	}
	d, err := diff.ParseString(string(text))
	if err != nil {
		t.Fatal(err)
	}
	tb := tools.New(src, d, config.Default().LLM)
	var b strings.Builder
	for _, c := range []struct{ tool, args string }{
		{"changed_files", `{}`},
		{"get_commit_messages", `{}`},
		{"get_blame", `{"file_path": "filter/filter.go", "line_number": 3}`},
		{"read_file_part", `{"file_path": "filter/filter.go"}`},
		{"list_files", `{}`},
		{"search_in_files", `{"pattern": "package"}`},
	} {
		out, err := tb.Call(t.Context(), c.tool, c.args)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "=== %s %s\n%s\n", c.tool, c.args, strings.TrimSuffix(out, "\n"))
	}
	checkGolden(t, "bare-diff.golden", b.String())
}

func TestDefinitions(t *testing.T) {
	tb := tools.New(nil, nil, config.Default().LLM)
	var names []string
	for _, d := range tb.Definitions() {
		names = append(names, d.Function.Name)
		var schema map[string]any
		if err := json.Unmarshal(d.Function.Parameters.(json.RawMessage), &schema); err != nil {
			t.Errorf("%s: parameters are not JSON: %v", d.Function.Name, err)
		}
		if d.Function.Strict || schema["additionalProperties"] != false {
			t.Errorf("%s: non-strict definition is %+v", d.Function.Name, schema)
		}
	}
	want := []string{"changed_files", "get_commit_messages", "diff_file", "read_file_part", "get_file_context",
		"get_blame", "search_in_files", "list_files"}
	if d := cmp.Diff(want, names); d != "" {
		t.Errorf("names (-want +got):\n%s", d)
	}
	var all []string
	for _, strict := range []bool{false, true} {
		b, err := json.MarshalIndent(tools.New(nil, nil, strictTools(strict)).Definitions(), "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, string(b))
	}
	checkGolden(t, "definitions.golden", strings.Join(all, "\n")+"\n")
	if !slices.Contains(names, tools.GetFileContext) {
		t.Error("alias missing")
	}
}

// preloading is a real source that also counts Preload calls, as the
// GitHub source offers them.
type preloading struct {
	*localgit.Source
	preloads atomic.Int32
}

func (p *preloading) Preload(context.Context) error {
	p.preloads.Add(1)
	return errors.New("archive too large")
}

func TestSearchPreloads(t *testing.T) {
	src := &preloading{Source: newRepo(t)}
	text, err := src.Diff(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	d, err := diff.ParseString(text)
	if err != nil {
		t.Fatal(err)
	}
	tb := tools.New(src, d, config.Default().LLM)
	// A failed preload changes nothing: the files are read one by one.
	for range 2 {
		out, err := tb.Call(t.Context(), "search_in_files", `{"pattern": "row 1000"}`)
		if err != nil || !strings.Contains(out, "big.txt:1000:row 1000") {
			t.Errorf("search = %q, %v", out, err)
		}
	}
	// Two files are read without preloading.
	if _, err := tb.Call(t.Context(), "search_in_files", `{"pattern": "x", "file_pattern": "*.md"}`); err != nil {
		t.Fatal(err)
	}
	if n := src.preloads.Load(); n != 2 {
		t.Errorf("Preload called %d times, want 2 (once per search of the whole repository)", n)
	}
}
