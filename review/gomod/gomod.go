// Package gomod loads a Go module's packages from a review tree and
// type-checks them with go/types, the way the go command would see them on
// this machine but without building or running anything: the module's own
// packages are type-checked from source (only those the loaded packages
// import, recursively), the standard library comes from the Go
// installation (see Std), and every other import is an empty package, so
// that code using it is partly typed and type-based checks stay silent
// about it.
//
// Everything is bounded by deterministic limits (packages, files, bytes;
// never a wall-clock limit), so the same tree gives the same packages on an
// idle and on a loaded machine; a loader says in a note when a limit left a
// package untyped.
package gomod

import (
	"context"
	"path"
	"strings"
	"time"

	"golang.org/x/mod/modfile"
)

// Tree reads the repository at one revision (lint.Tree is one).
type Tree interface {
	// ReadFile returns a file's content, or an error wrapping
	// review.ErrNotFound.
	ReadFile(ctx context.Context, path string) ([]byte, error)
	// ListFiles lists every file path of the repository.
	ListFiles(ctx context.Context) ([]string, error)
}

// Limits bound the work of one Loader. A zero field takes the default
// named beside it.
type Limits struct {
	// Packages is the number of packages type-checked from source
	// (DefaultPackages); further in-module imports are empty packages.
	Packages int
	// Files is the number of Go files parsed (DefaultFiles).
	Files int
	// Bytes is the number of bytes of Go source read (DefaultBytes).
	Bytes int64
	// FilesPerPackage is the number of files read from one directory
	// (DefaultFilesPerPackage).
	FilesPerPackage int
	// FileBytes is the size of the largest Go file read
	// (DefaultFileBytes).
	FileBytes int
	// Deadline is a safety bound on the whole of one use of a Loader
	// (DefaultDeadline), far above what the limits above allow: its user
	// (go vet) stops there and drops that work with a note, rather than
	// keep a part of it that would depend on the machine's speed.
	Deadline time.Duration
}

// Default limits: enough for a change's packages and the module packages
// they import in most repositories, a few seconds of CPU at most.
const (
	DefaultPackages        = 60
	DefaultFiles           = 1500
	DefaultBytes           = 12 << 20
	DefaultFilesPerPackage = 200
	DefaultFileBytes       = 1 << 20
	DefaultDeadline        = time.Minute
)

// WithDefaults fills the zero fields of l.
func (l Limits) WithDefaults() Limits {
	if l.Packages <= 0 {
		l.Packages = DefaultPackages
	}
	if l.Files <= 0 {
		l.Files = DefaultFiles
	}
	if l.Bytes <= 0 {
		l.Bytes = DefaultBytes
	}
	if l.FilesPerPackage <= 0 {
		l.FilesPerPackage = DefaultFilesPerPackage
	}
	if l.FileBytes <= 0 {
		l.FileBytes = DefaultFileBytes
	}
	if l.Deadline <= 0 {
		l.Deadline = DefaultDeadline
	}
	return l
}

// Module is a Go module of the tree: the directory of its go.mod and the
// module path it declares.
type Module struct {
	// Dir is the tree directory holding go.mod ("." at the root).
	Dir string
	// Path is the module path (github.com/owner/name).
	Path string
	// GoVersion is the go.mod's go line ("1.22"), "" when absent.
	GoVersion string
}

// ImportPath returns the import path of the package in the tree
// directory dir, which is inside m.
func (m Module) ImportPath(dir string) string {
	if m.Path == "" {
		return dir
	}
	if dir == m.Dir {
		return m.Path
	}
	if m.Dir == "." {
		return m.Path + "/" + dir
	}
	return m.Path + "/" + strings.TrimPrefix(dir, m.Dir+"/")
}

// DirOf returns the tree directory of the import path p and whether p is
// one of m's packages (by path; whether the directory exists is the
// loader's business).
func (m Module) DirOf(p string) (string, bool) {
	if m.Path == "" {
		return "", false
	}
	if p == m.Path {
		return m.Dir, true
	}
	rest, ok := strings.CutPrefix(p, m.Path+"/")
	if !ok {
		return "", false
	}
	return path.Join(m.Dir, rest), true
}

// parseModule reads a go.mod's module path and go version; ok is false
// when it declares no module.
func parseModule(dir string, gomod []byte) (Module, bool) {
	f, err := modfile.ParseLax("go.mod", gomod, nil)
	if err != nil || f.Module == nil || f.Module.Mod.Path == "" {
		return Module{}, false
	}
	m := Module{Dir: dir, Path: f.Module.Mod.Path}
	if f.Go != nil {
		m.GoVersion = f.Go.Version
	}
	return m, true
}

// Standard reports whether an import path is the standard library's: its
// first element has no dot.
func Standard(p string) bool {
	first, _, _ := strings.Cut(p, "/")
	return !strings.Contains(first, ".")
}
