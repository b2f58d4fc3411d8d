package pipeline

import (
	"github.com/mergeguard/mergeguard/review/analyzer"
	"github.com/mergeguard/mergeguard/review/budget"
)

// testTokenizers are the token counters of the package's tests, shared so
// that each vocabulary is loaded once per test binary: a pipeline without
// a Counter loads its own, about 0.4 s, or 1.2 s under the race detector,
// which dozens of tests paid each. Shared as Tokenizers is meant to be
// (one per process, see budget.Tokenizers).
var testTokenizers = budget.NewTokenizers()

// testAnalyzers are the built-in analyzers, shared by the package's tests
// as a process shares them: a pipeline without Analyzers builds its own,
// and its secret scan compiles gitleaks' rules on first use (43% of the
// package's test CPU when each pipeline did).
var testAnalyzers = analyzer.Builtin()

// newTest is New with the shared counters when deps names no Counter, and
// the shared built-in analyzers when it names no Analyzers; it counts and
// analyzes as New's defaults do (budget.Tokenizers.ForModel of
// deps.Config.Model, analyzer.Builtin).
func newTest(deps Deps) *Pipeline {
	if deps.Counter == nil {
		deps.Counter = testTokenizers.ForModel(deps.Config.Model)
	}
	if deps.Analyzers == nil {
		deps.Analyzers = testAnalyzers
	}
	return New(deps)
}
