package lint

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"io/fs"
	"path"
	"sort"
	"strings"

	"golang.org/x/mod/modfile"
)

// Bounds of the module's own packages type-checked for one review: a
// deterministic budget (no clock), so that the same change is checked the
// same way on a busy machine.
const (
	maxModulePackages = 150
	maxModuleBytes    = 16 << 20
)

// module type-checks the packages of the Go module a change belongs to
// from source, at the head revision, for go vet's passes: an import of
// the module's own packages (or of a vendored one) gets its real types
// instead of an empty package. Files are chosen as the go command would
// for linux/amd64 (build constraints and file-name suffixes, through
// go/build). It is one review's, not safe for concurrent use.
type module struct {
	read  func(path string) ([]byte, error) // a file of the tree at the head
	path  string                            // the module path
	root  string                            // the go.mod's directory, "." at the top
	dirs  map[string][]string
	fset  *token.FileSet
	cache map[string]*types.Package
	bytes int
	// over says which bound stopped the loading, "" while none did.
	over string
}

// newModule reads the go.mod nearest above dir among files (the tree's)
// and lists their Go files by directory; read reads a file of the tree.
// ok is false when dir is in no module.
func newModule(read func(string) ([]byte, error), files []string, dir string) (*module, bool) {
	m := &module{read: read, dirs: map[string][]string{}, fset: token.NewFileSet(), cache: map[string]*types.Package{}}
	mods := map[string]bool{}
	for _, f := range files {
		switch {
		case path.Base(f) == "go.mod":
			mods[path.Dir(f)] = true
		case strings.HasSuffix(f, ".go") && !strings.HasSuffix(f, "_test.go"):
			m.dirs[path.Dir(f)] = append(m.dirs[path.Dir(f)], path.Base(f))
		}
	}
	for d := dir; ; d = path.Dir(d) {
		if mods[d] {
			m.root = d
			break
		}
		if d == "." || d == "/" {
			return nil, false
		}
	}
	b, err := read(path.Join(m.root, "go.mod"))
	if err != nil || len(b) > MaxFileBytes {
		return nil, false
	}
	m.path = modfile.ModulePath(b)
	return m, m.path != ""
}

// dirOf returns the tree directory of an import path: in the module, or
// under its vendor directory; ok is false for any other import.
func (m *module) dirOf(importPath string) (string, bool) {
	switch {
	case importPath == m.path:
		return m.root, true
	case strings.HasPrefix(importPath, m.path+"/"):
		return path.Join(m.root, strings.TrimPrefix(importPath, m.path+"/")), true
	}
	vendored := path.Join(m.root, "vendor", importPath)
	if len(m.dirs[vendored]) > 0 {
		return vendored, true
	}
	return "", false
}

// load type-checks the package at importPath from source, its own imports
// through imp; ok is false when it is not the module's (or vendored), or
// a bound is reached.
func (m *module) load(importPath string, imp types.Importer) (*types.Package, bool) {
	if pkg, ok := m.cache[importPath]; ok {
		return pkg, pkg != nil
	}
	dir, ok := m.dirOf(importPath)
	if !ok || len(m.dirs[dir]) == 0 {
		return nil, false
	}
	if len(m.cache) >= maxModulePackages {
		m.over = fmt.Sprintf("%d packages", maxModulePackages)
		return nil, false
	}
	m.cache[importPath] = nil // a cycle reads as not loadable
	files := m.parseDir(dir)
	if len(files) == 0 {
		return nil, false
	}
	conf := types.Config{Importer: imp, FakeImportC: true, Error: func(error) {}}
	pkg, _ := conf.Check(importPath, m.fset, files, nil) // partial types are types all the same
	m.cache[importPath] = pkg
	return pkg, pkg != nil
}

// parseDir parses the files of dir the go command would build (for
// linux/amd64, without cgo), within the byte budget.
func (m *module) parseDir(dir string) []*ast.File {
	ctxt := m.buildContext()
	names := append([]string(nil), m.dirs[dir]...)
	sort.Strings(names)
	var out []*ast.File
	for _, name := range names {
		if ok, err := ctxt.MatchFile(dir, name); err != nil || !ok {
			continue
		}
		b, err := m.read(path.Join(dir, name))
		if err != nil || len(b) > MaxFileBytes {
			continue
		}
		if m.bytes+len(b) > maxModuleBytes {
			m.over = fmt.Sprintf("%d MiB of source", maxModuleBytes>>20)
			break
		}
		m.bytes += len(b)
		f, err := parser.ParseFile(m.fset, path.Join(dir, name), b, parser.SkipObjectResolution)
		if err == nil {
			out = append(out, f)
		}
	}
	return out
}

// buildContext is go/build's file matching over the tree.
func (m *module) buildContext() build.Context {
	c := build.Default
	c.GOOS, c.GOARCH, c.CgoEnabled = "linux", "amd64", false
	c.JoinPath = path.Join
	c.IsAbsPath = path.IsAbs
	c.IsDir = func(string) bool { return false }
	c.HasSubdir = func(string, string) (string, bool) { return "", false }
	c.ReadDir = func(string) ([]fs.FileInfo, error) { return nil, nil }
	c.OpenFile = func(p string) (io.ReadCloser, error) {
		b, err := m.read(p)
		if err != nil {
			return nil, err
		}
		return io.NopCloser(bytes.NewReader(b)), nil
	}
	return c
}

// note says which bound stopped the loading, "" when none did.
func (m *module) note() string {
	if m == nil || m.over == "" {
		return ""
	}
	return "govet: the module's packages were type-checked up to " + m.over + "; imports past it were unknown to the checks."
}
