package localgit_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mergeguard/mergeguard/review/diff"
	"github.com/mergeguard/mergeguard/review/source/localgit"
)

// parsedDiff opens the change base..head of r and parses its diff.
func parsedDiff(t *testing.T, r *repo, base, head string) *diff.Diff {
	t.Helper()
	src, err := localgit.New(t.Context(), r.dir, base, head)
	if err != nil {
		t.Fatal(err)
	}
	text, err := src.Diff(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	d, err := diff.ParseString(text)
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	return d
}

// fileSummary is what the attribute test compares of a diff's file.
type fileSummary struct {
	Binary bool
	Added  []string
}

func summarize(d *diff.Diff) map[string]fileSummary {
	out := map[string]fileSummary{}
	for _, f := range d.Files {
		s := fileSummary{Binary: f.Binary}
		for _, h := range f.Hunks {
			for _, l := range h.Lines {
				if l.Kind == diff.Add {
					s.Added = append(s.Added, l.Text)
				}
			}
		}
		out[f.Path()] = s
	}
	return out
}

// TestAttributesAndConfigDoNotHideChanges: the reviewed commit's
// .gitattributes (-diff, binary, a diff driver) and the repository's
// configuration (textconv, external diff, colours, prefixes, big-file
// threshold, blank-line suppression, submodule format) change nothing in
// the diff MergeGuard reviews. A file is binary by its content (a NUL
// byte), not by what the repository says about it.
func TestAttributesAndConfigDoNotHideChanges(t *testing.T) {
	r := newRepo(t)
	r.write("README.md", "# App\n\n\nend\n")
	r.write("blank.txt", "a\n\nb\n")
	base := r.commit("Ada", "2024-03-01T09:00:00Z", "base")
	r.write(".gitattributes", "*.py -diff\n*.js binary\n*.rb diff=evil\n*.txt diff=evil\n")
	r.write("app.py", "KEY = \"AKIAZ7VRSQ5TJN2XMY4W\"\nimport os\nos.system(input())\n")
	r.write("web.js", "eval(location.hash)\n")
	r.write("tool.rb", "system(ARGV[0])\n")
	r.write("blank.txt", "a\n\nB\n")
	r.write("logo.png", "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	head := r.commit("Ada", "2024-03-02T09:00:00Z", "hide")
	for _, kv := range [][2]string{
		{"diff.evil.textconv", "sh -c 'echo HIDDEN'"}, {"diff.evil.binary", "true"},
		{"diff.evil.command", "sh -c 'echo EXTERNAL'"}, {"diff.external", "sh -c 'echo EXTERNAL'"},
		{"core.bigFileThreshold", "1"}, {"diff.suppressBlankEmpty", "true"}, {"color.ui", "always"},
		{"color.diff", "always"}, {"diff.noprefix", "true"}, {"diff.mnemonicPrefix", "true"},
		{"diff.submodule", "diff"}, {"diff.context", "0"}, {"diff.interHunkContext", "10"},
		{"core.attributesFile", r.dir + "/.gitattributes"}, {"diff.relative", "true"},
	} {
		r.git("", "config", kv[0], kv[1])
	}

	got := summarize(parsedDiff(t, r, base, head))
	want := map[string]fileSummary{
		".gitattributes": {Added: []string{"*.py -diff", "*.js binary", "*.rb diff=evil", "*.txt diff=evil"}},
		"app.py":         {Added: []string{`KEY = "AKIAZ7VRSQ5TJN2XMY4W"`, "import os", "os.system(input())"}},
		"web.js":         {Added: []string{"eval(location.hash)"}},
		"tool.rb":        {Added: []string{"system(ARGV[0])"}},
		"blank.txt":      {Added: []string{"B"}},
		"logo.png":       {Binary: true, Added: []string{"\x89PNG", "\x1a", "\x00\x00\x00\rIHDR"}}, // kept for the secret scan
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("diff files (-want +got):\n%s", d)
	}
}

// TestExactPathsFromGit: real git output for names with leading and
// trailing spaces, tabs, quotes, backslashes and non-ASCII letters, added,
// modified, renamed and mode-changed, parses into the exact names.
func TestExactPathsFromGit(t *testing.T) {
	names := []string{" settings.py", "trail.py ", "tab\tname.py", `q"uote.py`, `back\slash.py`, "ünï.py", "sp ace.py", " dir /a b .py ", `ends\`, `q\"`}
	r := newRepo(t)
	r.write("README.md", "# App\n")
	for _, n := range names {
		r.write(n, "one\n")
	}
	base := r.commit("Ada", "2024-03-01T09:00:00Z", "base")
	for _, n := range names {
		r.write(n, "one\ntwo\n")
	}
	r.git("", "mv", "sp ace.py", " moved .py ")
	r.git("", "update-index", "--chmod=+x", " settings.py")
	head := r.commit("Ada", "2024-03-02T09:00:00Z", "change")

	var got []string
	for _, f := range parsedDiff(t, r, base, head).Files {
		got = append(got, f.OldPath+" -> "+f.NewPath+" "+string(f.Status)+" +"+strings.Repeat("1", f.Additions))
	}
	want := []string{
		" dir /a b .py  ->  dir /a b .py  modified +1",
		"sp ace.py ->  moved .py  renamed +1",
		" settings.py ->  settings.py modified +1",
		`back\slash.py -> back\slash.py modified +1`,
		`ends\ -> ends\ modified +1`,
		`q"uote.py -> q"uote.py modified +1`,
		`q\" -> q\" modified +1`,
		"tab\tname.py -> tab\tname.py modified +1",
		"trail.py  -> trail.py  modified +1",
		"ünï.py -> ünï.py modified +1",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("files (-want +got):\n%s", d)
	}
}
