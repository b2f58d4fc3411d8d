package analyzer

import (
	"context"
	"path"
	"regexp"
	"strings"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/diff"
)

// PrivateKeys finds PEM private-key headers in added lines. gitleaks has a
// rule for whole PEM blocks; this one also catches a header whose body is
// malformed. A header is a finding only with key material after it (see
// hasKeyMaterial); alone it is at most info, and never blocks. Duplicates
// of a gitleaks hit are merged by the verifier. The finding cites no code:
// the header's line may hold the key itself.
type PrivateKeys struct {
	// policy is the repository's (ForRepo); nil: the defaults.
	policy *secretPolicy
}

var pemHeader = regexp.MustCompile(`-----BEGIN ((RSA|DSA|EC|OPENSSH|ENCRYPTED|PGP) )?PRIVATE KEY( BLOCK)?-----`)

// keyLookahead is how many added lines after a header are read for its
// key material.
const keyLookahead = 4

// Name implements Analyzer.
func (PrivateKeys) Name() string { return "analyzer:private-keys" }

// Analyze implements Analyzer.
func (a PrivateKeys) Analyze(ctx context.Context, files []*diff.File) ([]review.Finding, error) {
	return analyzeEach(ctx, a, files)
}

// AnalyzeFile implements FileAnalyzer.
func (a PrivateKeys) AnalyzeFile(_ context.Context, ad *Added) []review.Finding {
	if a.policy.pathAllowed(ad.File.Path()) {
		return nil
	}
	var out []review.Finding
	for i, l := range ad.Lines {
		if !strings.Contains(l.Text, "PRIVATE KEY") || !pemHeader.MatchString(l.Text) ||
			a.policy.ignored(ad.File.Path(), privateKeyRule, l.Num) {
			continue
		}
		body := []string{l.Text}
		for j, next := range ad.Lines[i+1 : min(len(ad.Lines), i+1+keyLookahead)] {
			if next.Hunk != l.Hunk || next.Num != l.Num+j+1 {
				break // only the lines right after the header
			}
			body = append(body, next.Text)
		}
		fd := finding(a.Name(), ad.File, l.Num, l.Num, review.SeverityCritical, review.CategorySecurity, 0.95,
			"Private key committed",
			"An added line starts a PEM private key. A private key in the repository is compromised for everyone who can read it.",
			"Remove the key from the change and its history, revoke it, and load keys from a secret store.",
			"")
		out = append(out, a.policy.fixture(keyFinding(fd, hasKeyMaterial(body))))
	}
	return out
}

// ConflictMarkers finds unresolved merge-conflict blocks in added lines. A
// bare "=======" is only reported inside a <<<<<<< ... >>>>>>> block, since
// reStructuredText and Markdown use it as a heading underline.
type ConflictMarkers struct{}

// Name implements Analyzer.
func (ConflictMarkers) Name() string { return "analyzer:conflict-markers" }

// Analyze implements Analyzer.
func (a ConflictMarkers) Analyze(ctx context.Context, files []*diff.File) ([]review.Finding, error) {
	return analyzeEach(ctx, a, files)
}

// AnalyzeFile reports one finding per conflict block, spanning the block
// when it sits in one hunk, and one per stray closing marker.
func (a ConflictMarkers) AnalyzeFile(_ context.Context, ad *Added) []review.Finding {
	var (
		out  []review.Finding
		open *AddedLine
	)
	report := func(start, end AddedLine) {
		out = append(out, finding(a.Name(), ad.File, start.Num, end.Num, review.SeverityCritical, review.CategoryBug, 1,
			"Unresolved merge conflict",
			"The change adds merge-conflict markers: the file will not build or will ship both sides of the conflict.",
			"Resolve the conflict and remove the <<<<<<<, ======= and >>>>>>> lines.",
			strings.TrimSpace(start.Text)))
	}
	for i := range ad.Lines {
		l := &ad.Lines[i]
		switch {
		case isMarker(l.Text, "<<<<<<<"):
			if open != nil {
				report(*open, *open)
			}
			open = l
		case isMarker(l.Text, ">>>>>>>"):
			switch {
			case open == nil:
				report(*l, *l)
			case open.Hunk == l.Hunk:
				report(*open, *l)
			default:
				report(*open, *open)
			}
			open = nil
		}
	}
	if open != nil {
		report(*open, *open)
	}
	return out
}

// isMarker reports whether text is a conflict marker line: the seven
// characters followed by nothing or a space and a label.
func isMarker(text, marker string) bool {
	rest, ok := strings.CutPrefix(text, marker)
	return ok && (rest == "" || rest[0] == ' ')
}

// DebugStatements finds interactive-debugger statements left in code:
// JavaScript/TypeScript "debugger;", Ruby binding.pry/byebug, Python
// breakpoint()/pdb.set_trace(). Only whole statements in files of the
// matching language count.
type DebugStatements struct{}

var (
	jsDebugger   = regexp.MustCompile(`^\s*debugger\s*;?\s*$`)
	rubyDebugger = regexp.MustCompile(`^\s*(binding\.(pry|irb)|byebug|debugger)\s*$`)
	pyDebugger   = regexp.MustCompile(`^\s*(breakpoint\(\)|(import i?pdb\s*;\s*)?i?pdb\.set_trace\(\))\s*(#.*)?$`)
)

// debugRule returns the debugger-statement pattern for a file extension, or
// nil for languages not checked.
func debugRule(ext string) *regexp.Regexp {
	switch ext {
	case "js", "jsx", "ts", "tsx", "mjs", "cjs", "vue":
		return jsDebugger
	case "rb":
		return rubyDebugger
	case "py":
		return pyDebugger
	}
	return nil
}

// Name implements Analyzer.
func (DebugStatements) Name() string { return "analyzer:debug-statements" }

// Analyze implements Analyzer.
func (a DebugStatements) Analyze(ctx context.Context, files []*diff.File) ([]review.Finding, error) {
	return analyzeEach(ctx, a, files)
}

// AnalyzeFile implements FileAnalyzer.
func (a DebugStatements) AnalyzeFile(_ context.Context, ad *Added) []review.Finding {
	re := debugRule(ext(ad.File.Path()))
	if re == nil {
		return nil
	}
	return eachLine(ad, func(f *diff.File, l AddedLine) *review.Finding {
		if !re.MatchString(l.Text) {
			return nil
		}
		fd := finding(a.Name(), f, l.Num, l.Num, review.SeverityWarning, review.CategoryQuality, 0.95,
			"Debugger statement left in",
			"The change adds an interactive debugger breakpoint; it stops the program wherever a debugger or console is attached.",
			"Remove the breakpoint before merging.",
			strings.TrimSpace(l.Text))
		return &fd
	})
}

// FocusedTests finds focused tests (it.only, describe.only, fit, fdescribe,
// test.only) in JavaScript/TypeScript test files: they silently skip every
// other test of the suite in CI.
type FocusedTests struct{}

var focusedTest = regexp.MustCompile(`(^|[^.\w])((describe|it|test|context|suite)\.only|fdescribe|fit)\s*\(`)

// Name implements Analyzer.
func (FocusedTests) Name() string { return "analyzer:focused-tests" }

// Analyze implements Analyzer.
func (a FocusedTests) Analyze(ctx context.Context, files []*diff.File) ([]review.Finding, error) {
	return analyzeEach(ctx, a, files)
}

// AnalyzeFile implements FileAnalyzer.
func (a FocusedTests) AnalyzeFile(_ context.Context, ad *Added) []review.Finding {
	if !isJSTest(ad.File.Path()) {
		return nil
	}
	return eachLine(ad, func(f *diff.File, l AddedLine) *review.Finding {
		if !focusedTest.MatchString(l.Text) {
			return nil
		}
		fd := finding(a.Name(), f, l.Num, l.Num, review.SeverityWarning, review.CategoryBug, 0.9,
			"Focused test committed",
			"A focused test (.only / fit / fdescribe) makes the runner skip every other test in the suite, so CI passes without running them.",
			"Remove the focus modifier.",
			strings.TrimSpace(l.Text))
		return &fd
	})
}

// isJSTest reports whether p is a JavaScript/TypeScript test file.
func isJSTest(p string) bool {
	switch ext(p) {
	case "js", "jsx", "ts", "tsx", "mjs", "cjs":
	default:
		return false
	}
	base := strings.ToLower(path.Base(p))
	return strings.Contains(base, ".test.") || strings.Contains(base, ".spec.") ||
		strings.Contains("/"+p, "/__tests__/")
}

// EnvFiles flags committed dotenv files (.env, .env.local, ...), which hold
// local secrets by convention. Templates (.env.example, .env.sample,
// .env.template, .env.dist) are meant to be committed and pass.
type EnvFiles struct{}

// Name implements Analyzer.
func (EnvFiles) Name() string { return "analyzer:env-files" }

// Analyze implements Analyzer.
func (a EnvFiles) Analyze(ctx context.Context, files []*diff.File) ([]review.Finding, error) {
	return analyzeEach(ctx, a, files)
}

// AnalyzeFile anchors one finding on the first added line of a dotenv
// file.
func (a EnvFiles) AnalyzeFile(_ context.Context, ad *Added) []review.Finding {
	if !isDotenv(ad.File.Path()) || len(ad.Lines) == 0 {
		return nil
	}
	first := ad.Lines[0].Num
	// Heuristic (below ExactConfidence): a dotenv file usually, not
	// always, holds secrets.
	return []review.Finding{finding(a.Name(), ad.File, first, first, review.SeverityWarning, review.CategorySecurity, 0.85,
		"Environment file committed",
		"Dotenv files hold local configuration and secrets and are normally kept out of version control.",
		"Remove the file from the change, add it to .gitignore and commit a .env.example with placeholder values instead.",
		"")}
}

// isDotenv reports whether p names a dotenv file that is not a template.
func isDotenv(p string) bool {
	base := strings.ToLower(path.Base(p))
	if base != ".env" && !strings.HasPrefix(base, ".env.") {
		return false
	}
	for _, t := range []string{"example", "sample", "template", "dist", "defaults"} {
		if strings.HasSuffix(base, "."+t) {
			return false
		}
	}
	return true
}

// eachLine calls check on every added line of a file and collects the
// findings it returns.
func eachLine(ad *Added, check func(*diff.File, AddedLine) *review.Finding) []review.Finding {
	var out []review.Finding
	for _, l := range ad.Lines {
		if fd := check(ad.File, l); fd != nil {
			out = append(out, *fd)
		}
	}
	return out
}
