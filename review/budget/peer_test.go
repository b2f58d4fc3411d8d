package budget

import (
	"math/rand/v2"
	"os"
	"strings"
	"testing"
)

// fiveThousandLines is BenchmarkCount5000LineFile's input: this package's
// sources repeated to 5,000 lines.
func fiveThousandLines(b *testing.B) string {
	var lines []string
	for _, f := range []string{"fit.go", "counter.go", "bpe.go", "prompt.go"} {
		src, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		lines = append(lines, strings.Split(string(src), "\n")...)
	}
	var sb strings.Builder
	for i := range 5000 {
		sb.WriteString(lines[i%len(lines)])
		sb.WriteByte('\n')
	}
	return sb.String()
}

// onePiece is n random lowercase letters: a single piece.
func onePiece(n int) string {
	rng := rand.New(rand.NewPCG(3, 4))
	p := make([]byte, n)
	for i := range p {
		p[i] = byte('a' + rng.IntN(26))
	}
	return string(p)
}

// BenchmarkPeer compares the counting of this package with tiktoken-go's
// (v0.1.8, the peer) on the same inputs, o200k_base: the 5,000-line file
// and a single piece of 32 KB (tiktoken-go's merge is quadratic: 128 KB
// takes seconds, 1 MB would take minutes). Each reports its processor
// time too (ReportCPU), less sensitive than the wall time to a loaded
// machine.
func BenchmarkPeer(b *testing.B) {
	ref, e := reference(b, O200kBase), &encoding{name: O200kBase}
	e.Count("load")
	inputs := map[string]string{"5000-line file": fiveThousandLines(b), "32 KB piece": onePiece(32 << 10)}
	for name, text := range inputs {
		b.Run(name+"/mergeguard", func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			defer ReportCPU(b, len(text))()
			for b.Loop() {
				e.Count(text)
			}
		})
		b.Run(name+"/tiktoken-go", func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			defer ReportCPU(b, len(text))()
			for b.Loop() {
				ref.EncodeOrdinary(text)
			}
		})
	}
}
