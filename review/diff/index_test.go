package diff

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mergeguard/mergeguard/review"
)

const (
	left  = review.SideLeft
	right = review.SideRight
)

// smallDiff has two hunks in app.go, a deleted file, a binary file, a pure
// rename and a mode change. Line numbers:
//
//	hunk 1: old 2-4, new 2-7 (new 3-6 added, old 3 deleted)
//	hunk 2: old 20-22, new 23-24 (old 21 deleted)
const smallDiff = `diff --git a/app.go b/app.go
index 1111111..2222222 100644
--- a/app.go
+++ b/app.go
@@ -2,3 +2,6 @@ package app
 import "fmt"
-func a() {}
+func a() int {
+	return 1
+}
+func b() {}
 var x = 1
@@ -20,3 +23,2 @@ func c() {
 	c1()
-	c2()
 	c3()
diff --git a/gone.go b/gone.go
deleted file mode 100644
index 3333333..0000000
--- a/gone.go
+++ /dev/null
@@ -1,2 +0,0 @@
-package gone
-var y = 2
diff --git a/logo.png b/logo.png
index 4444444..5555555 100644
Binary files a/logo.png and b/logo.png differ
diff --git a/old.go b/new.go
similarity index 100%
rename from old.go
rename to new.go
diff --git a/run.sh b/run.sh
old mode 100644
new mode 100755
`

func smallIndex(t *testing.T) *Index {
	t.Helper()
	d, err := ParseString(smallDiff)
	if err != nil {
		t.Fatal(err)
	}
	return NewIndex(d)
}

func TestCommentable(t *testing.T) {
	idx := smallIndex(t)
	tests := []struct {
		name string
		path string
		side review.Side
		line int
		want bool
	}{
		{"line 0", "app.go", right, 0, false},
		{"negative line", "app.go", right, -3, false},
		{"before the first hunk", "app.go", right, 1, false},
		{"context line, RIGHT", "app.go", right, 2, true},
		{"added line, RIGHT", "app.go", right, 3, true},
		{"last added line, RIGHT", "app.go", right, 6, true},
		{"context after adds, RIGHT", "app.go", right, 7, true},
		{"between hunks, RIGHT", "app.go", right, 8, false},
		{"between hunks, just before hunk 2, RIGHT", "app.go", right, 22, false},
		{"hunk 2 first line, RIGHT", "app.go", right, 23, true},
		{"hunk 2 last line, RIGHT", "app.go", right, 24, true},
		{"past the end, RIGHT", "app.go", right, 25, false},
		{"far past the end", "app.go", right, 1 << 40, false},
		{"deleted line, LEFT", "app.go", left, 3, true},
		{"context line by old number, LEFT", "app.go", left, 4, true},
		{"added line's number on LEFT (old 6 is outside hunk 1)", "app.go", left, 6, false},
		{"between hunks, LEFT", "app.go", left, 10, false},
		{"hunk 2 deleted line, LEFT", "app.go", left, 21, true},
		{"past the end, LEFT", "app.go", left, 23, false},
		{"deleted file, LEFT", "gone.go", left, 1, true},
		{"deleted file, RIGHT", "gone.go", right, 1, false},
		{"binary file", "logo.png", right, 1, false},
		{"binary file, LEFT", "logo.png", left, 1, false},
		{"pure rename, new path", "new.go", right, 1, false},
		{"pure rename, old path", "old.go", left, 1, false},
		{"mode change only", "run.sh", right, 1, false},
		{"path not in the diff", "other.go", right, 3, false},
		{"empty side", "app.go", "", 3, false},
		{"side in lower case", "app.go", "right", 3, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := idx.Commentable(tt.path, tt.side, tt.line); got != tt.want {
				t.Errorf("Commentable(%q, %s, %d) = %v, want %v", tt.path, tt.side, tt.line, got, tt.want)
			}
		})
	}
}

func TestCommentableRange(t *testing.T) {
	idx := smallIndex(t)
	tests := []struct {
		name       string
		path       string
		side       review.Side
		start, end int
		want       bool
	}{
		{"whole hunk 1", "app.go", right, 2, 7, true},
		{"inside hunk 1", "app.go", right, 3, 6, true},
		{"single line", "app.go", right, 3, 3, true},
		{"single line between hunks", "app.go", right, 8, 8, false},
		{"reversed", "app.go", right, 6, 3, false},
		{"starts at line 0", "app.go", right, 0, 3, false},
		{"starts at a negative line", "app.go", right, -1, 3, false},
		{"ends between hunks", "app.go", right, 6, 8, false},
		{"starts between hunks", "app.go", right, 8, 23, false},
		{"across hunks, both ends commentable", "app.go", right, 7, 23, false},
		{"hunk 2", "app.go", right, 23, 24, true},
		{"past the end", "app.go", right, 24, 25, false},
		{"LEFT inside hunk 1", "app.go", left, 2, 4, true},
		{"LEFT across hunks", "app.go", left, 3, 21, false},
		{"LEFT on added lines' numbers", "app.go", left, 3, 6, false},
		{"deleted file, LEFT", "gone.go", left, 1, 2, true},
		{"deleted file, RIGHT", "gone.go", right, 1, 2, false},
		{"binary file", "logo.png", right, 1, 1, false},
		{"unknown path", "other.go", right, 2, 3, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := idx.CommentableRange(tt.path, tt.side, tt.start, tt.end); got != tt.want {
				t.Errorf("CommentableRange(%q, %s, %d, %d) = %v, want %v", tt.path, tt.side, tt.start, tt.end, got, tt.want)
			}
		})
	}
}

func TestNearestCommentable(t *testing.T) {
	idx := smallIndex(t)
	tests := []struct {
		name   string
		path   string
		side   review.Side
		line   int
		within int
		want   int
		wantOK bool
	}{
		{"commentable line itself", "app.go", right, 5, 0, 5, true},
		{"one past the hunk end", "app.go", right, 8, 1, 7, true},
		{"too far for within", "app.go", right, 9, 1, 0, false},
		{"just before hunk 2", "app.go", right, 21, 2, 23, true},
		{"tie goes to the earlier line", "app.go", right, 15, 8, 7, true},
		{"closer to hunk 2", "app.go", right, 16, 8, 23, true},
		{"line 0 snaps to the first line", "app.go", right, 0, 2, 2, true},
		{"negative line", "app.go", right, -5, 100, 2, true},
		{"past the end", "app.go", right, 30, 10, 24, true},
		{"huge within", "app.go", right, 1 << 50, 1<<63 - 1, 24, true},
		{"huge negative line", "app.go", right, -1 << 62, 1<<63 - 1, 2, true},
		{"negative within", "app.go", right, 5, -1, 0, false},
		{"LEFT", "app.go", left, 6, 2, 4, true},
		{"binary file", "logo.png", right, 1, 10, 0, false},
		{"deleted file on RIGHT", "gone.go", right, 1, 10, 0, false},
		{"unknown path", "other.go", right, 1, 10, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := idx.NearestCommentable(tt.path, tt.side, tt.line, tt.within)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("NearestCommentable(%q, %s, %d, %d) = %d, %v; want %d, %v", tt.path, tt.side, tt.line, tt.within, got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestIndexFile(t *testing.T) {
	idx := smallIndex(t)
	for path, want := range map[string]bool{"app.go": true, "gone.go": true, "new.go": true, "old.go": false, "run.sh": true, "nope": false} {
		f, ok := idx.File(path)
		if ok != want || (ok && f.Path() != path) {
			t.Errorf("File(%q) = %v, %v; want found %v", path, f, ok, want)
		}
	}
}

// TestIndexTooLarge checks that a file whose diff passes
// MaxCommentableDiffBytes has no commentable line, while its hunks stay
// indexed.
func TestIndexTooLarge(t *testing.T) {
	var b strings.Builder
	b.WriteString("diff --git a/big.txt b/big.txt\nnew file mode 100644\n--- /dev/null\n+++ b/big.txt\n")
	const lines = 20000
	fmt.Fprintf(&b, "@@ -0,0 +1,%d @@\n", lines)
	for i := range lines {
		fmt.Fprintf(&b, "+%060d\n", i)
	}
	d, err := ParseString(b.String())
	if err != nil {
		t.Fatal(err)
	}
	if got := d.Files[0].DiffBytes; got <= MaxCommentableDiffBytes {
		t.Fatalf("DiffBytes = %d, want more than %d", got, MaxCommentableDiffBytes)
	}
	idx := NewIndex(d)
	if idx.Commentable("big.txt", right, 1) || idx.CommentableRange("big.txt", right, 1, 2) {
		t.Error("lines of an oversized diff are commentable")
	}
	if _, ok := idx.NearestCommentable("big.txt", right, 1, 5); ok {
		t.Error("NearestCommentable found a line in an oversized diff")
	}
	if f, ok := idx.File("big.txt"); !ok || len(f.Hunks) != 1 {
		t.Errorf("File(big.txt) = %v, %v; want the file with its hunk", f, ok)
	}
}

// lineOracle maps, per side, each line number the diff shows to its hunk,
// straight from the parsed lines.
func lineOracle(f *File) map[review.Side]map[int]int {
	m := map[review.Side]map[int]int{left: {}, right: {}}
	for hi, h := range f.Hunks {
		for _, l := range h.Lines {
			if l.Kind != Add {
				m[left][int(l.OldLine)] = hi
			}
			if l.Kind != Delete {
				m[right][int(l.NewLine)] = hi
			}
		}
	}
	return m
}

// TestIndexMatchesLines checks the index against every line of every
// fixture: a line is commentable exactly when the diff shows it on that
// side, a range exactly when both ends are shown in the same hunk, and the
// nearest line is the closest one shown.
func TestIndexMatchesLines(t *testing.T) {
	for _, path := range fixtures(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			d := parseFixture(t, path)
			idx := NewIndex(d)
			for _, f := range d.Files {
				checkIndexFile(t, idx, f)
			}
		})
	}
}

func checkIndexFile(t *testing.T, idx *Index, f *File) {
	t.Helper()
	oracle := lineOracle(f)
	commentable := !f.Binary && f.DiffBytes <= MaxCommentableDiffBytes
	maxLine := 0
	for _, h := range f.Hunks {
		maxLine = max(maxLine, h.OldStart+h.OldLines, h.NewStart+h.NewLines)
	}
	for _, side := range []review.Side{left, right} {
		shown := oracle[side]
		for line := -1; line <= maxLine+2; line++ {
			_, inDiff := shown[line]
			if got := idx.Commentable(f.Path(), side, line); got != (inDiff && commentable) {
				t.Fatalf("%s: Commentable(%s, %d) = %v, want %v", f.Path(), side, line, got, inDiff && commentable)
			}
			const within = 3
			want, wantOK := 0, false
			for dist := 0; dist <= within && commentable && !wantOK; dist++ {
				for _, cand := range []int{line - dist, line + dist} {
					if _, ok := shown[cand]; ok && !wantOK {
						want, wantOK = cand, true
					}
				}
			}
			if got, ok := idx.NearestCommentable(f.Path(), side, line, within); got != want || ok != wantOK {
				t.Fatalf("%s: NearestCommentable(%s, %d, %d) = %d, %v; want %d, %v", f.Path(), side, line, within, got, ok, want, wantOK)
			}
		}
		// Ranges: every pair in small files, pairs around hunk edges in
		// large ones.
		var points []int
		if maxLine <= 150 {
			for line := 0; line <= maxLine+1; line++ {
				points = append(points, line)
			}
		} else {
			for _, h := range f.Hunks {
				for _, n := range []int{h.OldStart, h.OldStart + h.OldLines, h.NewStart, h.NewStart + h.NewLines} {
					points = append(points, n-1, n, n+1)
				}
			}
		}
		for _, a := range points {
			for _, b := range points {
				ha, okA := shown[a]
				hb, okB := shown[b]
				want := commentable && okA && okB && ha == hb && a <= b
				if got := idx.CommentableRange(f.Path(), side, a, b); got != want {
					t.Fatalf("%s: CommentableRange(%s, %d, %d) = %v, want %v", f.Path(), side, a, b, got, want)
				}
			}
		}
	}
}
