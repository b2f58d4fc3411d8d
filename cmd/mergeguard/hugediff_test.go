package main

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mergeguard/mergeguard/internal/allocs"
	"github.com/mergeguard/mergeguard/review/diff/difftest"
)

// hugeDiffSize is the size of the synthetic diff of the huge-diff test and
// benchmark: about that of 1,000 merges of moby/moby (40 MB, 5,884 files).
const hugeDiffSize = 40 << 20

// heapAttempts is how many reviews the memory test makes before it fails:
// the peak is 2.5 times the diff in most, but about one review in twelve
// peaked at 3.6 to 3.8 times (seen here and on a CI host) and the cause is
// not found yet (the collector's timing at the soft limit is the suspect).
// A regression raises every review's peak; a run failing by chance, about
// one in 150, is the price of the flake until its cause is found.
const heapAttempts = 2

// maxHeapPerDiffByte bounds the heap a review without a model may grow by,
// per byte of its diff: the diff itself, its parsed lines and the
// analyzers' per-file work.
const maxHeapPerDiffByte = 3

// hugeDiff writes the synthetic diff into a repository directory whose
// .mergeguard.yml lifts max_files, and returns the directory, the diff's
// path and its size.
func hugeDiff(tb testing.TB) (dir, path string, size int) {
	tb.Helper()
	dir = tb.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ".mergeguard.yml"), []byte("max_files: 0\n"), 0o644); err != nil {
		tb.Fatal(err)
	}
	path = filepath.Join(dir, "huge.diff")
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriter(f)
	st := difftest.Write(w, hugeDiffSize)
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
	return dir, path, st.Bytes
}

// reviewHugeDiff runs `mergeguard review --diff` on the diff without a
// model and returns how much the heap grew above idle at its peak.
func reviewHugeDiff(tb testing.TB, dir, path string) (growth int64, took time.Duration) {
	tb.Helper()
	noEnv := func(string) string { return "" }
	args := []string{"--repo", dir, "--diff", path, "--format", "json"}
	idle, stop := allocs.HeapPeak(tb)
	start := time.Now()
	err := runReview(tb.Context(), newProcess(), args, noEnv, io.Discard, io.Discard)
	took = time.Since(start)
	peak := stop()
	if err != nil {
		tb.Fatal(err)
	}
	return int64(peak) - int64(idle), took
}

// TestReviewHugeDiffMemory reviews a 40 MB synthetic diff without a model,
// with the collector's defaults whatever the environment sets: the heap may
// not grow by more than 3 times the diff's size (it grew by
// 14.5 times before the diff was read once, parsed once and scanned file by
// file). It passes when one of heapAttempts reviews stays within the
// bound. Time is not checked here: BenchmarkReviewHugeDiff measures it.
//
// The bound holds for the review as users run it. The race detector slows
// every allocation and the collector, which then falls behind the soft
// memory limit (3.93× was seen under it, with other packages' tests
// running). So the race-detector run skips it, and `make test` then runs
// it alone without the race detector.
func TestReviewHugeDiffMemory(t *testing.T) {
	if raceEnabled {
		t.Skip("heap bounds do not hold under the race detector: make test runs this test without it")
	}
	if testing.Short() {
		t.Skip("slow: a 40 MB diff, about 20 s; skipped by -short, make test runs it")
	}
	dir, path, size := hugeDiff(t)
	limit := int64(maxHeapPerDiffByte * size)
	var growths []int64
	for range heapAttempts {
		growth, _ := reviewHugeDiff(t, dir, path)
		t.Logf("diff %d MB, heap growth %d MB (%.2f× the diff)", size>>20, growth>>20, float64(growth)/float64(size))
		if growth <= limit {
			return
		}
		growths = append(growths, growth>>20)
	}
	t.Errorf("heap grew by %v MB reviewing a %d MB diff in %d reviews, want at most %d MB (%d× the diff; environment GOGC=%q GOMEMLIMIT=%q GOMAXPROCS=%q)",
		growths, size>>20, heapAttempts, limit>>20, maxHeapPerDiffByte, os.Getenv("GOGC"), os.Getenv("GOMEMLIMIT"), os.Getenv("GOMAXPROCS"))
}

// BenchmarkReviewHugeDiff times `mergeguard review --diff` on a 40 MB
// synthetic diff without a model and reports the heap's peak growth per
// byte of diff. Goals: under 5 s, at most 3 bytes per byte.
func BenchmarkReviewHugeDiff(b *testing.B) {
	dir, path, size := hugeDiff(b)
	b.SetBytes(int64(size))
	var worst int64
	for b.Loop() {
		growth, _ := reviewHugeDiff(b, dir, path)
		worst = max(worst, growth)
	}
	b.ReportMetric(float64(worst)/float64(size), "peak-heap/diff-byte")
	b.ReportMetric(float64(worst)/(1<<20), "peak-heap-MB")
}
