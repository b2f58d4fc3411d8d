package diff

import (
	"bytes"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"
)

// fileWant is what a fixture case checks about one file of the diff.
type fileWant struct {
	path, oldPath      string
	status             Status
	binary             bool
	similarity         int
	oldMode, newMode   string
	hunks              int
	additions, deletes int
}

func fileGot(f *File) fileWant {
	return fileWant{
		path: f.Path(), oldPath: f.OldPath, status: f.Status, binary: f.Binary,
		similarity: f.Similarity, oldMode: f.OldMode, newMode: f.NewMode,
		hunks: len(f.Hunks), additions: f.Additions, deletes: f.Deletions,
	}
}

// TestParseFixtures checks, for every case the fixtures cover, the files
// that make the case (numbers read off the raw diffs and testdata/SOURCES.md).
func TestParseFixtures(t *testing.T) {
	tests := map[string]struct {
		fixture string
		files   int
		// Totals over the whole diff (testdata/SOURCES.md gives git numstat totals).
		hunks, additions, deletions int
		// want holds the files checked one by one, by index in the diff.
		want map[int]fileWant
	}{
		"binary added": {
			fixture: "go-reviewdog_binary-png-added_a3f39fd.diff", files: 3,
			hunks: 1, additions: 5, deletions: 1,
			want: map[int]fileWant{
				1: {path: "assets/reviewdog.logo.dark.png", status: Added, binary: true, newMode: "100644"},
				2: {path: "assets/reviewdog.logo.png", status: Added, binary: true, newMode: "100644"},
			},
		},
		"binary modified": {
			fixture: "py-pr-agent_binary-modified-favicon_0f28471.diff", files: 1,
			want: map[int]fileWant{
				0: {path: "docs/docs/assets/favicon.ico", oldPath: "docs/docs/assets/favicon.ico", status: Modified, binary: true},
			},
		},
		"deleted files": {
			fixture: "go-reviewdog_deleted-files_fd5eac8.diff", files: 7,
			hunks: 10, additions: 3, deletions: 263,
			want: map[int]fileWant{
				5: {path: "doghouse/server/ciutil/ciutil.go", oldPath: "doghouse/server/ciutil/ciutil.go", status: Deleted, oldMode: "100644", hunks: 1, deletes: 152},
				6: {path: "doghouse/server/ciutil/ciutil_test.go", oldPath: "doghouse/server/ciutil/ciutil_test.go", status: Deleted, oldMode: "100644", hunks: 1, deletes: 70},
			},
		},
		"pure rename": {
			fixture: "go-reviewdog_rename-pure-100pct_4b48cc0.diff", files: 2,
			hunks: 1, additions: 2, deletions: 2,
			want: map[int]fileWant{
				1: {path: "_testdata/suggestions.txt", oldPath: "_testdata/suggestions.go", status: Renamed, similarity: 100},
			},
		},
		"rename with changes": {
			fixture: "go-reviewdog_rename-with-changes_223ba6c.diff", files: 14, hunks: 64,
			want: map[int]fileWant{
				6: {path: "filter/filter.go", oldPath: "filter.go", status: Renamed, similarity: 90, hunks: 3, additions: 5, deletes: 6},
				7: {path: "filter/filter_test.go", oldPath: "filter_test.go", status: Renamed, similarity: 96, hunks: 5, additions: 4, deletes: 5},
			},
		},
		"unicode content, quoted paths, added files": {
			fixture: "go-reviewdog_unicode-content-quoted-paths-added-files_5b64eb0.diff", files: 6,
			want: map[int]fileWant{
				1: {path: `diff/testdata/"日本語".diff`, status: Added, newMode: "100644", hunks: 1, additions: 10},
				3: {path: `diff/testdata/"日本語".new.txt`, status: Added, newMode: "100644", hunks: 1, additions: 4},
				4: {path: `diff/testdata/"日本語".old.txt`, status: Added, newMode: "100644", hunks: 1, additions: 3},
			},
		},
		"unicode paths: rename, delete, add": {
			fixture: "go-reviewdog_unicode-paths-rename-delete-add_3c97296.diff", files: 6,
			want: map[int]fileWant{
				0: {path: `diff/testdata/"日本語".diff`, oldPath: `diff/testdata/"日本語".diff`, status: Deleted, oldMode: "100644", hunks: 1, deletes: 10},
				2: {path: "diff/testdata/日本語.diff", status: Added, newMode: "100644", hunks: 1, additions: 10},
				3: {path: "diff/testdata/日本語.diff.json", oldPath: `diff/testdata/"日本語".diff.json`, status: Renamed, similarity: 82, hunks: 2, additions: 3, deletes: 3},
				4: {path: "diff/testdata/日本語.new.txt", oldPath: `diff/testdata/"日本語".new.txt`, status: Renamed, similarity: 100},
			},
		},
		"CRLF, no trailing newline": {
			fixture: "ts-anc95-chatgpt-codereview_crlf-modified-no-trailing-newline_55767bc.diff", files: 1,
			hunks: 1, additions: 3,
			want: map[int]fileWant{
				0: {path: "src/test_bot/main.py", oldPath: "src/test_bot/main.py", status: Modified, hunks: 1, additions: 3},
			},
		},
		"CRLF new file and YAML": {
			fixture: "ts-anc95-chatgpt-codereview_pr198-crlf-new-file-and-yaml_55767bc.diff", files: 2,
			want: map[int]fileWant{
				1: {path: "src/test_bot/main.py", status: Added, newMode: "100644", hunks: 1, additions: 8},
			},
		},
		"mode change only": {
			fixture: "ts-octokit-webhooks_mode-change-only_fb52ab3.diff", files: 4,
			want: map[int]fileWant{
				0: {path: "bin/format-with-prettier.ts", oldPath: "bin/format-with-prettier.ts", status: Modified, oldMode: "100644", newMode: "100755"},
				3: {path: "bin/validate-payload-examples.ts", oldPath: "bin/validate-payload-examples.ts", status: Modified, oldMode: "100644", newMode: "100755"},
			},
		},
		"large multi-hunk": {
			fixture: "go-reviewdog_large-multi-hunk-2248-lines_2741682.diff", files: 12,
			hunks: 38, additions: 662, deletions: 1586,
			want: map[int]fileWant{
				10: {path: "service/github/diff_test.go", status: Added, newMode: "100644", hunks: 1, additions: 144},
			},
		},
		"lockfile": {
			fixture: "ts-octokit-webhooks_lockfile-large-7088-lines_715f783.diff", files: 11, hunks: 71,
		},
		"124-file PR with no-newline fixes": {
			fixture: "py-pr-agent_pr1316-124-files-no-trailing-newline-fixes_dfb3d80.diff", files: 124, hunks: 214,
		},
		"62-file PR with emoji": {
			fixture: "py-pr-agent_pr1706-62-files-docs-emoji-unicode_246f372.diff", files: 62, hunks: 242,
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			d := parseFixture(t, filepath.Join("testdata", tt.fixture))
			if len(d.Files) != tt.files {
				t.Fatalf("got %d files, want %d", len(d.Files), tt.files)
			}
			hunks, adds, dels := 0, 0, 0
			for _, f := range d.Files {
				hunks += len(f.Hunks)
				adds += f.Additions
				dels += f.Deletions
			}
			if tt.hunks != 0 && hunks != tt.hunks {
				t.Errorf("got %d hunks, want %d", hunks, tt.hunks)
			}
			if tt.additions+tt.deletions != 0 && (adds != tt.additions || dels != tt.deletions) {
				t.Errorf("got +%d -%d, want +%d -%d", adds, dels, tt.additions, tt.deletions)
			}
			for i, want := range tt.want {
				if diff := cmp.Diff(want, fileGot(d.Files[i]), cmp.AllowUnexported(fileWant{})); diff != "" {
					t.Errorf("file %d (-want +got):\n%s", i, diff)
				}
			}
		})
	}
}

// TestLineSize: a large diff holds millions of lines, each a Line.
func TestLineSize(t *testing.T) {
	if got := unsafe.Sizeof(Line{}); got > 32 {
		t.Errorf("a Line takes %d bytes, want at most 32", got)
	}
}

// TestParseLinesCapacity: the files' lines share slabs, but a hunk's lines
// have no capacity beyond them, so appending to one cannot overwrite the
// next hunk's or file's.
func TestParseLinesCapacity(t *testing.T) {
	for _, path := range fixtures(t) {
		d := parseFixture(t, path)
		for _, f := range d.Files {
			for hi, h := range f.Hunks {
				if cap(h.Lines) != len(h.Lines) {
					t.Errorf("%s: %s hunk %d: %d lines, capacity %d", path, f.Path(), hi+1, len(h.Lines), cap(h.Lines))
				}
			}
		}
	}
}

// TestParseLockfileSize checks the lock file rewrite against testdata/SOURCES.md:
// 7088 changed lines in all, 7048 of them in package-lock.json.
func TestParseLockfileSize(t *testing.T) {
	d := parseFixture(t, filepath.Join("testdata", "ts-octokit-webhooks_lockfile-large-7088-lines_715f783.diff"))
	total, lock := 0, 0
	for _, f := range d.Files {
		total += f.Additions + f.Deletions
		if f.Path() == "package-lock.json" {
			lock = f.Additions + f.Deletions
		}
	}
	if total != 7088 || lock != 7048 {
		t.Errorf("got %d changed lines, %d in package-lock.json; want 7088 and 7048", total, lock)
	}
}

// TestParseNoNewlineMarkers counts "\ No newline at end of file" markers
// against testdata/SOURCES.md and against a count of the raw text.
func TestParseNoNewlineMarkers(t *testing.T) {
	tests := map[string]int{
		"py-pr-agent_pr1316-124-files-no-trailing-newline-fixes_dfb3d80.diff":        44,
		"py-pr-agent_pr1706-62-files-docs-emoji-unicode_246f372.diff":                7,
		"ts-anc95-chatgpt-codereview_crlf-modified-no-trailing-newline_55767bc.diff": 1,
		// Its two "+\ No newline at end of file" lines are Go test data.
		"go-reviewdog_large-multi-hunk-2248-lines_2741682.diff": 0,
	}
	for fixture, want := range tests {
		t.Run(fixture, func(t *testing.T) {
			raw := readFixture(t, filepath.Join("testdata", fixture))
			if n := strings.Count(raw, "\n\\ No newline at end of file\n"); n != want {
				t.Fatalf("raw text has %d markers, want %d", n, want)
			}
			d := parseFixture(t, filepath.Join("testdata", fixture))
			got := 0
			for _, f := range d.Files {
				for _, h := range f.Hunks {
					for _, l := range h.Lines {
						if l.NoNewline {
							got++
						}
					}
				}
			}
			if got != want {
				t.Errorf("got %d lines marked NoNewline, want %d", got, want)
			}
		})
	}
}

// TestParseLines checks individual lines: numbering, CRLF, no-newline,
// unicode text.
func TestParseLines(t *testing.T) {
	tests := map[string]struct {
		fixture     string
		file, hunk  int
		line        int // index in Hunk.Lines
		want        Line
		wantSection string
	}{
		"CRLF context line": {
			fixture: "ts-anc95-chatgpt-codereview_crlf-modified-no-trailing-newline_55767bc.diff",
			line:    1,
			want:    Line{Kind: Context, OldLine: 2, NewLine: 2, Text: `    print("Hello, ChatGPT-CodeReview!")`, CRLF: true},
		},
		"CRLF empty line": {
			fixture: "ts-anc95-chatgpt-codereview_crlf-modified-no-trailing-newline_55767bc.diff",
			line:    5,
			want:    Line{Kind: Context, OldLine: 3, NewLine: 6, CRLF: true},
		},
		"last line without newline": {
			fixture: "ts-anc95-chatgpt-codereview_crlf-modified-no-trailing-newline_55767bc.diff",
			line:    7,
			want:    Line{Kind: Context, OldLine: 5, NewLine: 8, Text: "    main()", NoNewline: true},
		},
		"CRLF added line of a new file": {
			fixture: "ts-anc95-chatgpt-codereview_pr198-crlf-new-file-and-yaml_55767bc.diff",
			file:    1,
			want:    Line{Kind: Add, NewLine: 1, Text: "def main():", CRLF: true},
		},
		"unicode content": {
			fixture: "go-reviewdog_unicode-paths-rename-delete-add_3c97296.diff",
			file:    2, line: 6,
			want: Line{Kind: Add, NewLine: 7, Text: "-行削除"},
		},
		"second hunk numbering and section": {
			fixture: "go-reviewdog_deleted-files_fd5eac8.diff",
			file:    1, hunk: 2,
			want:        Line{Kind: Context, OldLine: 763, NewLine: 761, Text: ""},
			wantSection: "Example:",
		},
		"look-alike marker is content": {
			fixture: "go-reviewdog_large-multi-hunk-2248-lines_2741682.diff",
			file:    10, line: 29,
			want: Line{Kind: Add, NewLine: 30, Text: `\ No newline at end of file`},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			d := parseFixture(t, filepath.Join("testdata", tt.fixture))
			h := d.Files[tt.file].Hunks[tt.hunk]
			if diff := cmp.Diff(tt.want, h.Lines[tt.line]); diff != "" {
				t.Errorf("line (-want +got):\n%s", diff)
			}
			if tt.wantSection != "" && h.Section != tt.wantSection {
				t.Errorf("section %q, want %q", h.Section, tt.wantSection)
			}
		})
	}
}

// TestParseNumbering checks, for every line of every fixture, that numbers
// run on from the hunk header and that the header's counts hold.
func TestParseNumbering(t *testing.T) {
	for _, path := range fixtures(t) {
		d := parseFixture(t, path)
		for _, f := range d.Files {
			for hi, h := range f.Hunks {
				oldN, newN, oldC, newC := h.OldStart, h.NewStart, 0, 0
				for li, l := range h.Lines {
					want := Line{Kind: l.Kind, Text: l.Text, NoNewline: l.NoNewline, CRLF: l.CRLF}
					switch l.Kind {
					case Context:
						want.OldLine, want.NewLine = int32(oldN+oldC), int32(newN+newC)
						oldC++
						newC++
					case Add:
						want.NewLine = int32(newN + newC)
						newC++
					case Delete:
						want.OldLine = int32(oldN + oldC)
						oldC++
					}
					if l != want {
						t.Fatalf("%s: %s hunk %d line %d: got %+v, want %+v", filepath.Base(path), f.Path(), hi, li, l, want)
					}
				}
				if oldC != h.OldLines || newC != h.NewLines {
					t.Fatalf("%s: %s hunk %d: counted -%d +%d, header says -%d +%d", filepath.Base(path), f.Path(), hi, oldC, newC, h.OldLines, h.NewLines)
				}
			}
		}
	}
}

func TestParseSpecialInput(t *testing.T) {
	const modify = "diff --git a/a.txt b/a.txt\nindex 1111111..2222222 100644\n--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n keep\n-old\n+new\n"
	wantModify := &Diff{Files: []*File{{
		OldPath: "a.txt", NewPath: "a.txt", Status: Modified, Additions: 1, Deletions: 1, DiffBytes: 32,
		Hunks: []Hunk{{OldStart: 1, OldLines: 2, NewStart: 1, NewLines: 2, Lines: []Line{
			{Kind: Context, OldLine: 1, NewLine: 1, Text: "keep"},
			{Kind: Delete, OldLine: 2, Text: "old"},
			{Kind: Add, NewLine: 2, Text: "new"},
		}}},
	}}}
	tests := map[string]struct {
		in   string
		want *Diff
	}{
		"empty":                            {in: "", want: &Diff{}},
		"blank":                            {in: "\n\n  \n", want: &Diff{}},
		"plain":                            {in: modify, want: wantModify},
		"no final newline is not a marker": {in: strings.TrimSuffix(modify, "\n"), want: wantModify},
		"whole diff converted to CRLF":     {in: strings.ReplaceAll(modify, "\n", "\r\n"), want: wantModify},
		"trailing blank lines":             {in: modify + "\n\n", want: wantModify},
		"commit message before the diff": {
			in:   "commit 0123456\nAuthor: A <a@example.com>\n\n    Fix --- and @@ in text\n\n" + modify,
			want: wantModify,
		},
		"format-patch email with signature": {
			in:   "From 0123 Mon Sep 17 00:00:00 2001\nSubject: [PATCH] x\n\n---\n a.txt | 2 +-\n\n" + modify + "-- \n2.39.5\n\n",
			want: wantModify,
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := ParseString(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestParseReader checks that Parse reads what ParseString parses.
func TestParseReader(t *testing.T) {
	path := filepath.Join("testdata", "go-reviewdog_rename-with-changes_223ba6c.diff")
	raw := readFixture(t, path)
	got, err := Parse(strings.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(parseFixture(t, path), got); diff != "" {
		t.Errorf("(-ParseString +Parse):\n%s", diff)
	}
}

// TestParseTypeChange checks a symlink replaced by a file, which git shows
// as a deletion and an addition of the same path.
func TestParseTypeChange(t *testing.T) {
	in := "diff --git a/link b/link\ndeleted file mode 120000\nindex 1111111..0000000\n--- a/link\n+++ /dev/null\n@@ -1 +0,0 @@\n-target\n\\ No newline at end of file\n" +
		"diff --git a/link b/link\nnew file mode 100644\nindex 0000000..2222222\n--- /dev/null\n+++ b/link\n@@ -0,0 +1,2 @@\n+now\n+a file\n"
	d, err := ParseString(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Files) != 2 || d.Files[0].Status != Deleted || d.Files[1].Status != Added {
		t.Fatalf("got %d files, want a deletion and an addition", len(d.Files))
	}
	idx := NewIndex(d)
	if f, _ := idx.File("link"); f != d.Files[1] {
		t.Errorf("File(link) is not the added entry")
	}
	if !idx.Commentable("link", "RIGHT", 2) || idx.Commentable("link", "LEFT", 1) {
		t.Errorf("want the added entry's lines commentable, not the deleted one's")
	}
}

func TestParseErrors(t *testing.T) {
	const head = "diff --git a/a.txt b/a.txt\nindex 1111111..2222222 100644\n--- a/a.txt\n+++ b/a.txt\n"
	tests := map[string]struct {
		in       string
		wantLine int    // 0: not a *ParseError
		wantMsg  string // part of the error text
	}{
		"no file header": {
			in: "hello\nworld\n", wantLine: 1, wantMsg: "no file header",
		},
		"hunk header undercounts": {
			in: head + "@@ -1,2 +1,2 @@\n keep\n-old\n+new\n more\n", wantLine: 9, wantMsg: `unexpected line " more" after file "a.txt"`,
		},
		"hunk header undercounts before the next file": {
			in:       head + "@@ -1,2 +1,2 @@\n keep\n-old\n+new\n more\n" + "diff --git a/b b/b\ndeleted file mode 100644\n",
			wantLine: 9, wantMsg: "miscount",
		},
		"hunk header overcounts": {
			in: head + "@@ -1,3 +1,3 @@\n keep\n-old\n+new\n", wantLine: 5, wantMsg: "miscounts lines",
		},
		"invalid line operation": {
			in: head + "@@ -1,2 +1,2 @@\n keep\n*old\n+new\n", wantLine: 7, wantMsg: "invalid line operation",
		},
		"invalid hunk header": {
			in: head + "@@ -x,2 +1,2 @@\n keep\n", wantLine: 5, wantMsg: "invalid fragment header",
		},
		"unknown line in file header": {
			in: "diff --git a/a.txt b/a.txt\nindex 1111111..2222222 100644\nhello\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+b\n", wantLine: 3, wantMsg: `unexpected line "hello" in the header of file "a.txt"`,
		},
		"text between hunks": {
			in: head + "@@ -1 +1 @@\n-a\n+b\nnote\n@@ -5 +5 @@\n-c\n+d\n", wantLine: 9, wantMsg: "fragment without file header",
		},
		"text between files": {
			in: head + "@@ -1 +1 @@\n-a\n+b\nnote\n" + head + "@@ -1 +1 @@\n-a\n+b\n", wantLine: 8, wantMsg: `unexpected line "note"`,
		},
		"hunk without file header": {
			in: "@@ -1 +1 @@\n-a\n+b\n", wantLine: 1, wantMsg: "fragment without file header",
		},
		"plain hunk before the first git file": {
			in: "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n" + head + "@@ -1 +1 @@\n-a\n+b\n", wantLine: 3, wantMsg: "outside a \"diff --git\" section",
		},
		"hunk without changes": {
			in: head + "@@ -1,2 +1,2 @@\n a\n b\n", wantLine: 5, wantMsg: "no changes",
		},
		"combined diff": {
			in: "diff --cc a.txt\nindex 1,2..3\n--- a/a.txt\n+++ b/a.txt\n@@@ -1,1 -1,1 +1,1 @@@\n- a\n -b\n++c\n", wantLine: 1, wantMsg: "no file header",
		},
		"overlapping hunks": {
			in: head + "@@ -1,2 +1,2 @@\n a\n-b\n+c\n@@ -2 +2 @@\n-b\n+c\n", wantMsg: `file "a.txt": hunk 2 (@@ -2 +2 @@): overlaps or precedes the previous hunk`,
		},
		"range from line 0 with lines": {
			in: head + "@@ -0,1 +1 @@\n-a\n+b\n", wantMsg: "a range starting at line 0 must be empty",
		},
		"names differ without a rename": {
			in: "diff --git a/x b/y\n--- a/x\n+++ b/y\n@@ -1 +1 @@\n-a\n+b\n", wantMsg: `file "y": the old name "x" differs but the header shows no rename or copy`,
		},
		"line number out of range": {
			in: head + "@@ -99999999999 +1 @@\n-a\n+b\n", wantMsg: "out of range",
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			d, err := ParseString(tt.in)
			if err == nil {
				t.Fatalf("no error; parsed %d files", len(d.Files))
			}
			if !strings.HasPrefix(err.Error(), "parse diff: ") || !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("error %q, want it to start with %q and contain %q", err, "parse diff: ", tt.wantMsg)
			}
			var perr *ParseError
			switch {
			case tt.wantLine == 0 && errors.As(err, &perr):
				t.Errorf("got a *ParseError at line %d, want none", perr.Line)
			case tt.wantLine != 0 && !errors.As(err, &perr):
				t.Errorf("error %q is not a *ParseError", err)
			case tt.wantLine != 0 && perr.Line != tt.wantLine:
				t.Errorf("error at line %d, want %d: %v", perr.Line, tt.wantLine, err)
			}
		})
	}
}

// TestBinaryByContent: a file is binary by its content, as git decides it:
// the lines `git diff --text` prints for a file with a NUL byte early on
// are kept (for the secret scan) under a binary file; a file without one is
// text, whatever .gitattributes said.
func TestBinaryByContent(t *testing.T) {
	text := "diff --git a/logo.png b/logo.png\nnew file mode 100644\n--- /dev/null\n+++ b/logo.png\n@@ -0,0 +1,2 @@\n+\x89PNG\n+\x00\x00IHDR\n" +
		"diff --git a/app.py b/app.py\nnew file mode 100644\n--- /dev/null\n+++ b/app.py\n@@ -0,0 +1 @@\n+import os\n"
	d, err := ParseString(text)
	if err != nil {
		t.Fatal(err)
	}
	type summary struct {
		Path      string
		Binary    bool
		Hunks     int
		Additions int
	}
	var got []summary
	for _, f := range d.Files {
		got = append(got, summary{f.Path(), f.Binary, len(f.Hunks), f.Additions})
	}
	want := []summary{{"logo.png", true, 1, 2}, {"app.py", false, 1, 1}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if p, err := ParsePatch("logo.png", "@@ -0,0 +1 @@\n+\x00\n"); err != nil || !p.Binary || len(p.Hunks) != 1 {
		t.Errorf("ParsePatch = %+v, %v; want a binary file with its hunk", p, err)
	}
}

// TestBinaryByGitHubRule: a file is binary only when a NUL byte lies in
// its first 8,000 bytes (GitHub's and git's rule), as far as the hunks show
// where a line starts; a NUL further on (a last line "# \x00" after 2,000
// lines, which bash still runs) leaves the file text. A binary file keeps
// the lines a --text diff printed, for the secret scan.
func TestBinaryByGitHubRule(t *testing.T) {
	long := strings.Repeat("+echo padding line\n", 2000) // 19 bytes a line: 38,000 bytes
	tests := []struct {
		name       string
		text       string
		wantBinary bool
		wantAdded  int
	}{
		{"NUL on the last line of a long new file", "diff --git a/run.sh b/run.sh\nnew file mode 100644\n--- /dev/null\n+++ b/run.sh\n@@ -0,0 +1,2002 @@\n+echo start\n" +
			long + "+# \x00\n", false, 2002},
		{"NUL on the first line", "diff --git a/logo.png b/logo.png\nnew file mode 100644\n--- /dev/null\n+++ b/logo.png\n@@ -0,0 +1,2 @@\n+\x89PNG\n+\x00\x00IHDR\n", true, 2},
		{"NUL at byte 7,999", "diff --git a/a.bin b/a.bin\nnew file mode 100644\n--- /dev/null\n+++ b/a.bin\n@@ -0,0 +1,2 @@\n+" + strings.Repeat("x", 7998) + "\n+\x00\n", true, 2},
		{"NUL at byte 8,000", "diff --git a/a.sh b/a.sh\nnew file mode 100644\n--- /dev/null\n+++ b/a.sh\n@@ -0,0 +1,2 @@\n+" + strings.Repeat("x", 7999) + "\n+\x00\n", false, 2},
		{"NUL in a hunk at line 9,000: past 8,000 bytes whatever the lines before", "diff --git a/a.sh b/a.sh\n--- a/a.sh\n+++ b/a.sh\n@@ -9000,1 +9000,2 @@\n ctx\n+# \x00\n", false, 1},
		{"NUL in a hunk at line 50: where it starts is not known", "diff --git a/a.dat b/a.dat\n--- a/a.dat\n+++ b/a.dat\n@@ -50,1 +50,2 @@\n ctx\n+\x00\n", true, 1},
		{"NUL on a removed first line", "diff --git a/a.dat b/a.dat\n--- a/a.dat\n+++ b/a.dat\n@@ -1,1 +1,1 @@\n-\x00\n+text\n", true, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := ParseString(tt.text)
			if err != nil {
				t.Fatal(err)
			}
			f := d.Files[0]
			if f.Binary != tt.wantBinary || f.Additions != tt.wantAdded || len(f.Hunks) != 1 {
				t.Errorf("binary %v, +%d, %d hunks; want binary %v, +%d, 1 hunk", f.Binary, f.Additions, len(f.Hunks), tt.wantBinary, tt.wantAdded)
			}
		})
	}
}

// TestIsBinary: GitHub's rule on a file's bytes.
func TestIsBinary(t *testing.T) {
	tests := []struct {
		name string
		b    []byte
		want bool
	}{
		{"empty", nil, false},
		{"text", []byte("echo hi\n"), false},
		{"NUL first", []byte("\x00abc"), true},
		{"NUL at 7,999", append(bytes.Repeat([]byte("x"), 7999), 0), true},
		{"NUL at 8,000", append(bytes.Repeat([]byte("x"), 8000), 0), false},
	}
	for _, tt := range tests {
		if got := IsBinary(tt.b); got != tt.want {
			t.Errorf("%s: IsBinary = %v, want %v", tt.name, got, tt.want)
		}
	}
}
