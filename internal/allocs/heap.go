package allocs

import (
	"runtime"
	"time"
)

// HeapPeak samples the in-use heap every 2 ms until the returned func is
// called, which returns the highest sample, for tests that bound the memory
// a load takes while it runs.
func HeapPeak() (stop func() uint64) {
	done := make(chan struct{})
	peak := make(chan uint64)
	go func() {
		var top uint64
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			top = max(top, m.HeapInuse)
			select {
			case <-done:
				peak <- top
				return
			case <-tick.C:
			}
		}
	}()
	return func() uint64 { close(done); return <-peak }
}

// HeapNow collects garbage and returns the in-use heap: the idle level a
// peak is measured against.
func HeapNow() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}
