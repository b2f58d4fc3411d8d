//go:build !race

package pipeline

// raceEnabled reports whether the race detector, which slows the code
// five to ten times, is on.
const raceEnabled = false
