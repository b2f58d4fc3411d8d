package diff

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mergeguard/mergeguard/review"
)

func smallFile(t *testing.T, path string) *File {
	t.Helper()
	f, ok := smallIndex(t).File(path)
	if !ok {
		t.Fatalf("%s not in smallDiff", path)
	}
	return f
}

func TestRender(t *testing.T) {
	tests := map[string]struct {
		path string
		opts RenderOptions
		want string
	}{
		"new-side numbers": {
			path: "app.go",
			want: `File: app.go
Change: modified, +4 -2
@@ -2,3 +2,6 @@ package app
   2   import "fmt"
     - func a() {}
   3 + func a() int {
   4 + 	return 1
   5 + }
   6 + func b() {}
   7   var x = 1
@@ -20,3 +23,2 @@ func c() {
  23   	c1()
     - 	c2()
  24   	c3()
`,
		},
		"old numbers too": {
			path: "app.go",
			opts: RenderOptions{OldNumbers: true},
			want: `File: app.go
Change: modified, +4 -2
@@ -2,3 +2,6 @@ package app
   2    2   import "fmt"
   3      - func a() {}
        3 + func a() int {
        4 + 	return 1
        5 + }
        6 + func b() {}
   4    7   var x = 1
@@ -20,3 +23,2 @@ func c() {
  20   23   	c1()
  21      - 	c2()
  22   24   	c3()
`,
		},
		"deleted file": {
			path: "gone.go",
			want: "File: gone.go\nChange: deleted, +0 -2\n@@ -1,2 +0,0 @@\n     - package gone\n     - var y = 2\n",
		},
		"binary file": {
			path: "logo.png",
			want: "File: logo.png\nChange: modified, +0 -0\nBinary file: no text diff.\n",
		},
		"pure rename": {
			path: "new.go",
			want: "File: new.go\nChange: renamed from old.go (similarity 100%), +0 -0\nNo text changes.\n",
		},
		"mode change": {
			path: "run.sh",
			want: "File: run.sh\nChange: modified, mode 100644 -> 100755, +0 -0\nNo text changes.\n",
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Render(smallFile(t, tt.path), tt.opts)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestRenderMaxContext(t *testing.T) {
	const in = `diff --git a/a.txt b/a.txt
--- a/a.txt
+++ b/a.txt
@@ -10,12 +10,12 @@ func f() {
 c10
 c11
 c12
-d13
+a13
 c14
 c15
 c16
 c17
 c18
 c19
-d20
+a20
 c21
`
	d, err := ParseString(in)
	if err != nil {
		t.Fatal(err)
	}
	tests := map[int]string{
		0: `@@ -10,12 +10,12 @@ func f() {
  10   c10
  11   c11
  12   c12
     - d13
  13 + a13
  14   c14
  15   c15
  16   c16
  17   c17
  18   c18
  19   c19
     - d20
  20 + a20
  21   c21
`,
		1: `@@ -10,12 +10,12 @@ func f() {
       ... 2 unchanged lines
  12   c12
     - d13
  13 + a13
  14   c14
       ... 4 unchanged lines
  19   c19
     - d20
  20 + a20
  21   c21
`,
		3: `@@ -10,12 +10,12 @@ func f() {
  10   c10
  11   c11
  12   c12
     - d13
  13 + a13
  14   c14
  15   c15
  16   c16
  17   c17
  18   c18
  19   c19
     - d20
  20 + a20
  21   c21
`,
	}
	for n, want := range tests {
		got := Render(d.Files[0], RenderOptions{MaxContext: n})
		_, body, _ := strings.Cut(got, "+2 -2\n")
		if diff := cmp.Diff(want, body); diff != "" {
			t.Errorf("MaxContext %d (-want +got):\n%s", n, diff)
		}
	}
}

func TestRenderWideNumbers(t *testing.T) {
	const in = "diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -99998,2 +99998,3 @@\n x\n+y\n z\n\\ No newline at end of file\n"
	d, err := ParseString(in)
	if err != nil {
		t.Fatal(err)
	}
	want := `File: a.txt
Change: modified, +1 -0
@@ -99998,2 +99998,3 @@
 99998   x
 99999 + y
100000   z
         \ No newline at end of file
`
	if diff := cmp.Diff(want, Render(d.Files[0], RenderOptions{})); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestRenderMixedLineEndings(t *testing.T) {
	const in = "diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n x\r\n-y\r\n+y\n"
	d, err := ParseString(in)
	if err != nil {
		t.Fatal(err)
	}
	got := Render(d.Files[0], RenderOptions{})
	if !strings.Contains(got, "\nLine endings: mixed CRLF and LF\n") || strings.Contains(got, "\r") {
		t.Errorf("render:\n%q", got)
	}
}

func TestPaginate(t *testing.T) {
	d := parseFixture(t, filepath.Join("testdata", "go-reviewdog_deleted-files_fd5eac8.diff"))
	readme := d.Files[1] // 3 hunks
	binary := smallFile(t, "logo.png")
	tests := map[string]struct {
		f          *File
		start, end int
		wantHunks  []Hunk
		wantTotal  int
		wantErr    string
	}{
		"all":                    {f: readme, start: 1, end: 20, wantHunks: readme.Hunks, wantTotal: 3},
		"first":                  {f: readme, start: 1, end: 1, wantHunks: readme.Hunks[:1], wantTotal: 3},
		"middle to end":          {f: readme, start: 2, end: 3, wantHunks: readme.Hunks[1:], wantTotal: 3},
		"last only":              {f: readme, start: 3, end: 3, wantHunks: readme.Hunks[2:], wantTotal: 3},
		"no hunks, default page": {f: binary, start: 1, end: 20, wantTotal: 0},
		"start 0":                {f: readme, start: 0, end: 2, wantTotal: 3, wantErr: "start hunk 0: hunks are numbered from 1"},
		"negative start":         {f: readme, start: -2, end: 2, wantTotal: 3, wantErr: "numbered from 1"},
		"end before start":       {f: readme, start: 3, end: 2, wantTotal: 3, wantErr: "end hunk 2 is before start hunk 3"},
		"start past the end":     {f: readme, start: 4, end: 9, wantTotal: 3, wantErr: "start hunk 4 is past the last hunk (the file has 3)"},
		"no hunks, start 2":      {f: binary, start: 2, end: 3, wantTotal: 0, wantErr: "past the last hunk (the file has 0)"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			page, total, err := Paginate(tt.f, tt.start, tt.end)
			if total != tt.wantTotal {
				t.Errorf("total = %d, want %d", total, tt.wantTotal)
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.HasPrefix(err.Error(), "paginate "+tt.f.Path()+": ") {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.wantHunks, page.Hunks); diff != "" {
				t.Errorf("hunks (-want +got):\n%s", diff)
			}
			if page.Path() != tt.f.Path() || page.Additions != tt.f.Additions || page.Status != tt.f.Status {
				t.Errorf("page header %+v differs from the file's", page)
			}
		})
	}
}

// TestPaginateDoesNotAlias checks that appending to a page's hunks leaves
// the file alone.
func TestPaginateDoesNotAlias(t *testing.T) {
	d := parseFixture(t, filepath.Join("testdata", "go-reviewdog_deleted-files_fd5eac8.diff"))
	f := d.Files[1]
	third := f.Hunks[2].OldStart
	page, _, err := Paginate(f, 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	_ = append(page.Hunks, Hunk{OldStart: -1})
	if f.Hunks[2].OldStart != third {
		t.Error("appending to the page overwrote the file's third hunk")
	}
}

func TestLines(t *testing.T) {
	app := smallFile(t, "app.go")
	tests := []struct {
		name       string
		f          *File
		side       review.Side
		start, end int
		want       []string
		wantOK     bool
	}{
		{"added lines", app, right, 3, 6, []string{"func a() int {", "\treturn 1", "}", "func b() {}"}, true},
		{"context and added", app, right, 2, 3, []string{`import "fmt"`, "func a() int {"}, true},
		{"one line", app, right, 7, 7, []string{"var x = 1"}, true},
		{"hunk 2 skips the deleted line", app, right, 23, 24, []string{"\tc1()", "\tc3()"}, true},
		{"LEFT", app, left, 2, 4, []string{`import "fmt"`, "func a() {}", "var x = 1"}, true},
		{"LEFT hunk 2", app, left, 20, 22, []string{"\tc1()", "\tc2()", "\tc3()"}, true},
		{"across the gap", app, right, 7, 23, nil, false},
		{"starts before the hunk", app, right, 1, 3, nil, false},
		{"past the end", app, right, 24, 25, nil, false},
		{"line 0", app, right, 0, 2, nil, false},
		{"reversed", app, right, 3, 2, nil, false},
		{"bad side", app, "right", 3, 3, nil, false},
		{"deleted file on RIGHT", smallFile(t, "gone.go"), right, 1, 1, nil, false},
		{"deleted file on LEFT", smallFile(t, "gone.go"), left, 1, 2, []string{"package gone", "var y = 2"}, true},
		{"binary", smallFile(t, "logo.png"), right, 1, 1, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := Lines(tt.f, tt.side, tt.start, tt.end)
			if ok != tt.wantOK {
				t.Fatalf("ok = %v, want %v", ok, tt.wantOK)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestLinesCRLFAndUnicode reads lines of real fixtures: no "\r" in the
// text of a CRLF file, UTF-8 kept whole.
func TestLinesCRLFAndUnicode(t *testing.T) {
	crlf := parseFixture(t, filepath.Join("testdata", "ts-anc95-chatgpt-codereview_crlf-modified-no-trailing-newline_55767bc.diff")).Files[0]
	got, ok := Lines(crlf, right, 6, 8)
	if diff := cmp.Diff([]string{"", `if __name__ == "__main__":`, "    main()"}, got); !ok || diff != "" {
		t.Errorf("CRLF lines (ok %v; -want +got):\n%s", ok, diff)
	}
	uni := parseFixture(t, filepath.Join("testdata", "go-reviewdog_unicode-paths-rename-delete-add_3c97296.diff")).Files[2]
	got, ok = Lines(uni, right, 6, 9)
	if diff := cmp.Diff([]string{" 変更なし", "-行削除", "+行追加", "+行追加"}, got); !ok || diff != "" {
		t.Errorf("unicode lines (ok %v; -want +got):\n%s", ok, diff)
	}
}
