package gomod

import (
	"bytes"
	"context"
	"fmt"
	"go/ast"
	"go/build"
	"go/token"
	"go/types"
	"go/version"
	"io"
	"path"
	"runtime"
	"sort"
	"strings"
)

// maxTypeErrors bounds the type errors a Package keeps.
const maxTypeErrors = 20

// Package is one type-checked package of the tree.
type Package struct {
	// Module is the module the package is in (zero when the tree has no
	// go.mod above it: then only its own directory is loaded).
	Module Module
	// Dir is its tree directory, Path its import path, Name its name.
	Dir, Path, Name string
	// Test says the package has its directory's _test.go files of the
	// same package (the package go vet checks); XTest says it is the
	// external test package (package name_test).
	Test, XTest bool
	// Files are its parsed files and Filenames their tree paths, in the
	// same order (sorted by path). Positions are in the Loader's Fset.
	Files     []*ast.File
	Filenames []string
	// Types and Info are go/types' results; Info has every map filled.
	Types *types.Package
	Info  *types.Info
	// TypeErrors are the first type errors (an untyped import leaves some).
	TypeErrors []error
	// ParseErrors are the files of the directory that did not parse,
	// by tree path; they are not in Files.
	ParseErrors map[string]error
	// Imports are its imports type-checked from source (the module's own
	// packages), by import path.
	Imports map[string]*Package
	// Untyped are its imports that are empty packages (third-party,
	// missing, or left out by a limit), sorted.
	Untyped []string
	// Limited says a limit left out some of its files or imports.
	Limited bool
}

// Loader loads the packages of one tree. It is for one review: not safe
// for concurrent use. Its Std is shared.
type Loader struct {
	tree Tree
	std  *Std
	lim  Limits
	fset *token.FileSet
	ctxt build.Context

	listed  bool
	byDir   map[string][]string // Go files by directory, sorted
	goMods  map[string]bool     // directories with a go.mod
	modules map[string]*Module  // read go.mod files by directory; nil: declares no module
	pkgs    map[string]*Package // by import path, plus " [test]" and " [xtest]"
	active  map[string]bool     // being type-checked: an import cycle is untyped
	dirs    map[string]*dirFiles
	fake    map[string]*types.Package

	nPkgs, nFiles int
	nBytes        int64
	hit           map[string][]string // limit -> what it left out, in order
}

// NewLoader returns a Loader of tree with the standard library std (nil
// for none) and limits lim.
func NewLoader(tree Tree, std *Std, lim Limits) *Loader {
	ctxt := build.Default // a copy: this machine's GOOS, GOARCH and release tags
	ctxt.CgoEnabled = false
	ctxt.GOPATH, ctxt.Dir = "", ""
	return &Loader{tree: tree, std: std, lim: lim.WithDefaults(), fset: token.NewFileSet(), ctxt: ctxt,
		pkgs: map[string]*Package{}, dirs: map[string]*dirFiles{}, active: map[string]bool{}, fake: map[string]*types.Package{}, hit: map[string][]string{}}
}

// Fset is the file set of every loaded package's positions.
func (l *Loader) Fset() *token.FileSet { return l.fset }

// ModuleOf returns the module whose go.mod is nearest above the tree
// directory dir, and false when there is none.
func (l *Loader) ModuleOf(ctx context.Context, dir string) (Module, bool, error) {
	if err := l.list(ctx); err != nil {
		return Module{}, false, err
	}
	m, ok := l.moduleOf(ctx, dir)
	return m, ok, nil
}

// Dirs lists the tree directories holding Go files, sorted.
func (l *Loader) Dirs(ctx context.Context) ([]string, error) {
	if err := l.list(ctx); err != nil {
		return nil, err
	}
	out := make([]string, 0, len(l.byDir))
	for d := range l.byDir {
		out = append(out, d)
	}
	sort.Strings(out)
	return out, nil
}

// Packages returns every package loaded so far, sorted by import path
// (a test variant after its package).
func (l *Loader) Packages() []*Package {
	keys := make([]string, 0, len(l.pkgs))
	for k := range l.pkgs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]*Package, 0, len(keys))
	for _, k := range keys {
		out = append(out, l.pkgs[k])
	}
	return out
}

// Load type-checks the package in the tree directory dir. Without tests it
// returns the package as its importers see it; with tests it returns the
// package with its in-package _test.go files (the package itself when it
// has none) and, when the directory has one, the external test package.
// A directory with no Go file to build gives no package and no error.
func (l *Loader) Load(ctx context.Context, dir string, tests bool) ([]*Package, error) {
	if err := l.list(ctx); err != nil {
		return nil, err
	}
	if l.std != nil {
		l.std.Kind(ctx) // list the standard library with this ctx
	}
	mod, _ := l.moduleOf(ctx, dir)
	if !tests {
		p := l.load(ctx, mod, dir, mod.ImportPath(dir))
		if p == nil {
			return nil, ctx.Err()
		}
		return []*Package{p}, ctx.Err()
	}
	return l.loadTests(ctx, mod, dir)
}

// list reads the tree's listing once.
func (l *Loader) list(ctx context.Context) error {
	if l.listed {
		return nil
	}
	all, err := l.tree.ListFiles(ctx)
	if err != nil {
		return fmt.Errorf("list files: %w", err)
	}
	l.byDir, l.goMods, l.modules = map[string][]string{}, map[string]bool{}, map[string]*Module{}
	for _, p := range all {
		switch {
		case strings.HasSuffix(p, ".go"):
			l.byDir[path.Dir(p)] = append(l.byDir[path.Dir(p)], p)
		case path.Base(p) == "go.mod":
			l.goMods[path.Dir(p)] = true
		}
	}
	for _, fs := range l.byDir {
		sort.Strings(fs)
	}
	l.listed = true
	return nil
}

// moduleOf returns the module of the nearest go.mod above dir that
// declares one, reading each go.mod once.
func (l *Loader) moduleOf(ctx context.Context, dir string) (Module, bool) {
	for d := dir; ; d = path.Dir(d) {
		if l.goMods[d] {
			m, read := l.modules[d]
			if !read {
				if b, err := l.tree.ReadFile(ctx, path.Join(d, "go.mod")); err == nil {
					if mod, ok := parseModule(d, b); ok {
						m = &mod
					}
				}
				l.modules[d] = m
			}
			if m != nil {
				return *m, true
			}
		}
		if d == "." || d == "/" {
			return Module{Dir: dir}, false
		}
	}
}

// Notes say what the limits and a missing standard library left untyped,
// one sentence each, in a fixed order.
func (l *Loader) Notes() []string {
	var out []string
	for _, k := range []string{"packages", "files", "bytes", "files per package", "file size", "standard library"} {
		left := l.hit[k]
		if len(left) == 0 {
			continue
		}
		switch k {
		case "standard library":
			out = append(out, fmt.Sprintf("gomod: the Go standard library is not available on this machine, so %d standard imports were left untyped (e.g. %s).", len(left), left[0]))
		default:
			out = append(out, fmt.Sprintf("gomod: the %s limit (%s) was reached: %d left untyped (e.g. %s).", k, l.limitOf(k), len(left), left[0]))
		}
	}
	return out
}

// limitOf renders the value of the limit named k.
func (l *Loader) limitOf(k string) string {
	switch k {
	case "packages":
		return fmt.Sprint(l.lim.Packages)
	case "files":
		return fmt.Sprint(l.lim.Files)
	case "bytes":
		return fmt.Sprint(l.lim.Bytes)
	case "files per package":
		return fmt.Sprint(l.lim.FilesPerPackage)
	}
	return fmt.Sprint(l.lim.FileBytes)
}

// limited records what a limit left out, once each.
func (l *Loader) limited(k, what string) {
	for _, w := range l.hit[k] {
		if w == what {
			return
		}
	}
	l.hit[k] = append(l.hit[k], what)
}

// openFile serves build.Context.MatchFile from the content being read.
func openFile(content []byte) func(string) (io.ReadCloser, error) {
	return func(string) (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(content)), nil }
}

// goVersion is the language version to check m's code with: its go line,
// at most this toolchain's.
func goVersion(m Module) string {
	v := "go" + m.GoVersion
	if m.GoVersion == "" || !version.IsValid(v) {
		return ""
	}
	if tool := version.Lang(runtime.Version()); tool != "" && version.Compare(v, tool) > 0 {
		return tool
	}
	return v
}
