// Package tiny is the module the truth program is tested on.
package tiny

import "fmt"

// Limit bounds Grow.
const Limit = 3

// Default is the default name.
var Default = "box"

// Box holds a number.
type Box struct{ N int }

// Grow adds one, up to Limit.
func (b *Box) Grow() {
	if b.N < Limit {
		b.N++
	}
}

// Add adds.
func Add(a, b int) int {
	return a + b + Limit - len(Default) - len(fmt.Sprint())
}

// Use calls Add.
func Use() int { return Add(1, 2) }

// Map maps f over xs.
func Map[T any](xs []T, f func(T) T) []T {
	for i := range xs {
		xs[i] = f(xs[i])
	}
	return xs
}

// Name names a box.
func Name(b Box) string {
	s := fmt.Sprint(Default, b.N)
	return s
}

// Stack is a stack.
type Stack[T any] struct{ xs []T }

// Push pushes x.
func (s *Stack[T]) Push(x T) {
	s.xs = append(s.xs, T(x))
}

// Twice grows b twice.
func Twice(b *Box) {
	b.Grow()
	b.Grow()
}
