//go:build !cgo

package codectx

import (
	"context"
	"errors"
)

// Available reports whether this build can parse files: without cgo it
// cannot, and reviews read the hunks alone.
const Available = false

// parse fails: tree-sitter needs cgo.
func parse(context.Context, string, []byte) (*Node, error) {
	return nil, errors.New("code context needs a build with cgo (tree-sitter)")
}

// SyntaxErrors cannot parse: tree-sitter needs cgo.
func SyntaxErrors(context.Context, string, []byte) (int, bool) { return 0, false }
