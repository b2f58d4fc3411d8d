package gomod

import (
	"context"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"path"
	"runtime"
	"sort"
	"strconv"
	"strings"
)

// dirFiles are the parsed Go files of one directory that build on this
// machine, split as the go command splits them.
type dirFiles struct {
	name                  string // the package's name
	plain, test, xtest    []*ast.File
	plainN, testN, xtestN []string // their tree paths
	parseErrs             map[string]error
	limited               bool
}

// readDir reads and parses dir's Go files once, within the limits.
func (l *Loader) readDir(ctx context.Context, dir string) *dirFiles {
	if d, ok := l.dirs[dir]; ok {
		return d
	}
	d := &dirFiles{parseErrs: map[string]error{}}
	l.dirs[dir] = d
	names := map[string]int{}
	type parsed struct {
		f    *ast.File
		name string
	}
	var all []parsed
	for i, p := range l.byDir[dir] {
		if ctx.Err() != nil {
			d.limited = true
			break
		}
		f, ok := l.readFile(ctx, dir, p, i, d)
		if !ok {
			continue
		}
		all = append(all, parsed{f, p})
		if !strings.HasSuffix(p, "_test.go") {
			names[f.Name.Name]++
		}
	}
	d.name = majority(names)
	for _, x := range all {
		n := x.f.Name.Name
		switch {
		case !strings.HasSuffix(x.name, "_test.go") && n == d.name:
			d.plain, d.plainN = append(d.plain, x.f), append(d.plainN, x.name)
		case strings.HasSuffix(x.name, "_test.go") && (n == d.name || d.name == "" && !strings.HasSuffix(n, "_test")):
			d.name = n
			d.test, d.testN = append(d.test, x.f), append(d.testN, x.name)
		case strings.HasSuffix(x.name, "_test.go") && strings.HasSuffix(n, "_test"):
			d.xtest, d.xtestN = append(d.xtest, x.f), append(d.xtestN, x.name)
		}
	}
	return d
}

// readFile reads, matches and parses the i-th Go file p of dir; ok is
// false when it is left out (limits, build constraints, cgo, no parse).
func (l *Loader) readFile(ctx context.Context, dir, p string, i int, d *dirFiles) (*ast.File, bool) {
	switch {
	case i >= l.lim.FilesPerPackage:
		l.limited("files per package", p)
	case l.nFiles >= l.lim.Files:
		l.limited("files", p)
	default:
		b, err := l.tree.ReadFile(ctx, p)
		if err != nil {
			return nil, false
		}
		switch {
		case len(b) > l.lim.FileBytes:
			l.limited("file size", p)
		case l.nBytes+int64(len(b)) > l.lim.Bytes:
			l.limited("bytes", p)
		default:
			l.nFiles++
			l.nBytes += int64(len(b))
			return l.parse(dir, p, b, d)
		}
	}
	d.limited = true
	return nil, false
}

// parse parses one file that builds on this machine and does not use cgo.
func (l *Loader) parse(dir, p string, b []byte, d *dirFiles) (*ast.File, bool) {
	ctxt := l.ctxt
	ctxt.OpenFile = openFile(b)
	if ok, err := ctxt.MatchFile(dir, path.Base(p)); err != nil || !ok {
		return nil, false
	}
	f, err := parser.ParseFile(l.fset, p, b, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		d.parseErrs[p] = err
		return nil, false
	}
	for _, im := range f.Imports {
		if im.Path.Value == `"C"` {
			return nil, false // cgo is off, as in the go command without a C compiler
		}
	}
	return f, true
}

// majority is the most frequent name, the first in order on a tie.
func majority(names map[string]int) string {
	best := ""
	for n, c := range names {
		if c > names[best] || c == names[best] && (best == "" || n < best) {
			best = n
		}
	}
	return best
}

// load type-checks the package (without tests) of dir, once; nil when the
// directory has no file to build or is being type-checked (a cycle).
func (l *Loader) load(ctx context.Context, mod Module, dir, ipath string) *Package {
	if p, ok := l.pkgs[ipath]; ok {
		return p
	}
	if l.active[ipath] {
		return nil
	}
	d := l.readDir(ctx, dir)
	if len(d.plain) == 0 {
		return nil
	}
	p := &Package{Module: mod, Dir: dir, Path: ipath, Name: d.name, Files: d.plain, Filenames: d.plainN}
	l.check(ctx, ipath, p, d, nil)
	return p
}

// loadTests type-checks dir's package with its tests and its external
// test package.
func (l *Loader) loadTests(ctx context.Context, mod Module, dir string) ([]*Package, error) {
	ipath := mod.ImportPath(dir)
	d := l.readDir(ctx, dir)
	var out []*Package
	var self *Package
	if len(d.test) == 0 {
		self = l.load(ctx, mod, dir, ipath)
	} else {
		key := ipath + " [test]"
		if l.pkgs[key] == nil {
			p := &Package{Module: mod, Dir: dir, Path: ipath, Name: d.name, Test: true,
				Files: append(append([]*ast.File(nil), d.plain...), d.test...), Filenames: append(append([]string(nil), d.plainN...), d.testN...)}
			l.check(ctx, key, p, d, nil)
		}
		self = l.pkgs[key]
	}
	if self != nil {
		out = append(out, self)
	}
	if len(d.xtest) > 0 {
		key := ipath + " [xtest]"
		if l.pkgs[key] == nil {
			p := &Package{Module: mod, Dir: dir, Path: ipath + "_test", Name: d.xtest[0].Name.Name, XTest: true, Files: d.xtest, Filenames: d.xtestN}
			l.check(ctx, key, p, d, self)
		}
		out = append(out, l.pkgs[key])
	}
	return out, ctx.Err()
}

// check type-checks p (its files are set) and records it under key. self
// is the package an external test package imports by its own path.
func (l *Loader) check(ctx context.Context, key string, p *Package, d *dirFiles, self *Package) {
	l.nPkgs++
	l.pkgs[key] = p
	l.active[key] = true
	defer delete(l.active, key)
	p.ParseErrors, p.Limited, p.Imports = d.parseErrs, d.limited, map[string]*Package{}
	untyped := map[string]bool{}
	conf := types.Config{
		GoVersion: goVersion(p.Module),
		Sizes:     types.SizesFor("gc", runtime.GOARCH),
		Importer: importerFunc(func(ip string) (*types.Package, error) {
			if self != nil && ip == self.Path && self.Types != nil {
				p.Imports[ip] = self
				return self.Types, nil
			}
			t := l.resolve(ctx, p, ip)
			if t == nil {
				untyped[ip] = true
				return l.fakePkg(ip), nil
			}
			return t, nil
		}),
		Error: func(err error) {
			if len(p.TypeErrors) < maxTypeErrors {
				p.TypeErrors = append(p.TypeErrors, err)
			}
		},
	}
	p.Info = newInfo()
	p.Types, _ = conf.Check(p.Path, l.fset, p.Files, p.Info) // errors are in TypeErrors
	for ip := range untyped {
		p.Untyped = append(p.Untyped, ip)
	}
	sort.Strings(p.Untyped)
}

// resolve returns the types of the import ip of p: an in-module package
// from source, a standard one from Std; nil for an empty package.
func (l *Loader) resolve(ctx context.Context, p *Package, ip string) *types.Package {
	if ip == "unsafe" {
		return types.Unsafe
	}
	if dir, ok := p.Module.DirOf(ip); ok && l.byDir[dir] != nil {
		if m, _ := l.moduleOf(ctx, dir); m == p.Module && ctx.Err() == nil {
			if _, done := l.pkgs[ip]; !done && l.nPkgs >= l.lim.Packages {
				l.limited("packages", ip)
				p.Limited = true
				return nil
			}
			if dep := l.load(ctx, p.Module, dir, ip); dep != nil && dep.Types != nil {
				p.Imports[ip] = dep
				return dep.Types
			}
			return nil
		}
	}
	if !Standard(ip) {
		return nil
	}
	if l.std == nil {
		l.limited("standard library", ip)
		return nil
	}
	t, err := l.std.importPkg(ctx, ip)
	if errors.Is(err, errNoStd) {
		l.limited("standard library", ip)
	}
	return t
}

// importerFunc is a types.Importer.
type importerFunc func(path string) (*types.Package, error)

func (f importerFunc) Import(path string) (*types.Package, error) { return f(path) }

// fakePkg returns the empty, complete package standing for an import
// that is not type-checked, named as its path suggests.
func (l *Loader) fakePkg(ip string) *types.Package {
	if p, ok := l.fake[ip]; ok {
		return p
	}
	p := types.NewPackage(ip, guessName(ip))
	p.MarkComplete()
	l.fake[ip] = p
	return p
}

// guessName guesses a package's name from its import path, as readers do:
// the last element without a major version (/v2, .v3), a go- prefix or a
// -go suffix, dashes and dots made underscores.
func guessName(ip string) string {
	elems := strings.Split(ip, "/")
	name := elems[len(elems)-1]
	if len(elems) > 1 && majorVersion(name) {
		name = elems[len(elems)-2]
	}
	if i := strings.LastIndex(name, "."); i > 0 && majorVersion(name[i+1:]) {
		name = name[:i]
	}
	name = strings.TrimSuffix(strings.TrimPrefix(name, "go-"), "-go")
	name = strings.NewReplacer("-", "_", ".", "_").Replace(name)
	if name == "" || !token.IsIdentifier(name) {
		return "p" + strconv.Itoa(len(ip))
	}
	return name
}

// majorVersion reports whether s is a major version: v2, v10.
func majorVersion(s string) bool {
	if len(s) < 2 || s[0] != 'v' {
		return false
	}
	_, err := strconv.Atoi(s[1:])
	return err == nil
}

// newInfo returns a types.Info with every map.
func newInfo() *types.Info {
	return &types.Info{
		Types: map[ast.Expr]types.TypeAndValue{}, Defs: map[*ast.Ident]types.Object{}, Uses: map[*ast.Ident]types.Object{},
		Implicits: map[ast.Node]types.Object{}, Selections: map[*ast.SelectorExpr]*types.Selection{},
		Scopes: map[ast.Node]*types.Scope{}, Instances: map[*ast.Ident]types.Instance{}, FileVersions: map[*ast.File]string{},
	}
}
