package pipeline

import "github.com/mergeguard/mergeguard/review/budget"

// testTokenizers are the token counters of the package's tests, shared so
// that each vocabulary is loaded once per test binary: a pipeline without
// a Counter loads its own, about 0.4 s, or 1.2 s under the race detector,
// which dozens of tests paid each. Shared as Tokenizers is meant to be
// (one per process, see budget.Tokenizers).
var testTokenizers = budget.NewTokenizers()

// newTest is New with the shared counters when deps names no Counter; it
// counts as New's default does (budget.Tokenizers.ForModel of deps.Config.Model).
func newTest(deps Deps) *Pipeline {
	if deps.Counter == nil {
		deps.Counter = testTokenizers.ForModel(deps.Config.Model)
	}
	return New(deps)
}
