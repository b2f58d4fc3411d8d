package lint

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/rhysd/actionlint"

	"github.com/mergeguard/mergeguard/review"
)

// virtualRoot prefixes the paths actionlint sees. actionlint looks for a
// project (and its configuration) around a path that exists on disk; a
// workflow of a pull request is not on this machine's disk, and a path
// under a root that does not exist keeps actionlint away from the server's
// own working directory.
const virtualRoot = "/nonexistent-mergeguard-checkout/"

// Actions checks GitHub Actions workflows with actionlint: syntax, job
// dependencies, expressions and their types, untrusted input in scripts,
// action inputs, runner labels, permissions, and the workflow's run:
// scripts with shellcheck when it is installed.
type Actions struct {
	shellcheck string

	// actionlint's constructor sets a global of its colour library, so
	// the linter is made once and shared (its Lint is safe for
	// concurrent use).
	once   sync.Once
	linter *actionlint.Linter
	err    error
}

// NewActions returns the workflow linter; shellcheck is the path of the
// shellcheck executable, "" when it is not installed.
func NewActions(shellcheck string) *Actions { return &Actions{shellcheck: shellcheck} }

// Name implements Linter.
func (*Actions) Name() string { return review.AnalyzerPrefix + "actionlint" }

// Applies implements Linter: workflow files directly under
// .github/workflows, the only ones GitHub runs.
func (*Actions) Applies(p string) bool {
	rest, ok := strings.CutPrefix(p, ".github/workflows/")
	if !ok || strings.Contains(rest, "/") {
		return false
	}
	return strings.HasSuffix(rest, ".yml") || strings.HasSuffix(rest, ".yaml")
}

// Lint implements Linter.
func (a *Actions) Lint(ctx context.Context, files []File, _ Tree) (Report, error) {
	a.once.Do(func() {
		a.linter, a.err = actionlint.NewLinter(io.Discard, &actionlint.LinterOptions{
			Shellcheck: a.shellcheck, WorkingDir: virtualRoot, Color: actionlint.ColorOptionKindNever,
		})
	})
	if a.err != nil {
		return Report{}, fmt.Errorf("actionlint: %w", a.err)
	}
	l := a.linter
	var rep Report
	if a.shellcheck == "" {
		rep.Notes = append(rep.Notes, "actionlint: shellcheck is not installed, so the workflows' run: scripts were not checked.")
	}
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		errs, err := l.Lint(virtualRoot+f.Path(), f.Content, nil)
		if err != nil {
			rep.Notes = append(rep.Notes, fmt.Sprintf("actionlint could not check %s: %v", f.Path(), err))
			continue
		}
		var fs []review.Finding
		for _, e := range errs {
			fs = append(fs, a.finding(f, e))
		}
		rep.Findings = append(rep.Findings, onAdded(f.Diff, fs)...)
	}
	return rep, nil
}

// finding turns one actionlint error into a finding. Rules that check the
// workflow's structure are exact; shellcheck's suggestions are heuristic.
func (a *Actions) finding(f File, e *actionlint.Error) review.Finding {
	sev, cat, conf := review.SeverityWarning, review.CategoryBug, exact
	switch {
	case e.Kind == "shellcheck":
		sev, cat, conf = review.SeverityInfo, review.CategoryQuality, heuristic
	case strings.Contains(e.Message, "potentially untrusted"), e.Kind == "credentials", e.Kind == "permissions":
		cat = review.CategorySecurity
	case e.Kind == "deprecated-commands":
		cat = review.CategoryQuality
	}
	desc := fmt.Sprintf("%s\n\nReported by actionlint (rule %q).", e.Message, e.Kind)
	fd := finding(a.Name(), f, e.Line, sev, cat, conf, title(e.Message), desc)
	fd.Rule, fd.Column = e.Kind, e.Column
	return fd
}
