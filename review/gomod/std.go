package gomod

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"go/importer"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
)

// Std resolves the standard library's packages for every Loader of a
// process: each package is read once and its types are shared by every
// review. It is safe for concurrent use.
//
// With a go command, the types come from the compiler's export data, which
// `go list -export std` builds once into the go command's build cache
// (seconds the first time on a machine, half a second after): importing
// net/http costs a few milliseconds. Without one, they are type-checked
// from the Go installation's sources ($GOROOT/src): seconds per large
// package, once per process. Without either, standard-library imports are
// empty packages too, and Loader notes say so.
type Std struct {
	goCmd  string
	source bool

	mu      sync.Mutex // guards what follows: the importers are not safe for concurrent use
	ready   bool
	kind    string
	imp     types.ImporterFrom
	exports map[string]string
	why     string
}

// NewStd returns the standard library of this machine's Go installation:
// from export data built by goCmd (the path of the go command; "" for
// none), else from source when source says $GOROOT/src is on this
// machine.
func NewStd(goCmd string, source bool) *Std {
	return &Std{goCmd: goCmd, source: source}
}

// Kind says where the standard library's types come from: "export data",
// "source", or "" when they are not available. It lists the standard
// library (once) when it has not yet.
func (s *Std) Kind(ctx context.Context) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.init(ctx)
	return s.kind
}

// init chooses the importer, once it has succeeded: a failure because ctx
// ended is tried again by the next caller.
func (s *Std) init(ctx context.Context) {
	if s.ready {
		return
	}
	if s.goCmd != "" {
		exports, err := listExports(ctx, s.goCmd)
		if err != nil && ctx.Err() != nil {
			return // not ready: the next review tries again
		}
		if err == nil {
			s.exports, s.kind = exports, "export data"
			s.imp = importer.ForCompiler(token.NewFileSet(), "gc", s.lookup).(types.ImporterFrom)
			s.ready = true
			return
		}
		s.why = err.Error()
	}
	if s.source {
		// Its own file set: the library's positions are never reported.
		s.imp, s.kind = importer.ForCompiler(token.NewFileSet(), "source", nil).(types.ImporterFrom), "source"
	}
	s.ready = true
}

// lookup opens a package's export data (called with s.mu held).
func (s *Std) lookup(p string) (io.ReadCloser, error) {
	f, ok := s.exports[p]
	if !ok {
		return nil, fmt.Errorf("%s is not in the standard library", p)
	}
	return os.Open(f)
}

// importPkg returns the standard-library package p, or an error when it is
// not one or the library is not available.
func (s *Std) importPkg(ctx context.Context, p string) (*types.Package, error) {
	if p == "unsafe" {
		return types.Unsafe, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.init(ctx)
	if s.imp == nil {
		return nil, errNoStd
	}
	pkg, err := s.imp.ImportFrom(p, "", 0)
	if err != nil {
		return nil, fmt.Errorf("standard library: %w", err)
	}
	return pkg, nil
}

// errNoStd is the error of an import when the standard library is not
// available.
var errNoStd = errors.New("the Go standard library is not available on this machine")

// listExports runs `go list -export std` and returns each package's export
// data file. cgo is off (as for the loaded packages), so no C compiler is
// needed; the go command's own toolchain and no workspace are used, and it
// runs outside any module.
func listExports(ctx context.Context, goCmd string) (map[string]string, error) {
	cmd := exec.CommandContext(ctx, goCmd, "list", "-e", "-export", "-f", "{{.ImportPath}} {{.Export}}", "std")
	cmd.Dir = os.TempDir()
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOTOOLCHAIN=local", "GOWORK=off", "GOFLAGS=")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list -export std: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	exports := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		p, f, ok := strings.Cut(sc.Text(), " ")
		if ok && f != "" {
			exports[p] = f
		}
	}
	if exports["fmt"] == "" {
		return nil, errors.New("go list -export std: no export data for fmt")
	}
	return exports, nil
}
