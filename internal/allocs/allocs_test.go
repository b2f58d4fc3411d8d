package allocs_test

import (
	"math"
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/mergeguard/mergeguard/internal/allocs"
)

var sink []byte

func TestBytes(t *testing.T) {
	const n = 1 << 20
	got := allocs.Bytes(func() { sink = make([]byte, n) })
	if got < n || got > 2*n {
		t.Errorf("Bytes of a %d-byte allocation = %d", n, got)
	}
}

func TestBoundCheck(t *testing.T) {
	b := allocs.Bound{PerByte: 4, Fixed: 1 << 10}
	if err := b.Check(1<<10, func() { sink = make([]byte, 2<<10) }); err != nil {
		t.Errorf("2 KB for a 1 KB input under 4/byte + 1 KB: %v", err)
	}
	if err := b.Check(1<<10, func() { sink = make([]byte, 1<<20) }); err == nil {
		t.Error("1 MB for a 1 KB input under 4/byte + 1 KB: no error")
	}
}

func TestHeapPeakSeesATransientAllocation(t *testing.T) {
	prev := debug.SetGCPercent(400)                // as under make test
	t.Cleanup(func() { debug.SetGCPercent(prev) }) // after HeapPeak's own
	idle, stop := allocs.HeapPeak(t)
	if p := debug.SetGCPercent(100); p != 100 {
		t.Errorf("GC percent while measuring = %d, want the default 100", p)
	}
	time.Sleep(5 * time.Millisecond) // the first sample taken, before b
	b := make([]byte, 64<<20)
	for i := range b {
		b[i] = 1
	}
	time.Sleep(10 * time.Millisecond) // a few ticks while b is live
	peak := stop()
	runtime.KeepAlive(b) // live until the last sample, however late the ticks ran
	if grew := int64(peak) - int64(idle); grew < 60<<20 {
		t.Errorf("peak grew by %d MB over a live 64 MB allocation, want at least 60", grew>>20)
	}
}

func TestDefaultCollectorOverridesAndRestores(t *testing.T) {
	prevPercent := debug.SetGCPercent(300)
	prevLimit := debug.SetMemoryLimit(1 << 30)
	defer func() {
		debug.SetGCPercent(prevPercent)
		debug.SetMemoryLimit(prevLimit)
	}()
	t.Run("inside", func(t *testing.T) {
		allocs.DefaultCollector(t)
		if got := debug.SetGCPercent(100); got != 100 {
			t.Errorf("GC percent inside = %d, want 100", got)
		}
		if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
			t.Errorf("memory limit inside = %d, want none", got)
		}
	})
	if got := debug.SetGCPercent(300); got != 300 {
		t.Errorf("GC percent after = %d, want 300 restored", got)
	}
	if got := debug.SetMemoryLimit(-1); got != 1<<30 {
		t.Errorf("memory limit after = %d, want 1 GiB restored", got)
	}
}
