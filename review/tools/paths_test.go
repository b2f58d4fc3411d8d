package tools_test

import (
	"strings"
	"testing"

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/review/source/localgit"
)

// TestExactPaths: the tools take a path byte for byte. " settings.py",
// "settings.py " and "settings.py" are three files; a path with a tab is
// a fourth. Traversal and absolute paths are still refused.
func TestExactPaths(t *testing.T) {
	r := &gitRepo{t: t, dir: t.TempDir()}
	r.git(nil, "init", "-q", "-b", "main")
	r.write(map[string]string{"README.md": "# App\n"})
	r.commit("Ada", "2024-03-01T09:00:00Z", "Initial import")
	r.write(map[string]string{
		" settings.py":   "LEADING = 1\n",
		"settings.py ":   "TRAILING = 2\n",
		"settings.py":    "PLAIN = 3\n",
		"tab\tname.py":   "TAB = 4\n",
		" dir /a b .py ": "SPACES = 5\n",
	})
	r.commit("Bob", "2024-03-02T10:30:00Z", "Settings")
	tb := toolbox(t, mustSource(t, r.dir, "HEAD~1", "HEAD"), config.Default().LLM)

	tests := []struct {
		tool, args string
		want       string // in the output
	}{
		{"read_file_part", `{"file_path": " settings.py"}`, "File: \" settings.py\" (head revision, language python, total_lines 1)\nLines 1-1 of 1:\n1  LEADING = 1"},
		{"read_file_part", `{"file_path": "settings.py "}`, "TRAILING = 2"},
		{"read_file_part", `{"file_path": "settings.py"}`, "PLAIN = 3"},
		{"read_file_part", `{"file_path": "tab\tname.py"}`, "TAB = 4"},
		{"read_file_part", `{"file_path": " dir /a b .py "}`, "SPACES = 5"},
		{"diff_file", `{"file_path": " settings.py"}`, "File: \" settings.py\"\nChange: added, +1 -0\n@@ -0,0 +1 @@\n   1 + LEADING = 1"},
		{"diff_file", `{"file_path": "settings.py "}`, "+ TRAILING = 2"},
		{"diff_file", `{"file_path": "./ dir //a b .py "}`, "+ SPACES = 5"},
		{"get_blame", `{"file_path": " settings.py", "line_number": 1}`, "Bob"},
		{"changed_files", ``, `" settings.py"`},
		{"changed_files", ``, `"tab\tname.py"`},
		{"read_file_part", `{"file_path": " /etc/passwd"}`, "error: "},
		{"read_file_part", `{"file_path": "../x "}`, "outside the repository"},
		{"read_file_part", `{"file_path": "/ settings.py"}`, "absolute path"},
	}
	for _, tc := range tests {
		t.Run(tc.tool+" "+tc.args, func(t *testing.T) {
			out, err := tb.Call(t.Context(), tc.tool, tc.args)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(out, tc.want) {
				t.Errorf("output lacks %q:\n%s", tc.want, out)
			}
		})
	}
}

// mustSource opens the change base..head of the repository at dir.
func mustSource(t *testing.T, dir, base, head string) *localgit.Source {
	t.Helper()
	src, err := localgit.New(t.Context(), dir, base, head)
	if err != nil {
		t.Fatal(err)
	}
	return src
}
