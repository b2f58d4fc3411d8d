// Package c has tests, in-package and external.
package c

func double(n int) int { return 2 * n }

// Double doubles.
func Double(n int) int { return double(n) }
