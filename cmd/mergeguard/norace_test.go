//go:build !race

package main

// raceEnabled reports whether the race detector is on: it slows every
// allocation and the garbage collector, so heap bounds do not hold.
const raceEnabled = false
