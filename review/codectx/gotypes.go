package codectx

import (
	"cmp"
	"context"
	"go/ast"
	"go/token"
	"go/types"
	"path"
	"slices"
	"strings"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/gomod"
)

// maxTypedCallers is the most call sites shown for one changed Go
// function: typed call sites are all real ones, so the cap is only there
// to bound a function called from everywhere (the prompt's budget then
// keeps the best).
const maxTypedCallers = 24

// typedGo resolves Go names with go/types over the module (review/gomod):
// a changed line's identifiers are the objects the type checker says they
// use, and a changed function's call sites are the uses of that very
// function in its package and in the module's packages that import it.
// A changed file the loader cannot type-check (a bare diff, a build tag
// that excludes it) is resolved by name.
type typedGo struct {
	std *gomod.Std
	lim gomod.Limits
}

func (g typedGo) resolve(ctx context.Context, c *collector, targets []*target, in corpus) error {
	ld := gomod.NewLoader(headTree{c: c, in: in}, g.std, g.lim)
	var untyped []*target
	var typed []typedTarget
	for _, t := range targets {
		tt, ok := g.load(ctx, ld, t)
		if err := ctx.Err(); err != nil {
			return err
		}
		if !ok {
			untyped = append(untyped, t)
			continue
		}
		typed = append(typed, tt)
	}
	loadImporters(ctx, ld, typed, in)
	files := loadedFiles(ld)
	changed := changedLines(targets)
	for _, tt := range typed {
		g.definitions(c, ld, files, tt, changed)
		c.typedCallers(ld, files, tt, changed)
	}
	for _, n := range ld.Notes() {
		c.res.Notes = append(c.res.Notes, "Code context: "+strings.TrimPrefix(n, "gomod: "))
	}
	if len(untyped) > 0 {
		return byName{}.resolve(ctx, c, untyped, in)
	}
	return ctx.Err()
}

// typedTarget is a changed Go file the loader type-checked: its syntax
// and the package (with its tests) it is in.
type typedTarget struct {
	*target
	file *ast.File
	pkg  *gomod.Package
	fset *token.FileSet
}

// load type-checks the package of t's directory with its tests and finds
// t's file in it. A file outside any module (no go.mod above it) is left
// to the name-based search: without a module path its package's imports
// of the tree's other packages cannot be resolved.
func (g typedGo) load(ctx context.Context, ld *gomod.Loader, t *target) (typedTarget, bool) {
	dir := path.Dir(t.f.path)
	if _, ok, err := ld.ModuleOf(ctx, dir); err != nil || !ok {
		return typedTarget{}, false
	}
	pkgs, err := ld.Load(ctx, dir, true)
	if err != nil {
		return typedTarget{}, false
	}
	for _, p := range pkgs {
		if i := slices.Index(p.Filenames, t.f.path); i >= 0 && p.Types != nil {
			return typedTarget{target: t, file: p.Files[i], pkg: p, fset: ld.Fset()}, true
		}
	}
	return typedTarget{}, false
}

// loadedFiles indexes every file of the loaded packages by tree path.
func loadedFiles(ld *gomod.Loader) map[string]*ast.File {
	out := map[string]*ast.File{}
	for _, p := range ld.Packages() {
		for i, name := range p.Filenames {
			out[name] = p.Files[i]
		}
	}
	return out
}

// definitions adds the declarations of the module's functions, methods,
// types, constants and package-level variables that t's changed lines use,
// but those declared on a changed line of any file: the diff shows them.
func (g typedGo) definitions(c *collector, ld *gomod.Loader, files map[string]*ast.File, t typedTarget, changed map[string]map[int]bool) {
	fset := ld.Fset()
	source := map[*types.Package]bool{} // the packages type-checked from the tree
	for _, p := range ld.Packages() {
		source[p.Types] = true
	}
	var objs []types.Object
	seen := map[types.Object]bool{}
	ast.Inspect(t.file, func(n ast.Node) bool {
		id, ok := n.(*ast.Ident)
		if !ok || !t.changed[fset.Position(id.Pos()).Line] {
			return true
		}
		if o := t.pkg.Info.Uses[id]; declared(o) && source[o.Pkg()] && !seen[o] {
			seen[o] = true
			objs = append(objs, o)
		}
		return true
	})
	for _, o := range objs {
		pos := fset.Position(o.Pos())
		af := files[pos.Filename]
		if af == nil || changed[pos.Filename][pos.Line] {
			continue
		}
		f := c.goFile(pos.Filename)
		if f == nil {
			continue
		}
		start, end := declLines(fset, af, o.Pos(), c.lim.MaxSnippetLines)
		c.add(t.target, Definition, f, objName(o), start, end, 30+near(t.target, f))
	}
}

// declared reports whether o is what a reader opens to understand a use:
// a function, method, type, constant or package-level variable (the
// caller checks its package was type-checked from the tree: the standard
// library's positions are in another file set).
func declared(o types.Object) bool {
	if o == nil || o.Pkg() == nil || !o.Pos().IsValid() {
		return false
	}
	switch o := o.(type) {
	case *types.Func, *types.Const:
		return true
	case *types.TypeName:
		_, param := o.Type().(*types.TypeParam)
		return !param
	case *types.Var:
		return o.Parent() == o.Pkg().Scope()
	}
	return false
}

// objName names an object as a snippet does: Type.Method for a method.
func objName(o types.Object) string {
	f, ok := o.(*types.Func)
	if !ok {
		return o.Name()
	}
	sig, ok := f.Type().(*types.Signature)
	if !ok || sig.Recv() == nil {
		return o.Name()
	}
	t := sig.Recv().Type()
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	if n, ok := t.(interface{ Obj() *types.TypeName }); ok {
		return n.Obj().Name() + "." + o.Name()
	}
	return o.Name()
}

// goFile returns the collector's file for a Go file the loader read: a
// changed file as parsed, another by its lines only (a snippet's text);
// nil when it was not read.
func (c *collector) goFile(p string) *file {
	if f, ok := c.parsed[p]; ok {
		return f
	}
	return c.goFiles[p]
}

// declLines is the range of lines to show for the declaration at pos in
// f: a function with its doc comment (its signature when longer than
// limit lines), a type, constant or variable spec with its doc (a grouped
// declaration's own doc when it has one spec), or, inside a long type,
// the field or method declared at pos.
func declLines(fset *token.FileSet, f *ast.File, pos token.Pos, limit int) (int, int) {
	line := func(p token.Pos) int { return fset.Position(p).Line }
	for _, d := range f.Decls {
		if pos < d.Pos() || pos > d.End() {
			continue
		}
		switch d := d.(type) {
		case *ast.FuncDecl:
			start := line(cmp.Or(docPos(d.Doc), d.Pos()))
			end := line(d.End())
			if end-start+1 > limit && d.Body != nil {
				end = line(d.Body.Lbrace)
			}
			return start, min(end, start+limit-1)
		case *ast.GenDecl:
			return specLines(fset, d, pos, limit)
		}
	}
	return line(pos), line(pos)
}

// specLines is the range of the spec of d declaring pos.
func specLines(fset *token.FileSet, d *ast.GenDecl, pos token.Pos, limit int) (int, int) {
	line := func(p token.Pos) int { return fset.Position(p).Line }
	for _, s := range d.Specs {
		if pos < s.Pos() || pos > s.End() {
			continue
		}
		doc := d.Doc
		switch s := s.(type) {
		case *ast.TypeSpec:
			doc = cmp.Or(s.Doc, doc)
		case *ast.ValueSpec:
			doc = cmp.Or(s.Doc, doc)
		}
		if d.Lparen.IsValid() && doc == d.Doc && len(d.Specs) > 1 {
			doc = nil // the group's doc is about the group
		}
		start, end := line(cmp.Or(docPos(doc), s.Pos())), line(s.End())
		if end-start+1 <= limit {
			return start, end
		}
		if at := line(pos); at > start+limit-1 {
			return at, at // a field or method deep in a long type
		}
		return start, start + limit - 1
	}
	return line(d.Pos()), min(line(d.End()), line(d.Pos())+limit-1)
}

// docPos is the start of a doc comment; NoPos without one.
func docPos(g *ast.CommentGroup) token.Pos {
	if g == nil {
		return token.NoPos
	}
	return g.Pos()
}

// headTree reads the head revision for the loader (gomod.Tree) without
// reading anything twice: the listing the search made, the files it read
// (in.contents, the changed ones parsed), and through the reader only the
// rest; it keeps each Go file's lines for snippets.
type headTree struct {
	c  *collector
	in corpus
}

func (h headTree) ReadFile(ctx context.Context, p string) ([]byte, error) {
	if f, ok := h.c.parsed[p]; ok && f.src != nil {
		return f.src, nil
	}
	b := h.in.contents[p]
	if b == nil {
		var err error
		if b, err = h.c.r.ReadFile(ctx, p, review.Head); err != nil {
			return nil, err //nolint:wrapcheck // gomod.Tree: the reader's own error
		}
		h.c.res.FilesRead++
	}
	if strings.HasSuffix(p, ".go") && h.c.goFiles[p] == nil {
		h.c.goFiles[p] = &file{path: p, src: b, lines: strings.Split(string(b), "\n")}
	}
	return b, nil
}

func (h headTree) ListFiles(context.Context) ([]string, error) {
	return h.c.listing, h.c.listErr
}
