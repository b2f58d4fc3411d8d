package allocs

import (
	"math"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// HeapPeak starts measuring the memory a load takes while it runs, for
// tests that bound it: it runs the rest of the test with the collector's
// defaults (DefaultCollector), in which the bounds are stated, collects
// garbage and returns the in-use heap then (idle), and samples the in-use
// heap every 2 ms, and once more when stop is called, which returns the
// highest sample. The settings are the process's: a test that calls it
// must not be parallel.
func HeapPeak(tb testing.TB) (idle uint64, stop func() uint64) {
	tb.Helper()
	DefaultCollector(tb)
	return heapNow(), sample()
}

// sample samples the in-use heap until stop is called, which returns the
// highest sample.
func sample() (stop func() uint64) {
	done := make(chan struct{})
	peak := make(chan uint64)
	go func() {
		var top uint64
		sample := func() {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			top = max(top, m.HeapInuse)
		}
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			sample()
			select {
			case <-done:
				// The heap as the load ends too: on a loaded machine the
				// ticker's goroutine may not have run since the load grew.
				sample()
				peak <- top
				return
			case <-tick.C:
			}
		}
	}()
	return func() uint64 { close(done); return <-peak }
}

// heapNow collects garbage and returns the in-use heap: the idle level a
// peak is measured against.
func heapNow() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// DefaultCollector runs the rest of the test with the garbage collector's
// defaults, GOGC=100 and no soft memory limit, whatever GOGC and GOMEMLIMIT
// say in the environment, and restores the settings when the test ends.
// Heap bounds are stated for the defaults: with GOMEMLIMIT set, the review
// leaves the limit to the user, and a 40 MB diff grew the heap by 4 times
// its size instead of 2.5. The settings are the process's: a test that
// calls it must not be parallel.
func DefaultCollector(tb testing.TB) {
	tb.Helper()
	percent := debug.SetGCPercent(100)
	limit := debug.SetMemoryLimit(math.MaxInt64)
	tb.Cleanup(func() {
		debug.SetGCPercent(percent)
		debug.SetMemoryLimit(limit)
	})
}
