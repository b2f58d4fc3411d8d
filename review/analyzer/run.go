package analyzer

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/diff"
)

// Result is what one analyzer found in a Run.
type Result struct {
	Findings []review.Finding
	// Err is the analyzer's failure, or the context's error when the run
	// was canceled before it finished.
	Err error
	// Elapsed is the time the analyzer took: for a FileAnalyzer, the sum
	// of its calls, which run on several goroutines.
	Elapsed time.Duration
}

// preparer is an analyzer that must be made ready (its rules built)
// before its first file, and fails as a whole when it cannot.
type preparer interface {
	prepare() error
}

// maxFileWorkers bounds the goroutines of one review's pass over its files,
// whatever the host's cores: each holds a file's lines and its analyzers'
// state, and the peak heap of a 40 MB diff grew with them (2.5 times the
// diff with 2, 3.2 with 128). A server reviews several pull requests at
// once, so more cores still serve it.
const maxFileWorkers = 8

// Run runs analyzers over files and returns their results in the order of
// analyzers. The FileAnalyzers share one pass over the files, on up to
// GOMAXPROCS goroutines (at most maxFileWorkers): each file's added lines are computed once, read by
// every FileAnalyzer, and dropped before the goroutine takes the next file,
// so the pass holds the added lines of at most one file per goroutine. The
// others run Analyze, each on its own goroutine. Each analyzer's findings
// are in file order, whatever the goroutine that found them.
func Run(ctx context.Context, analyzers []Analyzer, files []*diff.File) []Result {
	results := make([]Result, len(analyzers))
	var (
		perFile []FileAnalyzer
		slots   []int // perFile[i] is analyzers[slots[i]]
		wg      sync.WaitGroup
	)
	for i, a := range analyzers {
		if p, ok := a.(preparer); ok {
			if err := p.prepare(); err != nil {
				results[i].Err = err
				continue
			}
		}
		if fa, ok := a.(FileAnalyzer); ok {
			perFile, slots = append(perFile, fa), append(slots, i)
			continue
		}
		wg.Go(func() {
			start := time.Now()
			f, err := a.Analyze(ctx, files)
			results[i] = Result{Findings: f, Err: err, Elapsed: time.Since(start)}
		})
	}
	if len(perFile) > 0 {
		for j, r := range filePass(ctx, perFile, files) {
			results[slots[j]] = r
		}
	}
	wg.Wait()
	return results
}

// filePass runs the FileAnalyzers over files, one file at a time per
// goroutine.
func filePass(ctx context.Context, analyzers []FileAnalyzer, files []*diff.File) []Result {
	n := len(analyzers)
	found := make([][]review.Finding, len(files)*n) // [file*n + analyzer]
	elapsed := make([]atomic.Int64, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range max(1, min(runtime.GOMAXPROCS(0), maxFileWorkers, len(files))) {
		wg.Go(func() {
			var buf []AddedLine // reused: one file's lines at a time
			for {
				i := int(next.Add(1)) - 1
				if i >= len(files) || ctx.Err() != nil {
					return
				}
				f := files[i]
				if !scannable(f) {
					continue
				}
				buf = addedLines(buf, f)
				a := &Added{File: f, Lines: buf}
				for j, an := range analyzers {
					start := time.Now()
					found[i*n+j] = an.AnalyzeFile(ctx, a)
					elapsed[j].Add(int64(time.Since(start)))
				}
			}
		})
	}
	wg.Wait()
	out := make([]Result, n)
	for j := range out {
		out[j] = Result{Err: ctx.Err(), Elapsed: time.Duration(elapsed[j].Load())}
		for i := range files {
			out[j].Findings = append(out[j].Findings, found[i*n+j]...)
		}
	}
	return out
}
