// Package b uses tiny.
package b

import "example.com/tiny"

// Call uses tiny.
func Call() int {
	x := tiny.Map([]int{1}, func(v int) int { return v * 2 })
	f := tiny.Name
	_ = f
	var s tiny.Stack[int]
	s.Push(1)
	return tiny.Add(x[0], 4)
}
