package codectx

import (
	"bytes"
	"cmp"
	"context"
	"go/ast"
	"go/token"
	"go/types"
	"path"
	"slices"

	"github.com/mergeguard/mergeguard/review/gomod"
)

// maxImporterDirs is the most directories type-checked to find the
// callers of exported changed functions, in the search order (the
// changed files' directories first); the loader's own package limit
// bounds their imports.
const maxImporterDirs = 40

// loadImporters type-checks, with their tests, the directories whose Go
// files import the package of a typed target that changes an exported
// function and name it: the packages that can call it.
func loadImporters(ctx context.Context, ld *gomod.Loader, typed []typedTarget, in corpus) {
	var dirs []string
	for _, p := range in.order {
		d := path.Dir(p)
		if slices.Contains(dirs, d) {
			continue
		}
		src := in.contents[p]
		for _, tt := range typed {
			if path.Dir(tt.f.path) != d && imports(src, tt) {
				dirs = append(dirs, d)
				break
			}
		}
	}
	for i, d := range dirs {
		if i == maxImporterDirs || ctx.Err() != nil {
			return
		}
		_, _ = ld.Load(ctx, d, true) // a directory that does not load has no callers to show
	}
}

// imports reports whether src imports t's package and names one of the
// exported functions t changes.
func imports(src []byte, t typedTarget) bool {
	if len(src) == 0 || !bytes.Contains(src, []byte(`"`+t.pkg.Path+`"`)) {
		return false
	}
	for _, fd := range changedFuncDecls(t) {
		if fd.Name.IsExported() && bytes.Contains(src, []byte(fd.Name.Name)) {
			return true
		}
	}
	return false
}

// changedFuncDecls are the functions and methods of t's file that hold a
// changed line.
func changedFuncDecls(t typedTarget) []*ast.FuncDecl {
	var out []*ast.FuncDecl
	for _, d := range t.file.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && t.holdsChange(fd.Pos(), fd.End()) {
			out = append(out, fd)
		}
	}
	return out
}

// holdsChange reports whether a changed line of t lies in from..to.
func (t typedTarget) holdsChange(from, to token.Pos) bool {
	fset := t.fset
	return overlaps(fset.Position(from).Line, fset.Position(to).Line, t.changed)
}

// changedLines are the changed lines of every target, by path.
func changedLines(targets []*target) map[string]map[int]bool {
	out := map[string]map[int]bool{}
	for _, t := range targets {
		out[t.f.path] = t.changed
	}
	return out
}

// use is a use of a changed function.
type use struct {
	pos  token.Position
	file *ast.File
}

// typedCallers adds the uses of t's changed functions in every loaded
// package: each shown with its enclosing function or, in a long one, with
// the lines around it; never a use inside the function itself or on a
// changed line.
func (c *collector) typedCallers(ld *gomod.Loader, files map[string]*ast.File, t typedTarget, changed map[string]map[int]bool) {
	fset := ld.Fset()
	for _, fd := range changedFuncDecls(t) {
		fn, ok := t.pkg.Info.Defs[fd.Name].(*types.Func)
		if !ok {
			continue
		}
		score := 25
		if t.holdsChange(fd.Pos(), fd.Type.End()) {
			score = 35 // the signature changed
		}
		from, to := fset.Position(fd.Pos()), fset.Position(fd.End())
		shown := 0
		for _, u := range usesOf(ld, files, fn) {
			inside := u.pos.Filename == t.f.path && u.pos.Offset >= from.Offset && u.pos.Offset <= to.Offset
			if inside || changed[u.pos.Filename][u.pos.Line] {
				continue
			}
			f := c.goFile(u.pos.Filename)
			if f == nil || shown == maxTypedCallers {
				continue
			}
			start, end := callerLines(fset, u, c.lim.MaxSnippetLines, len(f.lines))
			if !c.has(t.target, f.path, start, end) {
				c.add(t.target, Caller, f, objName(fn), start, end, score+near(t.target, f))
				shown++
			}
		}
	}
}

// usesOf lists the uses of fn (the same function, as any loaded variant
// of its package declares it) in the loaded packages, in file and offset
// order, each once.
func usesOf(ld *gomod.Loader, files map[string]*ast.File, fn *types.Func) []use {
	key := fn.Origin().FullName()
	seen := map[token.Pos]bool{}
	var out []use
	for _, p := range ld.Packages() {
		for id, o := range p.Info.Uses {
			f, ok := o.(*types.Func)
			if !ok || seen[id.Pos()] || f.Name() != fn.Name() || f.Origin().FullName() != key {
				continue
			}
			seen[id.Pos()] = true
			pos := ld.Fset().Position(id.Pos())
			out = append(out, use{pos: pos, file: files[pos.Filename]})
		}
	}
	slices.SortFunc(out, func(a, b use) int {
		return cmp.Or(cmp.Compare(a.pos.Filename, b.pos.Filename), cmp.Compare(a.pos.Offset, b.pos.Offset))
	})
	return out
}

// callerLines is the range to show for a use: its enclosing function with
// its doc comment when that fits in limit lines, else the lines around it.
func callerLines(fset *token.FileSet, u use, limit, last int) (int, int) {
	if u.file != nil {
		for _, d := range u.file.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fset.Position(fd.Pos()).Offset > u.pos.Offset || fset.Position(fd.End()).Offset < u.pos.Offset {
				continue
			}
			start, end := fset.Position(cmp.Or(docPos(fd.Doc), fd.Pos())).Line, fset.Position(fd.End()).Line
			if end-start+1 <= limit {
				return start, end
			}
		}
	}
	return max(u.pos.Line-callRadius, 1), min(u.pos.Line+callRadius, last)
}

// has reports whether t already has a snippet of p holding start..end.
func (c *collector) has(t *target, p string, start, end int) bool {
	return slices.ContainsFunc(c.res.ByFile[t.f.path], func(s Snippet) bool {
		return s.Path == p && s.Start <= start && end <= s.End
	})
}
