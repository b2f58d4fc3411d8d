//go:build !race

package budget

// raceEnabled reports whether the race detector, which slows the code
// five to ten times, is on.
const raceEnabled = false
