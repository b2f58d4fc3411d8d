// Package lint runs established linters over the whole files a change
// touches, as agents beside the model: GitHub Actions workflows with
// actionlint (and shellcheck when it is installed), Dockerfiles with
// BuildKit's build checks (package buildcheck) and hadolint's rules, Go
// with go vet's analysis passes, and shell scripts with shellcheck when it
// is installed.
//
// A linter reads each file whole at the head revision, because its rules
// need the whole file (a workflow's jobs, a Dockerfile's stages, a Go
// package's declarations), and reports only what falls on the lines the
// change added: what was wrong before the change is not the change's
// finding. A linter that cannot run says so in a note, never silently.
package lint

import (
	"context"
	"fmt"
	"path"
	"strings"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/diff"
	"github.com/mergeguard/mergeguard/review/gomod"
)

// Confidence levels of linter findings. A rule that checks the file's
// structure (a parse error, an undefined job, a vet check) is exact; a
// style or heuristic rule (shellcheck's suggestions, a secret-looking
// variable name) is below the exact line, so it is labelled likely at best
// and never blocks a merge on its own (see analyzer.ExactConfidence, which
// these values respect).
const (
	exact     = 0.9
	heuristic = 0.7
)

// MaxFileBytes bounds the size of a file a linter reads: larger files are
// skipped with a note.
const MaxFileBytes = 1 << 20

// File is one changed file: its diff and, when it could be read, its whole
// content at the head revision.
type File struct {
	Diff    *diff.File
	Content []byte
}

// Path is the file's path at the head revision.
func (f File) Path() string { return f.Diff.Path() }

// Tree reads the repository at the head revision, for linters that need
// files beside the changed ones (a Go package's other files).
type Tree interface {
	// ReadFile returns a file's content, or an error wrapping
	// review.ErrNotFound.
	ReadFile(ctx context.Context, path string) ([]byte, error)
	// ListFiles lists every file path of the repository.
	ListFiles(ctx context.Context) ([]string, error)
}

// Report is what a linter found: findings on added lines, and notes for
// the review about what it could not check.
type Report struct {
	Findings []review.Finding
	Notes    []string
}

// Linter checks whole files of one kind.
type Linter interface {
	// Name is the agent name, e.g. "analyzer:actionlint".
	Name() string
	// Applies reports whether the linter checks the file at path.
	Applies(path string) bool
	// Lint checks files (all of which it applies to and whose content
	// was read). tree may be nil when the change has no repository.
	Lint(ctx context.Context, files []File, tree Tree) (Report, error)
}

// Sniffer is a Linter that also checks files it cannot choose by path
// alone, such as a script without an extension whose #! line names a shell.
// The caller reads whole, at the head revision, each file that Applies did
// not choose and MayApply did, and gives Lint those whose content
// AppliesContent accepts (a file it cannot read is not one of them).
type Sniffer interface {
	Linter
	// MayApply reports whether the file at path, which Applies did not
	// choose, is worth reading to ask AppliesContent.
	MayApply(path string) bool
	// AppliesContent reports whether the linter checks a file with this
	// content (its whole content at the head revision).
	AppliesContent(content []byte) bool
}

// Default returns the linters MergeGuard runs. shellcheck is the path of
// the shellcheck executable, "" when it is not installed; std is the Go
// standard library to type-check imports of it, nil when the Go
// installation is not on this machine (see NewGoVet); checks runs
// BuildKit's build checks on Dockerfiles (package buildcheck's Run), nil
// for the best-practice rules alone.
func Default(shellcheck string, std *gomod.Std, checks BuildChecks) []Linter {
	return []Linter{
		NewActions(shellcheck),
		Dockerfile{Checks: checks},
		NewGoVet(std, gomod.Limits{}),
		NewShell(shellcheck),
	}
}

// added returns the set of new-side line numbers f's diff added.
func added(f *diff.File) map[int]bool {
	out := map[int]bool{}
	for _, h := range f.Hunks {
		for _, l := range h.Lines {
			if l.Kind == diff.Add {
				out[int(l.NewLine)] = true
			}
		}
	}
	return out
}

// onAdded keeps the findings whose first line the change added.
func onAdded(f *diff.File, fs []review.Finding) []review.Finding {
	if len(fs) == 0 {
		return nil
	}
	lines := added(f)
	var out []review.Finding
	for _, x := range fs {
		if lines[x.LineStart] {
			out = append(out, x)
		}
	}
	return out
}

// finding builds a RIGHT-side finding of agent at line of f's content.
func finding(agent string, f File, line int, sev review.Severity, cat review.Category, conf float64, title, desc string) review.Finding {
	return review.Finding{
		FilePath:    f.Path(),
		LineStart:   line,
		LineEnd:     line,
		Side:        review.SideRight,
		Severity:    sev,
		Category:    cat,
		Title:       title,
		Description: desc,
		Confidence:  conf,
		CodeSnippet: lineOf(f.Content, line),
		Agent:       agent,
	}
}

// lineOf returns line n (1-based) of content, trimmed, or "".
func lineOf(content []byte, n int) string {
	if n < 1 {
		return ""
	}
	s := string(content)
	for i := 1; i < n; i++ {
		j := strings.IndexByte(s, '\n')
		if j < 0 {
			return ""
		}
		s = s[j+1:]
	}
	if j := strings.IndexByte(s, '\n'); j >= 0 {
		s = s[:j]
	}
	return strings.TrimSpace(strings.TrimSuffix(s, "\r"))
}

// title makes a finding's title from a linter's message: its first
// sentence, without the period, at most 100 bytes.
func title(msg string) string {
	t, _, _ := strings.Cut(strings.TrimSpace(msg), "\n")
	t, _, _ = strings.Cut(t, ". ")
	t = strings.TrimSuffix(t, ".")
	if len(t) > 100 {
		t = strings.ToValidUTF8(t[:97], "") + "..."
	}
	return t
}

// skippedNote says that n files were not checked and why.
func skippedNote(name string, n int, why string) string {
	s := "s"
	if n == 1 {
		s = ""
	}
	return fmt.Sprintf("%s: %d file%s not checked: %s.", strings.TrimPrefix(name, review.AnalyzerPrefix), n, s, why)
}

// base returns the lower-case base name of p.
func base(p string) string { return strings.ToLower(path.Base(p)) }
