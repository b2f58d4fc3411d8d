package diff

import (
	"strings"
	"testing"

	"github.com/bluekeyes/go-gitdiff/gitdiff"

	"github.com/mergeguard/mergeguard/review/diff/difftest"
)

// BenchmarkParseIndex parses and indexes a 50,000-line, 500-file diff.
func BenchmarkParseIndex(b *testing.B) {
	in := difftest.Hunks(500, 5)
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
	in := difftest.Hunks(500, 5)
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
	in := difftest.Hunks(500, 5)
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
	d, err := ParseString(difftest.Hunks(500, 5))
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
