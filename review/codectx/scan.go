package codectx

import (
	"cmp"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/mergeguard/mergeguard/review/lang"
)

// Per name, at most this many definitions and call sites are shown: a
// common name (String, get) matches more than a reader needs.
const (
	maxDefsPerName    = 2
	maxCallersPerName = 4
	maxDeclsPerNode   = 3
	callRadius        = 3 // lines around a call in a long function
)

// scan adds f's definitions of the names the targets use and its calls of
// the functions they change.
func (c *collector) scan(f *file, targets []*target) {
	fam := family(lang.Detect(f.path))
	for _, t := range targets {
		if t.fam != fam {
			continue
		}
		c.definitions(t, f)
		c.callers(t, f)
	}
}

// definitions adds f's definitions of the names t's changed lines use.
func (c *collector) definitions(t *target, f *file) {
	uses := map[string]bool{}
	for _, n := range t.uses {
		uses[n] = true
	}
	for i := range f.defs {
		d := &f.defs[i]
		if !uses[d.name] || d.inFunc || (f == t.f && overlaps(d.start, d.end, t.changed)) {
			continue
		}
		score, ok := f.answers(d, t.refs[d.name])
		if !ok || c.count(t, Definition, d.name) >= maxDefsPerName {
			continue
		}
		start, end := d.start, min(d.end, d.start+c.lim.MaxSnippetLines-1)
		c.add(t, Definition, f, d.name, start, end, score+near(t, f))
		c.decls(t, f, d.node, d.name, score-5+near(t, f))
	}
}

// answers reports whether d can be what a use r of its name means, and
// the score of its snippet: a call on self/this only a method of the
// enclosing class answers; a call on another receiver only a method,
// ranked below a bare name's definition; a name read as a value only a
// constant or variable outside classes and functions.
func (f *file) answers(d *def, r ref) (int, bool) {
	if r.value {
		return 30, !d.fn && !f.g.types[d.node.Kind] && f.container(d) == nil
	}
	if r.function {
		return 30, f.container(d) == nil || !d.fn
	}
	if !r.member {
		return 30, true
	}
	k := f.container(d)
	if !d.fn || k == nil {
		return 0, false
	}
	if r.class != "" {
		return 30, k.name == r.class
	}
	return 27, true
}

// callers adds f's calls of the functions t changes, each shown with its
// enclosing function (or class, when that is small) or, in a long
// function, with the lines around it.
func (c *collector) callers(t *target, f *file) {
	if len(t.funcs) == 0 {
		return
	}
	for _, cs := range f.calls(t.funcs) {
		if f == t.f && t.changed[cs.line] {
			continue
		}
		if c.count(t, Caller, cs.name) >= maxCallersPerName {
			continue
		}
		score := 25
		if t.funcs[cs.name] {
			score = 35 // the signature changed
		}
		score += near(t, f)
		d := f.enclosing(cs.line)
		if d != nil && f == t.f && overlaps(d.node.Start, d.node.End, t.changed) && t.funcs[d.name] {
			continue // a recursive call in the changed function
		}
		if d == nil || d.end-d.start+1 > c.lim.MaxSnippetLines {
			c.add(t, Caller, f, cs.name, max(cs.line-callRadius, 1), min(cs.line+callRadius, len(f.lines)), score)
			continue
		}
		if k := f.container(d); k != nil && k.end-k.start+1 <= c.lim.MaxSnippetLines/2 {
			c.add(t, Caller, f, cs.name, k.start, k.end, score)
			continue
		}
		c.add(t, Caller, f, cs.name, d.start, d.end, score)
		c.decls(t, f, d.node, cs.name, score-5)
	}
}

// decls adds the declarations of f outside functions that n refers to.
func (c *collector) decls(t *target, f *file, n *Node, name string, score int) {
	for i, d := range f.declsUsedBy(n) {
		if i == maxDeclsPerNode {
			break
		}
		c.add(t, Declaration, f, d.name+" (used by "+name+")", d.start, min(d.end, d.start+c.lim.MaxSnippetLines-1), score)
	}
}

// count counts t's snippets of a kind about name.
func (c *collector) count(t *target, k Kind, name string) int {
	n := 0
	for _, s := range c.res.ByFile[t.f.path] {
		if s.Kind == k && s.Name == name {
			n++
		}
	}
	return n
}

// near scores a file by its distance to the target: the same file or
// directory first.
func near(t *target, f *file) int {
	switch {
	case f == t.f:
		return 2
	case path.Dir(f.path) == path.Dir(t.f.path):
		return 1
	}
	return 0
}

// rank orders snippets best first and drops those inside a better one of
// the same file.
func rank(ss []Snippet) []Snippet {
	slices.SortStableFunc(ss, func(a, b Snippet) int {
		return cmp.Or(cmp.Compare(b.Score, a.Score), cmp.Compare(a.Path, b.Path), cmp.Compare(a.Start, b.Start))
	})
	var out []Snippet
	for _, s := range ss {
		if !slices.ContainsFunc(out, func(o Snippet) bool { return o.Path == s.Path && o.Start <= s.Start && s.End <= o.End }) {
			out = append(out, s)
		}
	}
	return out
}

// Render writes a snippet with its head line numbers, under a header
// naming the file, the lines and why it is shown.
func Render(s Snippet) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s:%d-%d (%s: %s)\n", s.Path, s.Start, s.End, s.Kind, s.Name)
	w := len(fmt.Sprint(s.End))
	for i, l := range s.Lines {
		fmt.Fprintf(&b, "%*d  %s\n", w, s.Start+i, l)
	}
	return b.String()
}
