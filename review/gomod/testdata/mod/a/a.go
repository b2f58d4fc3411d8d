// Package a is imported by b.
package a

import "fmt"

// T is a type b uses.
type T struct{ N int }

// Logf formats like fmt.Sprintf.
func Logf(format string, args ...any) string { return fmt.Sprintf(format, args...) }
