package diff

import (
	"fmt"
	"strings"
	"testing"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
)

// benchDiff generates, deterministically, a git diff of files files with
// hunks hunks each; every hunk has 20 lines (8 context, 4 deleted, 8
// added), so 500 files × 5 hunks is 50,000 diff lines.
func benchDiff(files, hunks int) string {
	var b strings.Builder
	for f := range files {
		path := fmt.Sprintf("pkg/mod%03d/file%03d.go", f%37, f)
		fmt.Fprintf(&b, "diff --git a/%s b/%s\nindex 0123456..89abcde 100644\n--- a/%s\n+++ b/%s\n", path, path, path, path)
		oldStart, newStart := 10, 10
		for h := range hunks {
			fmt.Fprintf(&b, "@@ -%d,12 +%d,16 @@ func handler%d(w http.ResponseWriter, r *http.Request) {\n", oldStart, newStart, h)
			n := 0
			line := func(op byte) {
				fmt.Fprintf(&b, "%c\tvalue%d := compute(ctx, request.Field%d, %q)\n", op, n, f+h, "some text")
				n++
			}
			for _, op := range []byte("   ---+++++  -+++   ") {
				line(op)
			}
			oldStart += 12 + 30
			newStart += 16 + 30
		}
	}
	return b.String()
}

// BenchmarkParseIndex parses and indexes a 50,000-line, 500-file diff.
func BenchmarkParseIndex(b *testing.B) {
	in := benchDiff(500, 5)
	b.SetBytes(int64(len(in)))
	b.ResetTimer()
	for b.Loop() {
		d, err := ParseString(in)
		if err != nil {
			b.Fatal(err)
		}
		if idx := NewIndex(d); !idx.Commentable("pkg/mod000/file000.go", "RIGHT", 10) {
			b.Fatal("line 10 of file000.go is not commentable")
		}
	}
}

// BenchmarkParseReaderIndex is BenchmarkParseIndex reading the diff through
// Parse(io.Reader), which reads it once into the string it parses.
func BenchmarkParseReaderIndex(b *testing.B) {
	in := benchDiff(500, 5)
	b.SetBytes(int64(len(in)))
	b.ResetTimer()
	for b.Loop() {
		d, err := Parse(strings.NewReader(in))
		if err != nil {
			b.Fatal(err)
		}
		if idx := NewIndex(d); !idx.Commentable("pkg/mod000/file000.go", "RIGHT", 10) {
			b.Fatal("line 10 of file000.go is not commentable")
		}
	}
}

// BenchmarkGoGitdiffParse measures go-gitdiff alone on the same diff: the
// share of BenchmarkParseIndex that is the library's.
func BenchmarkGoGitdiffParse(b *testing.B) {
	in := benchDiff(500, 5)
	b.SetBytes(int64(len(in)))
	b.ResetTimer()
	for b.Loop() {
		if _, _, err := gitdiff.Parse(strings.NewReader(in)); err != nil {
			b.Fatal(err)
		}
	}
}

// TestBenchDiff checks that the benchmark's diff is what it claims.
func TestBenchDiff(t *testing.T) {
	d, err := ParseString(benchDiff(500, 5))
	if err != nil {
		t.Fatal(err)
	}
	lines := 0
	for _, f := range d.Files {
		for _, h := range f.Hunks {
			lines += len(h.Lines)
		}
	}
	if len(d.Files) != 500 || lines != 50000 {
		t.Errorf("got %d files, %d lines; want 500 and 50000", len(d.Files), lines)
	}
}
