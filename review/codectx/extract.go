package codectx

import (
	"context"
	"fmt"
	"strings"
)

// file is one parsed file.
type file struct {
	path  string
	src   []byte
	lines []string
	root  *Node
	g     *grammar
	defs  []def
	// mods are the names bound to modules (modules), computed once.
	mods map[string]bool
}

// def is one definition of a file.
type def struct {
	name string
	node *Node
	// start and end are the lines of the definition with its wrappers
	// (export, decorators) and the comments right before it.
	start, end int
	fn         bool // a function or method
	inFunc     bool // declared inside a function (a local)
}

// parseFile parses src, the content of the file at path in language l.
func parseFile(ctx context.Context, path, l string, src []byte) (*file, error) {
	g := grammarOf(l)
	if g == nil {
		return nil, fmt.Errorf("%w: %s", errLanguage, l)
	}
	root, err := parse(ctx, l, src)
	if err != nil {
		return nil, err
	}
	f := &file{path: path, src: src, lines: strings.Split(string(src), "\n"), root: root, g: g}
	f.defs = f.collectDefs()
	return f, nil
}

// collectDefs lists the file's named definitions in source order.
func (f *file) collectDefs() []def {
	var out []def
	f.root.walk(func(n *Node) bool {
		fn := f.g.funcs[n.Kind]
		if !fn && !f.g.types[n.Kind] && !f.g.vars[n.Kind] {
			return true
		}
		field := "name"
		if nf, ok := f.g.nameField[n.Kind]; ok {
			field = nf
		}
		name := n.Child(field)
		if name == nil || !isIdent(name.Kind) {
			return true
		}
		span := n
		for span.Parent != nil && f.g.wrappers[span.Parent.Kind] {
			span = span.Parent
		}
		out = append(out, def{name: name.Text(f.src), node: n, start: f.docStart(span), end: span.End,
			fn: fn, inFunc: f.inFunc(n)})
		return true
	})
	return out
}

// inFunc reports whether n lies inside a function.
func (f *file) inFunc(n *Node) bool {
	for p := n.Parent; p != nil; p = p.Parent {
		if f.g.funcs[p.Kind] || strings.Contains(p.Kind, "function") || p.Kind == "func_literal" || p.Kind == "lambda" {
			return true
		}
	}
	return false
}

// docStart returns the first line of the comments right before span, or
// span's first line.
func (f *file) docStart(span *Node) int {
	start := span.Start
	p := span.Parent
	if p == nil {
		return start
	}
	i := 0
	for i < len(p.Children) && p.Children[i] != span {
		i++
	}
	for i--; i >= 0; i-- {
		c := p.Children[i]
		if !f.g.comments[c.Kind] || c.End < start-1 {
			break
		}
		start = c.Start
	}
	return start
}

// enclosing returns the innermost function containing line or, outside
// functions, the innermost other definition; nil at the top level.
func (f *file) enclosing(line int) *def {
	var best, bestOther *def
	for i := range f.defs {
		d := &f.defs[i]
		if d.node.Start > line || d.node.End < line || d.node.Start == d.node.End {
			continue
		}
		if d.fn {
			if best == nil || d.node.End-d.node.Start < best.node.End-best.node.Start {
				best = d
			}
		} else if !d.inFunc && (bestOther == nil || d.node.End-d.node.Start < bestOther.node.End-bestOther.node.Start) {
			bestOther = d
		}
	}
	if best != nil {
		return best
	}
	return bestOther
}

// container returns the innermost class-like definition around d, or nil.
func (f *file) container(d *def) *def {
	var best *def
	for i := range f.defs {
		c := &f.defs[i]
		if c == d || c.fn || !f.g.types[c.node.Kind] || c.node.Start > d.node.Start || c.node.End < d.node.End {
			continue
		}
		if best == nil || c.node.End-c.node.Start < best.node.End-best.node.Start {
			best = c
		}
	}
	return best
}

// ref is how changed lines use a name.
type ref struct {
	// member is true when every use is a call on a receiver (x.name()),
	// which only a method can answer.
	member bool
	// class is the class every use is called on: the enclosing class
	// for self or this, the receiver's class where the file declares it
	// (receiverType); "" otherwise.
	class string
	// function is true when every use is a bare call or a call on an
	// imported module (Python, JavaScript), which a method cannot answer.
	function bool
	// module is true when the call is on an imported module (requests.get):
	// a builtin's name is then the module's own function.
	module bool
	// value is true when every use reads the name as a value, which only
	// a constant or variable outside functions answers.
	value bool
}

// uses returns the names that the given lines call or use as types, in
// order, less the language's builtins, and how each is used.
func (f *file) uses(lines map[int]bool) ([]string, map[string]ref) {
	var out []string
	refs := map[string]ref{}
	var declared, locals map[string]bool
	if f.g.selfNames != nil {
		declared, locals = f.declared()
	}
	add := func(n *Node, call *Node) {
		if n == nil || !lines[n.Start] {
			return
		}
		name := n.Text(f.src)
		r := f.refOf(n, call)
		if r.function && !r.module && locals[name] {
			return // a call of the file's own variable (var express = require(...))
		}
		if len(name) < 3 || (f.g.builtins[name] && r.class == "" && !r.module) {
			return // a builtin, unless called on self/this or a module
		}
		if old, seen := refs[name]; seen {
			merged := ref{member: old.member && r.member, value: old.value && r.value, function: old.function && r.function}
			if old.class == r.class {
				merged.class = r.class
			}
			r = merged
		} else {
			out = append(out, name)
		}
		refs[name] = r
	}
	f.root.walk(func(n *Node) bool {
		if !overlaps(n.Start, n.End, lines) {
			return false
		}
		if field, ok := f.g.calls[n.Kind]; ok {
			add(callee(n.Child(field)), n)
		}
		if n.Kind == "type_identifier" || (n.Kind == "identifier" && n.Parent != nil && n.Parent.Kind == "type") {
			add(n, nil)
		} else if f.readsValue(n) && !declared[n.Text(f.src)] {
			add(n, n)
		}
		return true
	})
	return out, refs
}

// declared returns the names the file itself declares anywhere (a
// variable, a parameter, an import): read as values they are the file's
// own, never another file's; locals are those less the imports.
func (f *file) declared() (all, locals map[string]bool) {
	all, locals = map[string]bool{}, map[string]bool{}
	f.root.walk(func(n *Node) bool {
		if n.Kind != "identifier" || n.Parent == nil {
			return true
		}
		p := n.Parent
		switch {
		case strings.Contains(p.Kind, "import"), n.Field == "alias":
			all[n.Text(f.src)] = true
		case n.Field == "name" && (p.Kind == "variable_declarator" || f.g.vars[p.Kind]), n.Field == "left", n.Field == "pattern",
			strings.Contains(p.Kind, "parameter"), p.Kind == "pattern_list":
			all[n.Text(f.src)], locals[n.Text(f.src)] = true, true
		case n.Field == "name":
			all[n.Text(f.src)] = true
		}
		return true
	})
	return all, locals
}

// modules returns the names the file's imports bind to whole modules
// (Python's import x and import x as y, JavaScript's import * as x).
func (f *file) modules() map[string]bool {
	if f.mods != nil {
		return f.mods
	}
	f.mods = map[string]bool{}
	f.root.walk(func(n *Node) bool {
		switch n.Kind {
		case "import_statement":
			for _, c := range n.Children {
				name := c
				if c.Kind == "aliased_import" {
					name = c.Child("alias")
				}
				if name != nil && (name.Kind == "dotted_name" || name.Kind == "identifier") {
					f.mods[name.Text(f.src)] = true
				}
			}
		case "namespace_import":
			for _, c := range n.Children {
				if c.Kind == "identifier" {
					f.mods[c.Text(f.src)] = true
				}
			}
		}
		return true
	})
	return f.mods
}

// readsValue reports whether n is a bare identifier read as a value (not
// a declared name, a parameter, a key or a member, nor a call's callee):
// a constant or module variable is what it may name. Go is left out (its
// search stays by name over calls and types).
func (f *file) readsValue(n *Node) bool {
	if n.Kind != "identifier" || f.g.selfNames == nil || n.Parent == nil {
		return false
	}
	switch n.Field {
	case "name", "left", "key", "property", "attribute", "field", "parameter", "pattern", "alias", "module_name":
		return false
	}
	p := n.Parent
	if _, call := f.g.calls[p.Kind]; call || strings.Contains(p.Kind, "parameter") || strings.Contains(p.Kind, "import") {
		return false
	}
	return true
}

// refOf tells how the callee n of call is used: on a receiver, on
// self/this (then in the enclosing class), or by its bare name. Go's
// names are left bare: its search stays by name.
func (f *file) refOf(n, call *Node) ref {
	if call == n {
		return ref{value: true}
	}
	if call == nil || f.g.selfNames == nil {
		return ref{}
	}
	recv := call.Child("object") // Java: method_invocation.object
	if n.Parent != nil && n.Parent != call {
		recv = n.Parent.Child("object") // Python attribute, JS member_expression
	}
	if recv == nil {
		// A bare call: in Python and JavaScript never a method (Java's
		// implicit this is).
		return ref{function: f.g.selfNames["self"] || f.g.calls["call_expression"] != ""}
	}
	if f.modules()[recv.Text(f.src)] {
		return ref{function: true, module: true} // module.f(): a function, not a method
	}
	r := ref{member: true}
	if f.g.selfNames[recv.Kind] || f.g.selfNames[recv.Text(f.src)] {
		for p := call.Parent; p != nil; p = p.Parent {
			if f.g.types[p.Kind] {
				if name := p.Child("name"); name != nil {
					r.class = name.Text(f.src)
				}
				break
			}
		}
	} else if isIdent(recv.Kind) {
		r.class = f.receiverType(recv.Text(f.src), call) // x.get(): x's class, where the file says it
	}
	return r
}

// callee returns the identifier naming a called function: the name
// itself, or the last part of a selector, member or attribute.
func callee(n *Node) *Node {
	if n == nil {
		return nil
	}
	if isIdent(n.Kind) {
		return n
	}
	for _, field := range []string{"field", "property", "attribute", "name"} {
		if c := n.Child(field); c != nil && isIdent(c.Kind) {
			return c
		}
	}
	for i := len(n.Children) - 1; i >= 0; i-- {
		if isIdent(n.Children[i].Kind) {
			return n.Children[i]
		}
	}
	return nil
}

// callSite is a call of a function by name.
type callSite struct {
	name string
	line int
}

// calls lists the calls of the named functions (the keys of names).
func (f *file) calls(names map[string]bool) []callSite {
	var out []callSite
	f.root.walk(func(n *Node) bool {
		if field, ok := f.g.calls[n.Kind]; ok {
			if c := callee(n.Child(field)); c != nil {
				name := c.Text(f.src)
				if _, ok := names[name]; ok {
					out = append(out, callSite{name: name, line: c.Start})
				}
			}
		}
		return true
	})
	return out
}

// changedFuncs returns the functions whose lines the change touches, by
// name, true when the change touches the signature (the lines before the
// body).
func (f *file) changedFuncs(changed map[int]bool) map[string]bool {
	out := map[string]bool{}
	for _, d := range f.defs {
		if !d.fn || !overlaps(d.node.Start, d.node.End, changed) {
			continue
		}
		sigEnd := d.node.End
		if b := d.node.Child("body"); b != nil {
			sigEnd = b.Start
		}
		out[d.name] = out[d.name] || overlaps(d.node.Start, sigEnd, changed)
	}
	return out
}

// declsUsedBy returns the definitions outside functions in the same file,
// other than functions, that n refers to by name (a constant, a map, a
// field a method reads).
func (f *file) declsUsedBy(n *Node) []*def {
	names := map[string]bool{}
	n.walk(func(c *Node) bool {
		if isIdent(c.Kind) {
			names[c.Text(f.src)] = true
		}
		return true
	})
	var out []*def
	for i := range f.defs {
		d := &f.defs[i]
		if d.fn || d.inFunc || f.g.types[d.node.Kind] || !names[d.name] || (d.start >= n.Start && d.end <= n.End) {
			continue
		}
		out = append(out, d)
	}
	return out
}

// overlaps reports whether a line of start..end is in lines.
func overlaps(start, end int, lines map[int]bool) bool {
	if end-start > len(lines) {
		for l := range lines {
			if l >= start && l <= end {
				return true
			}
		}
		return false
	}
	for l := start; l <= end; l++ {
		if lines[l] {
			return true
		}
	}
	return false
}
