package main

import (
	"bytes"
	"context"
	"fmt"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"golang.org/x/tools/go/packages"
)

// Generate computes the truth of commit of the repository in gitDir (a
// bare or ordinary git directory): it clones gitDir (sharing its objects,
// so that gitDir itself is never written) into a temporary directory,
// checks commit out, downloads the module's dependencies and loads its
// packages with their tests.
func Generate(ctx context.Context, gitDir, repo, commit string) (truthFile, error) {
	t := truthFile{Repo: repo, Commit: commit}
	tmp, err := os.MkdirTemp("", "ctxtruth-")
	if err != nil {
		return t, err
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	dir := filepath.Join(tmp, "src")
	if _, err := git(ctx, "", "clone", "-q", "--shared", "--no-checkout", gitDir, dir); err != nil {
		return t, err
	}
	if _, err := git(ctx, dir, "checkout", "-q", "--detach", commit); err != nil {
		return t, err
	}
	text, err := git(ctx, dir, "diff", "-U0", "-M", "--no-color", "--no-ext-diff", commit+"^", commit, "--", "*.go")
	if err != nil {
		return t, err
	}
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return t, err
	}
	changed := changedLines(text, func(p string) int { return countLines(filepath.Join(root, p)) })
	if len(changed) == 0 {
		t.Notes = append(t.Notes, "no Go file of the head changed")
		return t, nil
	}
	env := append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off", "GOTOOLCHAIN=local")
	if out, err := goCmd(ctx, root, env, "mod", "download"); err != nil {
		t.Notes = append(t.Notes, "go mod download failed: "+firstLine(out, err))
	}
	cfg := &packages.Config{Context: ctx, Mode: loadMode, Dir: root, Env: env, Tests: true, Fset: token.NewFileSet()}
	pkgs, err := packages.Load(cfg, "./...")
	if err != nil {
		return t, fmt.Errorf("load packages: %w", err)
	}
	t.Notes = append(t.Notes, loadNotes(pkgs)...)
	r := &resolver{root: root, fset: cfg.Fset, pkgs: pkgs, changed: changed}
	t.Definitions = r.definitions()
	t.Callers = r.callers(r.changedFuncs())
	return t, nil
}

// loadNotes notes the packages that did not load or type-check cleanly,
// at most maxNotes errors.
func loadNotes(pkgs []*packages.Package) []string {
	var notes []string
	n := 0
	packages.Visit(pkgs, nil, func(p *packages.Package) {
		for _, e := range p.Errors {
			if n < maxNotes {
				notes = append(notes, fmt.Sprintf("%s: %s", p.ID, e.Msg))
			}
			n++
		}
	})
	if n > maxNotes {
		notes = append(notes, fmt.Sprintf("and %d more package errors", n-maxNotes))
	}
	return notes
}

// git runs git in dir ("" for the current directory) and returns its
// standard output.
func git(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...) //nolint:gosec // fixed git subcommands on the pinned commits
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return string(out), nil
}

// goCmd runs the go command in dir and returns its combined output.
func goCmd(ctx context.Context, dir string, env []string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", args...) //nolint:gosec // go mod download in the checkout
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// firstLine is the first line of a command's output, or its error.
func firstLine(out string, err error) string {
	if l, _, _ := strings.Cut(strings.TrimSpace(out), "\n"); l != "" {
		return l
	}
	return err.Error()
}

// countLines is the number of lines of a file (0 when it cannot be read).
func countLines(path string) int {
	b, err := os.ReadFile(path)
	if err != nil || len(b) == 0 {
		return 0
	}
	n := bytes.Count(b, []byte("\n"))
	if b[len(b)-1] != '\n' {
		n++
	}
	return n
}
