package suggest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mergeguard/mergeguard/review/analyzer"
)

// TestCheck applies suggestions to real-looking files of testdata/ and
// checks each check: the reason ("" when the suggestion applies) must
// contain want.
func TestCheck(t *testing.T) {
	tests := map[string]struct {
		file       string
		start, end int
		code       string
		hunk       [2]int // the head lines of the diff's one hunk; zero: every line
		want       string
	}{
		"go one line":                      {file: "handler.go", start: 12, end: 12, code: "\t\tname = \"stranger\""},
		"go multi-line":                    {file: "handler.go", start: 11, end: 13, code: "\tif name == \"\" {\n\t\thttp.Error(w, \"name is required\", http.StatusBadRequest)\n\t\treturn\n\t}"},
		"go delete a line":                 {file: "handler.go", start: 12, end: 12, code: "\t\t// keep the empty name"},
		"python one line":                  {file: "users.py", start: 6, end: 6, code: `    cur.execute("SELECT id FROM users WHERE name = ?", (name,))`},
		"python multi-line":                {file: "users.py", start: 8, end: 10, code: "    return None if row is None else row[0]"},
		"js one line":                      {file: "cart.js", start: 4, end: 4, code: "    sum += item.price * (item.qty ?? 1);"},
		"java one line":                    {file: "Lexer.java", start: 11, end: 11, code: "        return src == null ? 0 : src.length();"},
		"shell one line":                   {file: "deploy.sh", start: 4, end: 4, code: "\techo \"deploying ${1}\""},
		"go unbalanced":                    {file: "handler.go", start: 12, end: 12, code: "\t\tname = strings.TrimSpace(\"world\"", want: "syntax error"},
		"go extra brace":                   {file: "handler.go", start: 11, end: 13, code: "\tif name == \"\" {\n\t\tname = \"world\"\n\t}\n\t}", want: "syntax error"},
		"python unbalanced":                {file: "users.py", start: 6, end: 6, code: `    cur.execute("SELECT id FROM users WHERE name = ?", (name,)`, want: "syntax error"},
		"js unbalanced":                    {file: "cart.js", start: 4, end: 4, code: "    sum += (item.price * item.qty;", want: "syntax error"},
		"java unbalanced":                  {file: "Lexer.java", start: 11, end: 11, code: "        return src.length(;", want: "syntax error"},
		"shell prose is not checked":       {file: "deploy.sh", start: 4, end: 4, code: "\techo \"deploying $1\" # (quoted"},
		"go spaces in a tab file":          {file: "handler.go", start: 12, end: 12, code: "        name = \"stranger\"", want: "indented with spaces; the file is indented with tabs"},
		"python tabs in a space file":      {file: "users.py", start: 7, end: 7, code: "\trow = cur.fetchone()", want: "indented with tabs"},
		"python dedented":                  {file: "users.py", start: 7, end: 7, code: "row = cur.fetchone()", want: "indented not at all; the line it replaces by 4 space(s)"},
		"js over-indented":                 {file: "cart.js", start: 4, end: 4, code: "      sum += item.price * item.qty;", want: "indented by 6 space(s)"},
		"past the end of the file":         {file: "users.py", start: 9, end: 12, code: "    return row", want: "lines 9-12 are not in the file (10 lines)"},
		"no line":                          {file: "users.py", start: 0, end: 0, code: "    return row", want: "are not in the file"},
		"outside the hunk":                 {file: "handler.go", start: 11, end: 14, code: "\tif name == \"\" {\n\t\tname = \"world\"\n\t}\n\tfmt.Fprint(w, name)", hunk: [2]int{9, 12}, want: "not all in one hunk"},
		"repeats the next line":            {file: "users.py", start: 6, end: 6, code: "    cur.execute(\"SELECT id FROM users WHERE name = ?\", (name,))\n    row = cur.fetchone()", want: "repeats line(s) 7-7 after"},
		"repeats the line before":          {file: "users.py", start: 6, end: 6, code: "    cur = db.cursor()\n    cur.execute(\"SELECT id FROM users WHERE name = ?\", (name,))", want: "repeats line(s) 5-5 before"},
		"closing brace may repeat":         {file: "cart.js", start: 4, end: 4, code: "    if (item.qty > 0) {\n      sum += item.price * item.qty;\n    }"},
		"go not gofmt-clean":               {file: "handler.go", start: 12, end: 12, code: "\t\tname   =   \"stranger\"", want: "not gofmt-clean"},
		"spaces in a string of a tab file": {file: "usage.go.txt", start: 4, end: 4, code: "      --format string   text, json or sarif"},
		"alignment of an unclean file":     {file: "usage.go.txt", start: 8, end: 8, code: "\tshort     = 3"},
		"unclean suggestion, unclean file": {file: "usage.go.txt", start: 14, end: 14, code: "\t_ =x", want: "the suggestion is not gofmt-clean"},
		"analyzer finds more":              {file: "users.py", start: 7, end: 7, code: "    breakpoint()", want: "analyzer:debug-statements finds 1 more problem"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			content, err := os.ReadFile(filepath.Join("testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			in := Input{Path: "src/" + strings.TrimSuffix(tt.file, ".txt"), Content: content, Start: tt.start, End: tt.end, Code: tt.code,
				Analyzers: []analyzer.Analyzer{analyzer.DebugStatements{}}}
			if tt.hunk != [2]int{} {
				in.InDiff = func(s, e int) bool { return s >= tt.hunk[0] && e <= tt.hunk[1] }
			}
			got := Check(t.Context(), in)
			switch {
			case tt.want == "" && got != "":
				t.Errorf("rejected: %s", got)
			case tt.want != "" && !strings.Contains(got, tt.want):
				t.Errorf("reason = %q, want one containing %q", got, tt.want)
			}
		})
	}
}
