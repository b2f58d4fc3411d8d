package main

import (
	"cmp"
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/tools/go/packages"
)

// loadMode is what the truth needs of each package of the module.
const loadMode = packages.NeedName | packages.NeedFiles | packages.NeedSyntax | packages.NeedTypes |
	packages.NeedTypesInfo | packages.NeedImports | packages.NeedModule

// maxNotes bounds the type errors noted per commit.
const maxNotes = 10

// resolver computes the truth of one checkout from its loaded packages.
type resolver struct {
	root    string // the checkout, symlinks resolved
	fset    *token.FileSet
	pkgs    []*packages.Package
	changed map[string]map[int]bool // repository path -> changed head lines
}

// rel returns the repository path of a file of the checkout, "" when the
// file is elsewhere (GOROOT, the module cache, the build cache) or under
// vendor/.
func (r *resolver) rel(file string) string {
	p, err := filepath.Rel(r.root, file)
	if err != nil || p == "." || strings.HasPrefix(p, "..") || filepath.IsAbs(p) {
		return ""
	}
	p = filepath.ToSlash(p)
	if vendored(p) {
		return ""
	}
	return p
}

// pos returns the repository path and line of a position.
func (r *resolver) pos(p token.Pos) (string, int) {
	at := r.fset.Position(p)
	return r.rel(at.Filename), at.Line
}

// onChanged reports whether a position is on a changed line.
func (r *resolver) onChanged(p token.Pos) bool {
	path, line := r.pos(p)
	return r.changed[path][line]
}

// definitions lists the module's declarations used on changed lines.
func (r *resolver) definitions() []definition {
	seen := map[definition]bool{}
	var out []definition
	for _, pkg := range r.pkgs {
		if pkg.TypesInfo == nil {
			continue
		}
		for id, obj := range pkg.TypesInfo.Uses {
			if !r.onChanged(id.Pos()) {
				continue
			}
			kind := kindOf(obj)
			if kind == "" {
				continue
			}
			path, line := r.pos(obj.Pos())
			if path == "" || r.changed[path][line] {
				continue
			}
			d := definition{Name: obj.Name(), Kind: kind, Path: path, Line: line}
			if !seen[d] {
				seen[d] = true
				out = append(out, d)
			}
		}
	}
	slices.SortFunc(out, func(a, b definition) int {
		return cmp.Or(cmp.Compare(a.Path, b.Path), cmp.Compare(a.Line, b.Line), cmp.Compare(a.Name, b.Name), cmp.Compare(a.Kind, b.Kind))
	})
	return out
}

// kindOf classifies a used object: func, method, type, const, var (package
// level only), or "" for anything else (locals, fields, type parameters,
// packages, builtins, labels).
func kindOf(obj types.Object) string {
	switch o := obj.(type) {
	case *types.Func:
		if o.Signature().Recv() != nil {
			return "method"
		}
		return "func"
	case *types.TypeName:
		if _, tp := o.Type().(*types.TypeParam); tp || o.Pkg() == nil {
			return ""
		}
		return "type"
	case *types.Const:
		if o.Pkg() == nil {
			return ""
		}
		return "const"
	case *types.Var:
		if o.Pkg() != nil && o.Parent() == o.Pkg().Scope() {
			return "var"
		}
	}
	return ""
}

// changedFunc is a function declaration whose range holds a changed line.
type changedFunc struct {
	of         string
	key        string // where the function is declared: its identity across test variants
	path       string
	start, end int // lines of the declaration
}

// changedFuncs lists the functions of the changed files that hold a
// changed line, keyed by their declaration's position.
func (r *resolver) changedFuncs() map[string]changedFunc {
	out := map[string]changedFunc{}
	for _, pkg := range r.pkgs {
		if pkg.TypesInfo == nil {
			continue
		}
		for _, f := range pkg.Syntax {
			path, _ := r.pos(f.Pos())
			lines := r.changed[path]
			if len(lines) == 0 {
				continue
			}
			for _, d := range f.Decls {
				fd, ok := d.(*ast.FuncDecl)
				if !ok {
					continue
				}
				_, start := r.pos(fd.Pos())
				_, end := r.pos(fd.End())
				if !anyIn(lines, start, end) {
					continue
				}
				fn, ok := pkg.TypesInfo.Defs[fd.Name].(*types.Func)
				if !ok {
					continue
				}
				k := r.key(fn)
				out[k] = changedFunc{of: funcName(fn), key: k, path: path, start: start, end: end}
			}
		}
	}
	return out
}

// key identifies a function by where it is declared, so that the copies
// of a package in its test variants are one.
func (r *resolver) key(fn *types.Func) string {
	at := r.fset.Position(fn.Origin().Pos())
	return fmt.Sprintf("%s:%d:%d", at.Filename, at.Line, at.Column)
}

// anyIn reports whether a line of lines is within start..end.
func anyIn(lines map[int]bool, start, end int) bool {
	for l := range lines {
		if l >= start && l <= end {
			return true
		}
	}
	return false
}

// funcName is "pkgpath.Func" or "pkgpath.(Recv).Meth".
func funcName(fn *types.Func) string {
	pkg := ""
	if fn.Pkg() != nil {
		pkg = fn.Pkg().Path()
	}
	recv := fn.Signature().Recv()
	if recv == nil {
		return pkg + "." + fn.Name()
	}
	t := recv.Type()
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	name := types.TypeString(t, func(*types.Package) string { return "" })
	if i := strings.IndexByte(name, '['); i >= 0 {
		name = name[:i]
	}
	return fmt.Sprintf("%s.(%s).%s", pkg, name, fn.Name())
}

// callers lists the references to the changed functions outside
// themselves and off the changed lines.
func (r *resolver) callers(funcs map[string]changedFunc) []caller {
	if len(funcs) == 0 {
		return nil
	}
	got := map[[3]string]*caller{}
	for _, pkg := range r.pkgs {
		if pkg.TypesInfo == nil {
			continue
		}
		calls := map[*ast.Ident]bool{}
		for _, f := range pkg.Syntax {
			callees(f, calls)
		}
		for id, obj := range pkg.TypesInfo.Uses {
			fn, ok := obj.(*types.Func)
			if !ok {
				continue
			}
			cf, ok := funcs[r.key(fn)]
			if !ok {
				continue
			}
			path, line := r.pos(id.Pos())
			if path == "" || r.changed[path][line] || (path == cf.path && line >= cf.start && line <= cf.end) {
				continue
			}
			k := [3]string{cf.of, path, fmt.Sprint(line)}
			c := got[k]
			if c == nil {
				c = &caller{Of: cf.of, Path: path, Line: line}
				got[k] = c
			}
			c.Call = c.Call || calls[id]
		}
	}
	out := make([]caller, 0, len(got))
	for _, c := range got {
		out = append(out, *c)
	}
	slices.SortFunc(out, func(a, b caller) int {
		return cmp.Or(cmp.Compare(a.Of, b.Of), cmp.Compare(a.Path, b.Path), cmp.Compare(a.Line, b.Line))
	})
	return out
}

// callees adds to out the identifiers of a file that are the function of
// a call: f in f(), M in x.M(), f in f[T]().
func callees(f *ast.File, out map[*ast.Ident]bool) {
	ast.Inspect(f, func(n ast.Node) bool {
		c, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		fun := ast.Unparen(c.Fun)
		switch x := fun.(type) {
		case *ast.IndexExpr:
			fun = x.X
		case *ast.IndexListExpr:
			fun = x.X
		}
		switch x := fun.(type) {
		case *ast.Ident:
			out[x] = true
		case *ast.SelectorExpr:
			out[x.Sel] = true
		}
		return true
	})
}
