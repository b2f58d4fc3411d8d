package diff

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestFormatRoundTrip checks that every fixture, formatted back to text,
// parses into the same files.
func TestFormatRoundTrip(t *testing.T) {
	for _, path := range fixtures(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			d := parseFixture(t, path)
			again, err := ParseString(Format(d))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(d, again); diff != "" {
				t.Errorf("(-parsed +parsed again):\n%s", diff)
			}
		})
	}
}

// TestFormatBytes checks the exact text for fixtures whose only lines
// Format does not keep are "index" lines.
func TestFormatBytes(t *testing.T) {
	for _, name := range []string{
		"ts-anc95-chatgpt-codereview_crlf-modified-no-trailing-newline_55767bc.diff",
		"ts-anc95-chatgpt-codereview_pr198-crlf-new-file-and-yaml_55767bc.diff",
		"go-reviewdog_unicode-paths-rename-delete-add_3c97296.diff",
		"go-reviewdog_binary-png-added_a3f39fd.diff",
		"ts-octokit-webhooks_mode-change-only_fb52ab3.diff",
	} {
		t.Run(name, func(t *testing.T) {
			raw := readFixture(t, filepath.Join("testdata", name))
			var want strings.Builder
			for line := range strings.Lines(raw) {
				if !strings.HasPrefix(line, "index ") {
					want.WriteString(line)
				}
			}
			if diff := cmp.Diff(want.String(), Format(parseFixture(t, filepath.Join("testdata", name)))); diff != "" {
				t.Errorf("(-fixture without index lines +formatted):\n%s", diff)
			}
		})
	}
}

// TestFormatPaths checks paths git quotes or marks: spaces, tabs, quotes,
// backslashes, non-ASCII.
func TestFormatPaths(t *testing.T) {
	withHunk := func(f *File, patch string) *File {
		p, err := ParsePatch(f.Path(), patch)
		if err != nil {
			t.Fatal(err)
		}
		f.Hunks, f.Additions, f.DiffBytes = p.Hunks, p.Additions, p.DiffBytes
		return f
	}
	d := &Diff{Files: []*File{
		withHunk(&File{OldPath: "dir/with space.txt", NewPath: "dir/with space.txt", Status: Modified}, "@@ -1 +1,2 @@\n a\n+b\n"),
		withHunk(&File{NewPath: "tab\tname.txt", Status: Added, NewMode: "100755"}, "@@ -0,0 +1 @@\n+b\n"),
		withHunk(&File{OldPath: `back\slash.go`, NewPath: `quote"name.go`, Status: Renamed, Similarity: 91}, "@@ -1 +1,2 @@\n a\n+b\n"),
		{OldPath: "a.md", NewPath: "日本語 ✅.md", Status: Copied, Similarity: 100},
		{OldPath: "gone file.txt", Status: Deleted, OldMode: "100644"},
		{NewPath: "img é.png", Status: Added, Binary: true, NewMode: "100644"},
		{OldPath: "run me.sh", NewPath: "run me.sh", Status: Modified, OldMode: "100644", NewMode: "100755"},
	}}
	text := Format(d)
	for _, want := range []string{
		"--- a/dir/with space.txt\t\n",
		`diff --git "a/tab\tname.txt" "b/tab\tname.txt"`,
		`rename from "back\\slash.go"`,
		`copy to "\346\227\245\346\234\254\350\252\236 \342\234\205.md"`,
		`Binary files /dev/null and "b/img \303\251.png" differ`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("formatted diff lacks %q:\n%s", want, text)
		}
	}
	again, err := ParseString(text)
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	if diff := cmp.Diff(d, again); diff != "" {
		t.Errorf("(-formatted +parsed again):\n%s", diff)
	}
}

// hunkRegions returns, per "diff --git" section of a raw diff, its text from
// the first hunk header on: what GitHub's files API gives as the patch.
func hunkRegions(raw string) []string {
	var regions []string
	for i, section := range strings.Split("\n"+raw, "\ndiff --git ") {
		if i == 0 {
			continue
		}
		at := strings.Index(section, "\n@@ -")
		if at < 0 {
			regions = append(regions, "")
			continue
		}
		regions = append(regions, strings.TrimSuffix(section[at+1:], "\n")+"\n")
	}
	return regions
}

// TestParsePatchFixtures cuts every file of every fixture into a bare patch
// (without final newline, as GitHub's API returns it) and checks that
// ParsePatch reads the hunks Parse read.
func TestParsePatchFixtures(t *testing.T) {
	for _, path := range fixtures(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			d := parseFixture(t, path)
			regions := hunkRegions(readFixture(t, path))
			if len(regions) != len(d.Files) {
				t.Fatalf("%d sections, %d files", len(regions), len(d.Files))
			}
			for i, f := range d.Files {
				if f.Binary {
					continue
				}
				got, err := ParsePatch(f.Path(), strings.TrimSuffix(regions[i], "\n"))
				if err != nil {
					t.Fatalf("%s: %v", f.Path(), err)
				}
				want := &File{
					OldPath: f.Path(), NewPath: f.Path(), Status: Modified, Hunks: f.Hunks,
					Additions: f.Additions, Deletions: f.Deletions, DiffBytes: f.DiffBytes,
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("%s (-want +got):\n%s", f.Path(), diff)
				}
				if f.DiffBytes != len(regions[i]) {
					t.Errorf("%s: DiffBytes = %d, want the hunks' text length %d", f.Path(), f.DiffBytes, len(regions[i]))
				}
			}
		})
	}
}

func TestParsePatchErrors(t *testing.T) {
	// GitHub's own documentation example for files[].patch (pulls/list-files,
	// diff-entry-items.json) is one line holding two hunk headers and no
	// hunk lines.
	example, err := os.ReadFile(filepath.Join("testdata", "github", "diff-entry-items.patch"))
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		path, patch string
		wantLine    int
		wantMsg     string
	}{
		"GitHub's documentation example": {path: "file1.txt", patch: string(example), wantLine: 1, wantMsg: "no content following fragment header"},
		"text before the first hunk":     {path: "a", patch: "hello\n@@ -1 +1 @@\n-a\n+b", wantLine: 2, wantMsg: "fragment without file header"},
		"text only":                      {path: "a", patch: "hello\n", wantLine: 1, wantMsg: `unexpected line "hello": a patch starts with a hunk header`},
		"text after the last hunk":       {path: "a", patch: "@@ -1 +1 @@\n-a\n+b\nhello", wantLine: 4, wantMsg: `unexpected line "hello" after the last hunk`},
		"miscounted hunk":                {path: "a", patch: "@@ -1,3 +1,3 @@\n a\n-b\n+c", wantLine: 1, wantMsg: "miscounts lines"},
		"invalid line operation":         {path: "a", patch: "@@ -1,2 +1,2 @@\n a\n*b\n+c", wantLine: 3, wantMsg: "invalid line operation"},
		"empty path":                     {path: "", patch: "@@ -1 +1 @@\n-a\n+b", wantMsg: "empty path"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			f, err := ParsePatch(tt.path, tt.patch)
			if err == nil {
				t.Fatalf("no error; got %d hunks", len(f.Hunks))
			}
			if !strings.HasPrefix(err.Error(), "parse patch") || !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("error %q, want one containing %q", err, tt.wantMsg)
			}
			var perr *ParseError
			if tt.wantLine != 0 && (!errors.As(err, &perr) || perr.Line != tt.wantLine) {
				t.Errorf("error %q: want a *ParseError at line %d", err, tt.wantLine)
			}
		})
	}
}

func TestParsePatch(t *testing.T) {
	tests := map[string]struct {
		patch string
		want  *File
	}{
		"empty patch": {patch: "", want: &File{OldPath: "a.txt", NewPath: "a.txt", Status: Modified}},
		"no newline at end of file": {
			patch: "@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+a",
			want: &File{OldPath: "a.txt", NewPath: "a.txt", Status: Modified, Additions: 1, Deletions: 1, DiffBytes: 46,
				Hunks: []Hunk{{OldStart: 1, OldLines: 1, NewStart: 1, NewLines: 1, Lines: []Line{
					{Kind: Delete, OldLine: 1, Text: "a", NoNewline: true},
					{Kind: Add, NewLine: 1, Text: "a"},
				}}}},
		},
		"added file": {
			patch: "@@ -0,0 +1,2 @@\n+x\r\n+y",
			want: &File{OldPath: "a.txt", NewPath: "a.txt", Status: Modified, Additions: 2, DiffBytes: 23,
				Hunks: []Hunk{{OldStart: 0, OldLines: 0, NewStart: 1, NewLines: 2, Lines: []Line{
					{Kind: Add, NewLine: 1, Text: "x", CRLF: true},
					{Kind: Add, NewLine: 2, Text: "y"},
				}}}},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := ParsePatch("a.txt", tt.patch)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestShowPath(t *testing.T) {
	tests := map[string]string{
		"a/b.go":               "a/b.go",
		"a b/c d.py":           "a b/c d.py",
		"ünï cødé.py":          "ünï cødé.py",
		`dir/"q".go`:           `dir/"q".go`,
		`back\slash.py`:        `back\slash.py`,
		" settings.py":         `" settings.py"`,
		"settings.py ":         `"settings.py "`,
		"settings.py\t":        `"settings.py\t"`,
		"tab\tname.py":         `"tab\tname.py"`,
		"line\nbreak.py":       `"line\nbreak.py"`,
		`"quoted".py`:          `"\"quoted\".py"`,
		"nbsp\u00a0.py":        `"nbsp\u00a0.py"`,
		"latin1-\xe9.py":       `"latin1-\xe9.py"`,
		"\u3000ideographic.py": `"\u3000ideographic.py"`,
	}
	for in, want := range tests {
		if got := ShowPath(in); got != want {
			t.Errorf("ShowPath(%q) = %s, want %s", in, got, want)
		}
	}
}
