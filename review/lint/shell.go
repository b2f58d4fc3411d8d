package lint

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/mergeguard/mergeguard/review"
)

// shellTimeout bounds one shellcheck process.
const shellTimeout = 10 * time.Second

// Shell checks shell scripts with shellcheck when it is installed. The
// script goes to shellcheck on its standard input: shellcheck parses it and
// runs nothing, and it is told not to read an rc file or follow sourced
// files.
type Shell struct {
	shellcheck string
}

// NewShell returns the shell linter; shellcheck is the path of the
// shellcheck executable, "" when it is not installed (every script is then
// reported unchecked in a note).
func NewShell(shellcheck string) *Shell { return &Shell{shellcheck: shellcheck} }

// Name implements Linter.
func (*Shell) Name() string { return AgentPrefix + "shellcheck" }

// Applies implements Linter: *.sh, *.bash, *.ksh and *.dash files.
func (*Shell) Applies(p string) bool { return dialect(p) != "" }

// dialect is the shell shellcheck is told a file is written for.
func dialect(p string) string {
	switch {
	case strings.HasSuffix(p, ".sh"):
		return "sh" // a #! line naming bash overrides it
	case strings.HasSuffix(p, ".bash"):
		return "bash"
	case strings.HasSuffix(p, ".ksh"):
		return "ksh"
	case strings.HasSuffix(p, ".dash"):
		return "dash"
	}
	return ""
}

// Lint implements Linter.
func (s *Shell) Lint(ctx context.Context, files []File, _ Tree) (Report, error) {
	if s.shellcheck == "" {
		return Report{Notes: []string{skippedNote(s.Name(), len(files), "shellcheck is not installed")}}, nil
	}
	var rep Report
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		fs, err := s.lint(ctx, f)
		if err != nil {
			rep.Notes = append(rep.Notes, fmt.Sprintf("shellcheck could not check %s: %v", f.Path(), err))
			continue
		}
		rep.Findings = append(rep.Findings, onAdded(f.Diff, fs)...)
	}
	return rep, nil
}

// comment is one entry of shellcheck's json1 output.
type comment struct {
	Line    int    `json:"line"`
	Level   string `json:"level"`
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (s *Shell) lint(ctx context.Context, f File) ([]review.Finding, error) {
	ctx, cancel := context.WithTimeout(ctx, shellTimeout)
	defer cancel()
	// The executable is the one found on PATH at start; the arguments are
	// fixed but for the dialect, one of four words.
	cmd := exec.CommandContext(ctx, s.shellcheck, "--format=json1", "--norc", "--shell="+dialect(f.Path()), "-") //nolint:gosec // see above
	cmd.Stdin = bytes.NewReader(f.Content)
	cmd.Env = []string{} // nothing of the server's environment
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var exit *exec.ExitError
	if err != nil && (!errors.As(err, &exit) || exit.ExitCode() != 1) { // 1: comments were found
		return nil, fmt.Errorf("shellcheck: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	var res struct {
		Comments []comment `json:"comments"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		return nil, fmt.Errorf("shellcheck output: %w", err)
	}
	fs := make([]review.Finding, 0, len(res.Comments))
	for _, c := range res.Comments {
		fs = append(fs, s.finding(f, c))
	}
	return fs, nil
}

// finding maps shellcheck's levels: an error (the script does not parse,
// or cannot work) is exact; its warnings, infos and style notes are
// heuristic.
func (s *Shell) finding(f File, c comment) review.Finding {
	sev, cat, conf := review.SeverityStyle, review.CategoryQuality, heuristic
	switch c.Level {
	case "error":
		sev, cat, conf = review.SeverityWarning, review.CategoryBug, exact
	case "warning":
		sev, cat = review.SeverityWarning, review.CategoryBug
	case "info":
		sev = review.SeverityInfo
	}
	desc := fmt.Sprintf("%s\n\nReported by shellcheck: https://www.shellcheck.net/wiki/SC%d", c.Message, c.Code)
	return finding(s.Name(), f, c.Line, sev, cat, conf, fmt.Sprintf("SC%d: %s", c.Code, title(c.Message)), desc)
}
