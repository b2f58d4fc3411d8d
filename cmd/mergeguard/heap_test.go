package main

import (
	"math"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// TestBoundHeap: a diff under 4 MiB sets no limit; a larger one sets a
// limit, raised while the review holds more than its fixed headroom when
// following, left alone otherwise, and the previous limit comes back.
func TestBoundHeap(t *testing.T) {
	if debug.SetMemoryLimit(-1) != math.MaxInt64 {
		t.Skip("GOMEMLIMIT is set: boundHeap leaves it")
	}
	const grow = 64 << 20
	tests := map[string]struct {
		n      int
		follow bool
		raised bool
	}{
		"small diff":          {n: 1 << 20},
		"large diff":          {n: 8 << 20},
		"large diff, follows": {n: 8 << 20, follow: true, raised: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			restore := boundHeap(tc.n, 1<<20, 1, tc.follow)
			base := debug.SetMemoryLimit(-1)
			if base == math.MaxInt64 || tc.n < 4<<20 {
				restore()
				if (base == math.MaxInt64) != (tc.n < 4<<20) {
					t.Fatalf("limit %d for a %d-byte diff", base, tc.n)
				}
				return
			}
			held := make([]byte, grow)
			for i := range held {
				held[i] = 1
			}
			runtime.GC() // the live heap is measured at collections
			raised := false
			for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline) && !raised; time.Sleep(livePoll) {
				raised = debug.SetMemoryLimit(-1) >= base+grow
			}
			runtime.KeepAlive(held)
			restore()
			if raised != tc.raised {
				t.Errorf("limit raised by the 64 MB the review holds: %v, want %v", raised, tc.raised)
			}
			if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
				t.Errorf("limit after restore = %d, want none", got)
			}
		})
	}
}
