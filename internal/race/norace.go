//go:build !race

// Package race tells tests whether the race detector is on, so that a
// test whose cost is all in single-goroutine work (a differential or
// statistical test) can run fewer iterations where the detector, which
// checks nothing there, makes each one several times slower.
package race

// Enabled reports whether the binary was built with the race detector.
const Enabled = false
