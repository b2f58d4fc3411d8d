package codectx

import (
	"cmp"
	"strings"
	"unicode"
)

// receiverType returns the class of the variable name where the file says
// it, as a reader would: a parameter or variable annotated with a type
// (Python, TypeScript, Java), or a variable assigned a constructor call
// (Python's Foo(...), JavaScript's new Foo(...)). The declaration is
// looked for in the function enclosing at, then at the top of the file;
// "" when the file does not say.
func (f *file) receiverType(name string, at *Node) string {
	scope := f.root
	for p := at.Parent; p != nil; p = p.Parent {
		if strings.Contains(p.Kind, "function") || strings.Contains(p.Kind, "method") {
			scope = p
			break
		}
	}
	var typ string
	scope.walk(func(n *Node) bool {
		if typ != "" || n.Start > at.Start {
			return false
		}
		if t := f.declaredType(n, name); t != "" {
			typ = t
		}
		return true
	})
	if typ == "" && scope != f.root {
		for _, n := range f.root.Children {
			n.walk(func(n *Node) bool {
				if t := f.declaredType(n, name); t != "" && typ == "" {
					typ = t
				}
				return typ == "" && !strings.Contains(n.Kind, "function") && !strings.Contains(n.Kind, "class")
			})
		}
	}
	return typ
}

// declaredType returns the type n gives to the variable name when n
// declares it: an annotation, or a constructor call it is assigned.
func (f *file) declaredType(n *Node, name string) string {
	var id, typ, value *Node
	switch n.Kind {
	case "assignment", "typed_parameter", "typed_default_parameter": // Python
		id, typ, value = cmp.Or(n.Child("left"), n.Child("name"), firstIdent(n)), n.Child("type"), n.Child("right")
	case "variable_declarator": // JavaScript, TypeScript, Java
		id, typ, value = n.Child("name"), n.Child("type"), n.Child("value")
		if typ == nil && n.Parent != nil {
			typ = n.Parent.Child("type") // Java: Foo x = ...;
		}
	case "required_parameter", "optional_parameter": // TypeScript
		id, typ = n.Child("pattern"), n.Child("type")
	case "formal_parameter": // Java
		id, typ = n.Child("name"), n.Child("type")
	default:
		return ""
	}
	if id == nil || id.Text(f.src) != name {
		return ""
	}
	if t := typeName(typ, f.src); t != "" {
		return t
	}
	return constructed(value, f.src)
}

// constructed returns the class a value constructs: new Foo(...) or a
// call of a capitalised name, Foo(...).
func constructed(v *Node, src []byte) string {
	if v == nil {
		return ""
	}
	var c *Node
	switch v.Kind {
	case "new_expression", "object_creation_expression":
		c = cmp.Or(v.Child("constructor"), v.Child("type"))
	case "call":
		c = v.Child("function")
	}
	if c == nil || !isIdent(c.Kind) {
		return ""
	}
	name := c.Text(src)
	if r := []rune(name); len(r) == 0 || !unicode.IsUpper(r[0]) {
		return ""
	}
	return name
}

// typeName is the name of an annotated type: its first identifier (List
// of List<Foo>, Foo of : Foo).
func typeName(t *Node, src []byte) string {
	if t == nil {
		return ""
	}
	var out string
	t.walk(func(n *Node) bool {
		if out == "" && isIdent(n.Kind) {
			out = n.Text(src)
		}
		return out == ""
	})
	return out
}

// firstIdent is n's first identifier child.
func firstIdent(n *Node) *Node {
	for _, c := range n.Children {
		if c.Kind == "identifier" {
			return c
		}
	}
	return nil
}
