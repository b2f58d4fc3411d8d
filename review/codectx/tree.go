// Package codectx finds the code a reviewer needs beside a change's hunks:
// the enclosing function, method or class of each changed region, the
// definitions of the functions and types the changed lines use, and the
// call sites of the functions the change alters. Files are parsed into
// syntax trees with tree-sitter (when the binary is built with cgo; without
// it there is no code context and reviews read the hunks alone).
package codectx

import "strings"

// Node is one named node of a syntax tree, copied out of the parser so
// that the analysis is plain Go.
type Node struct {
	// Kind is the grammar's node type ("function_declaration").
	Kind string
	// Field is the node's field name in its parent ("name", "body"), or "".
	Field string
	// Start and End are the node's first and last lines, 1-based.
	Start, End int
	// StartByte and EndByte delimit the node's text in the source.
	StartByte, EndByte int
	Parent             *Node
	Children           []*Node
}

// Child returns the first child in field, or nil.
func (n *Node) Child(field string) *Node {
	for _, c := range n.Children {
		if c.Field == field {
			return c
		}
	}
	return nil
}

// Text returns the node's source text.
func (n *Node) Text(src []byte) string {
	if n.StartByte < 0 || n.EndByte > len(src) || n.StartByte > n.EndByte {
		return ""
	}
	return string(src[n.StartByte:n.EndByte])
}

// walk calls fn on n and its descendants, depth first; fn returns false to
// skip a node's children.
func (n *Node) walk(fn func(*Node) bool) {
	if !fn(n) {
		return
	}
	for _, c := range n.Children {
		c.walk(fn)
	}
}

// isIdent reports whether a node kind is an identifier of some sort.
func isIdent(kind string) bool {
	return strings.HasSuffix(kind, "identifier")
}
