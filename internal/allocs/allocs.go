// Package allocs measures the heap memory a function allocates, for tests
// that bound it: no input may make a parser allocate out of proportion to
// its size (the fuzz targets check each input against such a bound).
package allocs

import (
	"fmt"
	"runtime"
)

// Bytes returns the bytes of heap memory allocated while fn ran. Other
// goroutines' allocations in that time count too, so bounds checked with it
// need slack; fuzz targets run one input at a time.
func Bytes(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// Bound is a limit on what handling an input of n bytes may allocate:
// PerByte bytes for each input byte, plus Fixed.
type Bound struct {
	PerByte uint64
	Fixed   uint64
}

// Check runs fn, which handles an input of n bytes, and returns an error
// when it allocated more than the bound allows.
func (b Bound) Check(n int, fn func()) error {
	limit := b.PerByte*uint64(max(n, 0)) + b.Fixed
	if got := Bytes(fn); got > limit {
		return fmt.Errorf("allocated %d bytes for a %d-byte input, more than the bound of %d", got, n, limit)
	}
	return nil
}
