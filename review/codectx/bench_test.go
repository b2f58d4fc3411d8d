package codectx

import (
	"os"
	"testing"
)

// BenchmarkParse measures parsing one file of this repository (about 500
// lines of Go) into the tree Collect reads.
func BenchmarkParse(b *testing.B) {
	if !Available {
		b.Skip("no parser without cgo")
	}
	src, err := os.ReadFile("../pipeline/stages.go")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		if _, err := parseFile(b.Context(), "stages.go", "go", src); err != nil {
			b.Fatal(err)
		}
	}
}
