package lint

import (
	"context"
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"go/types"
	"maps"
	"path"
	"runtime"
	"slices"
	"sort"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/checker"
	"golang.org/x/tools/go/analysis/passes/appends"
	"golang.org/x/tools/go/analysis/passes/assign"
	"golang.org/x/tools/go/analysis/passes/atomic"
	"golang.org/x/tools/go/analysis/passes/bools"
	"golang.org/x/tools/go/analysis/passes/composite"
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
	"github.com/mergeguard/mergeguard/review/gomod"
)

// vetPasses are go vet's analysis passes that are precise on a package
// whose third-party imports are untyped: each reports only what it proves
// from the types it has, and an unknown type makes it say nothing.
// composites (unkeyed fields in a literal of another package's struct
// type) is one now that the module's own types are known: on 35 real
// commits it reported nothing where go vet reported nothing
// (bench/govetreal).
func vetPasses() []*analysis.Analyzer {
	return []*analysis.Analyzer{
		appends.Analyzer, assign.Analyzer, atomic.Analyzer, bools.Analyzer, composite.Analyzer, copylock.Analyzer,
		deepequalerrors.Analyzer, defers.Analyzer, errorsas.Analyzer, httpresponse.Analyzer,
		ifaceassert.Analyzer, lostcancel.Analyzer, nilfunc.Analyzer, printf.Analyzer, shift.Analyzer,
		sigchanyzer.Analyzer, stdmethods.Analyzer, stringintconv.Analyzer, structtag.Analyzer,
		testinggoroutine.Analyzer, timeformat.Analyzer, unmarshal.Analyzer, unreachable.Analyzer,
		unusedresult.Analyzer, waitgroup.Analyzer,
	}
}

// GoVet runs go vet's analysis passes on each changed Go package, with
// its tests, as go vet does: the package is loaded from the head revision
// by gomod, so the module's own packages it imports are type-checked from
// source, the standard library comes from the Go installation, and every
// other import is an empty package, whose uses the passes see as unknown
// types and stay silent about. Functions of the module's packages that
// wrap fmt.Printf are known to printf as they are to go vet. Nothing is
// built or run. The loading is bounded by gomod.Limits, with a note when
// a limit is reached.
type GoVet struct {
	std *gomod.Std
	lim gomod.Limits
}

// NewGoVet returns the Go linter. std is the standard library, shared by
// every review (nil when the Go installation is not on this machine: then
// its packages are unknown too, and a note says the checks were limited);
// lim bounds each review's loading (zero fields: gomod's defaults).
func NewGoVet(std *gomod.Std, lim gomod.Limits) *GoVet {
	return &GoVet{std: std, lim: lim}
}

// Name implements Linter.
func (*GoVet) Name() string { return review.AnalyzerPrefix + "govet" }

// Applies implements Linter: Go files outside vendor and testdata.
func (*GoVet) Applies(p string) bool {
	return strings.HasSuffix(p, ".go") && !strings.HasPrefix(p, "vendor/") &&
		!strings.Contains(p, "/vendor/") && !strings.Contains("/"+p, "/testdata/")
}

// errVetDeadline is the cause of a go vet stopped by gomod.Limits.Deadline.
var errVetDeadline = errors.New("go vet hit its safety deadline")

// Lint implements Linter. Work that reaches the safety deadline
// (gomod.Limits.Deadline) is dropped whole, with a note: which findings a
// review has never depends on the machine's speed.
func (g *GoVet) Lint(ctx context.Context, files []File, tree Tree) (Report, error) {
	deadline := g.lim.WithDefaults().Deadline
	vctx, cancel := context.WithTimeoutCause(ctx, deadline, errVetDeadline)
	defer cancel()
	rep, err := g.lint(vctx, files, tree)
	if err != nil && ctx.Err() == nil && errors.Is(context.Cause(vctx), errVetDeadline) {
		return Report{Notes: []string{fmt.Sprintf("govet stopped at its safety deadline of %s: its findings are left out of this review.", deadline)}}, nil
	}
	return rep, err
}

// lint is Lint under the safety deadline.
func (g *GoVet) lint(ctx context.Context, files []File, tree Tree) (Report, error) {
	var rep Report
	changed := map[string]*File{}
	for i := range files {
		changed[files[i].Path()] = &files[i]
	}
	loader := gomod.NewLoader(overlay{tree: tree, files: changed}, g.std, g.lim)
	var failed []string // one note for all, naming the first
	for _, dir := range dirs(files) {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		fs, err := g.vetDir(ctx, loader, dir, changed)
		rep.Findings = append(rep.Findings, fs...)
		if err != nil {
			failed = append(failed, fmt.Sprintf("%s: %v", dir, err))
		}
	}
	if err := ctx.Err(); err != nil {
		return rep, err // stopped during the last package: never a part
	}
	for _, n := range loader.Notes() {
		rep.Notes = append(rep.Notes, "govet: "+strings.TrimPrefix(n, "gomod: "))
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

// vetDir loads and vets the package(s) of one directory, with their
// tests, and returns the findings on the changed files' added lines. A
// changed file that does not parse is the error.
func (g *GoVet) vetDir(ctx context.Context, loader *gomod.Loader, dir string, changed map[string]*File) ([]review.Finding, error) {
	pkgs, err := loader.Load(ctx, dir, true)
	if err != nil {
		return nil, fmt.Errorf("load: %w", err)
	}
	var out []review.Finding
	var failed error
	graph, shaped := map[*gomod.Package]*packages.Package{}, map[*gomod.Package]*packages.Package{}
	for _, p := range pkgs {
		if !touches(p, changed) {
			continue
		}
		fs, err := g.vetPackage(ctx, loader.Fset(), analysisPackage(p, loader.Fset(), graph, false),
			analysisPackage(p, loader.Fset(), shaped, true), changed)
		out = append(out, fs...)
		if err != nil && failed == nil {
			failed = err
		}
	}
	if failed != nil {
		return out, failed
	}
	for _, f := range sortedKeys(changed) {
		if path.Dir(f) == dir {
			for _, p := range pkgs {
				if err := p.ParseErrors[f]; err != nil {
					return out, fmt.Errorf("parse %s: %w", f, err)
				}
			}
			if len(pkgs) == 0 {
				if _, err := parser.ParseFile(token.NewFileSet(), f, changed[f].Content, parser.PackageClauseOnly); err != nil {
					return out, fmt.Errorf("parse %s: %w", f, err)
				}
			}
		}
	}
	return out, nil
}

// touches reports whether one of p's files changed.
func touches(p *gomod.Package, changed map[string]*File) bool {
	for _, f := range p.Filenames {
		if changed[f] != nil {
			return true
		}
	}
	return false
}

// sortedKeys returns m's keys, sorted.
func sortedKeys(m map[string]*File) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// analysisPackage is p as the analysis checker takes it, with the
// module's packages it imports (so that facts such as printf wrappers
// flow from them), memoized in graph; for printf when shaped (see
// wellShaped and pruned).
func analysisPackage(p *gomod.Package, fset *token.FileSet, graph map[*gomod.Package]*packages.Package, shaped bool) *packages.Package {
	if lp, ok := graph[p]; ok {
		return lp
	}
	info, syntax := p.Info, p.Files
	if shaped {
		info = wellShaped(p.Files, p.Info)
		syntax = pruned(p.Files, info)
	}
	lp := &packages.Package{ID: p.Path, Name: p.Name, PkgPath: p.Path, Fset: fset, Syntax: syntax, Types: p.Types,
		TypesInfo: info, TypesSizes: types.SizesFor("gc", runtime.GOARCH), GoFiles: p.Filenames,
		CompiledGoFiles: p.Filenames, Imports: map[string]*packages.Package{}}
	if p.Test || p.XTest {
		lp.ID += " [test]"
	}
	graph[p] = lp
	for ip, dep := range p.Imports {
		lp.Imports[ip] = analysisPackage(dep, fset, graph, shaped)
	}
	return lp
}

// vetPackage runs the passes on one package (printf, and a pass that
// fails on the package, on its shaped variant) and returns the findings on the changed files' added lines
// (diagnostics): a pass that fails on the partly typed package is named in
// the error without losing the others' findings.
func (g *GoVet) vetPackage(ctx context.Context, fset *token.FileSet, lp, shaped *packages.Package, changed map[string]*File) ([]review.Finding, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	passes := vetPasses()
	var others []*analysis.Analyzer
	for _, a := range passes {
		if a != printf.Analyzer {
			others = append(others, a)
		}
	}
	found, failed := diagnostics(others, lp)
	// A pass that failed on the partly typed package runs again on the
	// copy made for printf, where what has no type has the invalid one.
	retry := []*analysis.Analyzer{printf.Analyzer}
	for _, a := range others {
		if slices.Contains(failed, a.Name) {
			retry = append(retry, a)
		}
	}
	pf, failed := diagnostics(retry, shaped)
	maps.Copy(found, pf)
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

// overlay is the head tree with the changed files' contents, which the
// linter was given (tree may be nil: then the changed files are the tree).
type overlay struct {
	tree  Tree
	files map[string]*File
}

// ReadFile implements gomod.Tree.
func (o overlay) ReadFile(ctx context.Context, p string) ([]byte, error) {
	if f, ok := o.files[p]; ok {
		return f.Content, nil
	}
	if o.tree == nil {
		return nil, fmt.Errorf("%s: %w", p, review.ErrNotFound)
	}
	b, err := o.tree.ReadFile(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", p, err)
	}
	return b, nil
}

// ListFiles implements gomod.Tree: the tree's files and the changed ones.
func (o overlay) ListFiles(ctx context.Context) ([]string, error) {
	var all []string
	if o.tree != nil {
		var err error
		if all, err = o.tree.ListFiles(ctx); err != nil {
			return nil, fmt.Errorf("list files: %w", err)
		}
	}
	seen := map[string]bool{}
	for _, p := range all {
		seen[p] = true
	}
	for _, p := range sortedKeys(o.files) {
		if !seen[p] {
			all = append(all, p)
		}
	}
	return all, nil
}
