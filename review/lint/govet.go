package lint

import (
	"context"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"maps"
	"path"
	"sort"
	"strings"
	"sync"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/checker"
	"golang.org/x/tools/go/analysis/passes/appends"
	"golang.org/x/tools/go/analysis/passes/assign"
	"golang.org/x/tools/go/analysis/passes/atomic"
	"golang.org/x/tools/go/analysis/passes/bools"
	"golang.org/x/tools/go/analysis/passes/copylock"
	"golang.org/x/tools/go/analysis/passes/deepequalerrors"
	"golang.org/x/tools/go/analysis/passes/defers"
	"golang.org/x/tools/go/analysis/passes/errorsas"
	"golang.org/x/tools/go/analysis/passes/httpresponse"
	"golang.org/x/tools/go/analysis/passes/ifaceassert"
	"golang.org/x/tools/go/analysis/passes/lostcancel"
	"golang.org/x/tools/go/analysis/passes/nilfunc"
	"golang.org/x/tools/go/analysis/passes/printf"
	"golang.org/x/tools/go/analysis/passes/shift"
	"golang.org/x/tools/go/analysis/passes/sigchanyzer"
	"golang.org/x/tools/go/analysis/passes/stdmethods"
	"golang.org/x/tools/go/analysis/passes/stringintconv"
	"golang.org/x/tools/go/analysis/passes/structtag"
	"golang.org/x/tools/go/analysis/passes/testinggoroutine"
	"golang.org/x/tools/go/analysis/passes/timeformat"
	"golang.org/x/tools/go/analysis/passes/unmarshal"
	"golang.org/x/tools/go/analysis/passes/unreachable"
	"golang.org/x/tools/go/analysis/passes/unusedresult"
	"golang.org/x/tools/go/analysis/passes/waitgroup"
	"golang.org/x/tools/go/packages"

	"github.com/mergeguard/mergeguard/review"
)

// maxSiblings bounds the unchanged files of a package read to type-check
// it with the changed ones.
const maxSiblings = 50

// vetPasses are go vet's analysis passes that are precise on a package
// type-checked without its non-standard imports: each reports only what it
// proves from the types it has, and an unknown type makes it say nothing.
func vetPasses() []*analysis.Analyzer {
	return []*analysis.Analyzer{
		appends.Analyzer, assign.Analyzer, atomic.Analyzer, bools.Analyzer, copylock.Analyzer,
		deepequalerrors.Analyzer, defers.Analyzer, errorsas.Analyzer, httpresponse.Analyzer,
		ifaceassert.Analyzer, lostcancel.Analyzer, nilfunc.Analyzer, printf.Analyzer, shift.Analyzer,
		sigchanyzer.Analyzer, stdmethods.Analyzer, stringintconv.Analyzer, structtag.Analyzer,
		testinggoroutine.Analyzer, timeformat.Analyzer, unmarshal.Analyzer, unreachable.Analyzer,
		unusedresult.Analyzer, waitgroup.Analyzer,
	}
}

// GoVet runs go vet's analysis passes on each changed Go package: the
// changed files with the package's other files at the head revision,
// type-checked from source. Standard-library imports are type-checked from
// the Go installation's sources when they are on this machine; every other
// import is an empty package, so the passes see its uses as unknown types
// and stay silent about them. Nothing is built or run.
type GoVet struct {
	stdlib bool

	mu  sync.Mutex // the source importer is not safe for concurrent use
	std types.ImporterFrom
}

// NewGoVet returns the Go linter. stdlib says whether the Go standard
// library's sources are on this machine (runtime.GOROOT()/src): without
// them the standard library's packages are unknown too, and a note says the
// checks were limited.
func NewGoVet(stdlib bool) *GoVet {
	g := &GoVet{stdlib: stdlib}
	if stdlib {
		// Its own file set: the standard library's positions are never
		// reported, and the set stays as large as the library.
		g.std = importer.ForCompiler(token.NewFileSet(), "source", nil).(types.ImporterFrom)
	}
	return g
}

// Name implements Linter.
func (*GoVet) Name() string { return AgentPrefix + "govet" }

// Applies implements Linter: Go files outside vendor and testdata.
func (*GoVet) Applies(p string) bool {
	return strings.HasSuffix(p, ".go") && !strings.HasPrefix(p, "vendor/") &&
		!strings.Contains(p, "/vendor/") && !strings.Contains("/"+p, "/testdata/")
}

// Lint implements Linter.
func (g *GoVet) Lint(ctx context.Context, files []File, tree Tree) (Report, error) {
	var rep Report
	if !g.stdlib {
		rep.Notes = append(rep.Notes, "govet: the Go standard library's sources are not on this machine, so checks that need its types (printf, lostcancel, copylock...) were limited.")
	}
	siblings, err := g.siblings(ctx, files, tree)
	if err != nil {
		rep.Notes = append(rep.Notes, fmt.Sprintf("govet: checked the changed files without the rest of their packages: %v", err))
	}
	var failed []string // one note for all, naming the first
	for _, dir := range dirs(files) {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		fs, err := g.vetDir(ctx, dir, files, siblings[dir])
		rep.Findings = append(rep.Findings, fs...)
		if err != nil {
			failed = append(failed, fmt.Sprintf("%s: %v", dir, err))
		}
	}
	switch len(failed) {
	case 0:
	case 1:
		rep.Notes = append(rep.Notes, "govet could not fully check "+failed[0])
	default:
		rep.Notes = append(rep.Notes, fmt.Sprintf("govet could not fully check %d packages, e.g. %s", len(failed), failed[0]))
	}
	return rep, nil
}

// dirs lists the directories of files, sorted.
func dirs(files []File) []string {
	seen := map[string]bool{}
	var out []string
	for _, f := range files {
		if d := path.Dir(f.Path()); !seen[d] {
			seen[d] = true
			out = append(out, d)
		}
	}
	sort.Strings(out)
	return out
}

// source is one Go file to parse.
type source struct {
	path    string
	content []byte
	changed *File
}

// siblings reads the unchanged Go files in the changed files' directories,
// at most maxSiblings per directory.
func (g *GoVet) siblings(ctx context.Context, files []File, tree Tree) (map[string][]source, error) {
	out := map[string][]source{}
	if tree == nil {
		return out, nil
	}
	all, err := tree.ListFiles(ctx)
	if err != nil {
		return out, fmt.Errorf("list files: %w", err)
	}
	changed := map[string]bool{}
	wanted := map[string]bool{}
	for _, f := range files {
		changed[f.Path()], wanted[path.Dir(f.Path())] = true, true
	}
	for _, p := range all {
		d := path.Dir(p)
		if !wanted[d] || changed[p] || !strings.HasSuffix(p, ".go") || len(out[d]) >= maxSiblings {
			continue
		}
		b, err := tree.ReadFile(ctx, p)
		if err != nil || len(b) > MaxFileBytes {
			continue // the package is checked without it
		}
		out[d] = append(out[d], source{path: p, content: b})
	}
	return out, nil
}

// vetDir type-checks and vets the package(s) of one directory and returns
// the findings on the changed files' added lines.
func (g *GoVet) vetDir(ctx context.Context, dir string, files []File, others []source) ([]review.Finding, error) {
	var srcs []source
	for i := range files {
		if path.Dir(files[i].Path()) == dir {
			srcs = append(srcs, source{path: files[i].Path(), content: files[i].Content, changed: &files[i]})
		}
	}
	srcs = append(srcs, others...)
	fset := token.NewFileSet()
	byPkg := map[string][]*ast.File{}
	changed := map[string]*File{}
	for _, s := range srcs {
		f, err := parser.ParseFile(fset, s.path, s.content, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			if s.changed != nil {
				return nil, fmt.Errorf("parse %s: %w", s.path, err)
			}
			continue
		}
		byPkg[f.Name.Name] = append(byPkg[f.Name.Name], f)
		if s.changed != nil {
			changed[s.path] = s.changed
		}
	}
	var out []review.Finding
	for name, syntax := range byPkg {
		fs, err := g.vetPackage(ctx, dir, name, fset, syntax, changed)
		out = append(out, fs...)
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// vetPackage type-checks one package and runs the passes on it
// (diagnostics): a pass that fails on the partly typed package is named in
// the error without losing the others' findings.
func (g *GoVet) vetPackage(ctx context.Context, dir, name string, fset *token.FileSet, syntax []*ast.File, changed map[string]*File) ([]review.Finding, error) {
	info := &types.Info{
		Types: map[ast.Expr]types.TypeAndValue{}, Defs: map[*ast.Ident]types.Object{}, Uses: map[*ast.Ident]types.Object{},
		Implicits: map[ast.Node]types.Object{}, Selections: map[*ast.SelectorExpr]*types.Selection{},
		Scopes: map[ast.Node]*types.Scope{}, Instances: map[*ast.Ident]types.Instance{}, FileVersions: map[*ast.File]string{},
	}
	conf := types.Config{Importer: &imports{g: g, fake: map[string]*types.Package{}}, FakeImportC: true,
		Error: func(error) {}} // missing imports and siblings leave errors: the passes skip unknown types
	pkg, _ := conf.Check(dir, fset, syntax, info)
	names := make([]string, len(syntax))
	for i, f := range syntax {
		names[i] = fset.File(f.Pos()).Name()
	}
	lp := &packages.Package{ID: dir, Name: name, PkgPath: dir, Fset: fset, Syntax: syntax, Types: pkg, TypesInfo: info,
		TypesSizes: types.SizesFor("gc", "amd64"), GoFiles: names, CompiledGoFiles: names}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	passes := vetPasses()
	found, failed := diagnostics(passes, lp)
	var out []review.Finding
	addedLines := map[*File]map[int]bool{}
	for _, a := range passes { // in a fixed order
		for _, d := range found[a] {
			pos := fset.Position(d.Pos)
			f := changed[pos.Filename]
			if f == nil {
				continue
			}
			if addedLines[f] == nil {
				addedLines[f] = added(f.Diff)
			}
			if addedLines[f][pos.Line] {
				desc := fmt.Sprintf("%s\n\nReported by go vet's %s check.", d.Message, a.Name)
				fd := finding(g.Name(), *f, pos.Line, review.SeverityWarning, review.CategoryBug, exact, title(d.Message), desc)
				fd.Rule, fd.Column = a.Name, pos.Column
				out = append(out, fd)
			}
		}
	}
	if len(failed) > 0 {
		return out, fmt.Errorf("the %s checks failed on its partly typed code", strings.Join(failed, ", "))
	}
	return out, nil
}

// diagnostics runs the passes on p in one graph, so that what they share
// (the syntax inspector, control-flow graphs) is built once. When a pass
// panics on the partly typed package, each pass runs on its own, so that
// the others' diagnostics are kept. It returns the diagnostics by pass
// and the names of the passes that failed.
func diagnostics(passes []*analysis.Analyzer, p *packages.Package) (map[*analysis.Analyzer][]analysis.Diagnostic, []string) {
	if out, failed, err := analyze(passes, p); err == nil {
		return out, failed
	}
	out := map[*analysis.Analyzer][]analysis.Diagnostic{}
	var failed []string
	for _, a := range passes {
		ds, f, err := analyze([]*analysis.Analyzer{a}, p)
		if err != nil {
			failed = append(failed, a.Name)
			continue
		}
		maps.Copy(out, ds)
		failed = append(failed, f...)
	}
	return out, failed
}

// analyze runs passes (and the passes they require) on p; a panic is its
// error, a pass's own error names it in failed.
func analyze(passes []*analysis.Analyzer, p *packages.Package) (out map[*analysis.Analyzer][]analysis.Diagnostic, failed []string, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, failed, err = nil, nil, fmt.Errorf("go vet stopped: %v", r)
		}
	}()
	graph, err := checker.Analyze(passes, []*packages.Package{p}, &checker.Options{Sequential: true})
	if err != nil {
		return nil, nil, err
	}
	out = map[*analysis.Analyzer][]analysis.Diagnostic{}
	for _, act := range graph.Roots {
		if act.Err != nil {
			failed = append(failed, act.Analyzer.Name)
			continue
		}
		out[act.Analyzer] = act.Diagnostics
	}
	return out, failed, nil
}

// imports resolves a package's imports: the standard library from source
// when it is on this machine, anything else as an empty package.
type imports struct {
	g    *GoVet
	fake map[string]*types.Package
}

func (im *imports) Import(p string) (*types.Package, error) { return im.ImportFrom(p, "", 0) }

func (im *imports) ImportFrom(p, _ string, _ types.ImportMode) (*types.Package, error) {
	if p == "unsafe" {
		return types.Unsafe, nil
	}
	if im.g.std != nil && standard(p) {
		im.g.mu.Lock()
		pkg, err := im.g.std.ImportFrom(p, "", 0)
		im.g.mu.Unlock()
		if err == nil {
			return pkg, nil
		}
	}
	if pkg, ok := im.fake[p]; ok {
		return pkg, nil
	}
	pkg := types.NewPackage(p, path.Base(p))
	pkg.MarkComplete()
	im.fake[p] = pkg
	return pkg, nil
}

// standard reports whether an import path is the standard library's: its
// first element has no dot.
func standard(p string) bool {
	first, _, _ := strings.Cut(p, "/")
	return !strings.Contains(first, ".")
}
