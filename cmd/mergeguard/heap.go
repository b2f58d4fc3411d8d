package main

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// The headroom of the soft memory limit over what the process holds, for a
// diff of n bytes: fixed plus perByte times n. The parse adds about 0.75
// times the diff (its lines, 32 bytes each, its files and hunks); the
// review adds the secret rules and the index and findings of the diff.
// What is left is the collector's room for garbage: less room, more
// collections (the 40 MB synthetic diff takes about 35, 4 to 5 s of CPU in
// all) and less memory.
const (
	parseFixed, parsePerByte   = 4 << 20, 1.25
	reviewFixed, reviewPerByte = 24 << 20, 0.1
)

// livePoll is how often a review's limit is checked against the live heap.
const livePoll = 10 * time.Millisecond

// boundHeap sets a soft memory limit while a diff of n bytes is parsed or
// reviewed, and returns the func that restores the previous one. The limit
// is what the process holds now plus fixed plus perByte times n. The
// garbage collector would let the heap grow to twice what is live before
// collecting; near the limit it collects sooner instead, and the process's
// memory stays near the limit: for the 40 MB synthetic diff, 2.7 times the
// diff, 3.8 times with the binary's own pages (46 MB). Diffs under 4 MiB
// are left to the default, and so is a limit the user set (GOMEMLIMIT).
//
// With follow (a review: its linters' memory is not known beforehand; with
// many Go files they hold tens of megabytes while they type-check), what
// the live heap grows by beyond fixed raises the limit by twice as much,
// the collector's default room: a limit below the live heap makes the
// collector run without pause (a 4.6 MB diff of this repository took 22 s
// of CPU instead of 7, and takes 11 to 13 s following).
func boundHeap(n int, fixed int64, perByte float64, follow bool) (restore func()) {
	if n < 4<<20 || debug.SetMemoryLimit(-1) != math.MaxInt64 {
		return func() {}
	}
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	// What the process holds (the heap's spans in use and the runtime's
	// own memory) and what is live, bounded for the conversions.
	held := int64(min(m.HeapInuse+(m.Sys-m.HeapSys), math.MaxInt64/4)) //nolint:gosec // bounded
	live := int64(min(m.HeapAlloc, math.MaxInt64/4))                   //nolint:gosec // bounded
	b := bound{limit: held + fixed + int64(float64(n)*perByte), live: live + fixed}
	prev := debug.SetMemoryLimit(b.limit)
	if !follow {
		return func() { debug.SetMemoryLimit(prev) }
	}
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		b.follow(stop)
	}()
	return func() {
		close(stop)
		<-done
		debug.SetMemoryLimit(prev)
	}
}

// bound is a memory limit set for a live heap of up to live bytes.
type bound struct {
	limit, live int64
}

// follow raises the memory limit, until stop is closed, by twice what the
// live heap holds beyond b.live.
func (b bound) follow(stop <-chan struct{}) {
	live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	tick := time.NewTicker(livePoll)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		metrics.Read(live)
		if live[0].Value.Kind() != metrics.KindUint64 {
			return // not reported by this runtime
		}
		over := int64(min(live[0].Value.Uint64(), math.MaxInt64/4)) - b.live //nolint:gosec // bounded
		if want := b.limit + 2*over; want > debug.SetMemoryLimit(-1) {
			debug.SetMemoryLimit(want)
		}
	}
}
