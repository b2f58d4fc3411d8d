package lint

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"path"
	"strings"
	"time"

	"github.com/mergeguard/mergeguard/review"
)

// shellTimeout bounds one shellcheck process.
const shellTimeout = 10 * time.Second

// Shell checks shell scripts with shellcheck when it is installed. The
// script goes to shellcheck on its standard input: shellcheck parses it and
// runs nothing, and it is told not to read an rc file or follow sourced
// files. A script is checked in the shell it names, as the shellcheck CLI
// checks it (see shellArgs); a file without an extension is a script when
// its #! line names sh, bash, dash or ksh.
type Shell struct {
	shellcheck string
}

// NewShell returns the shell linter; shellcheck is the path of the
// shellcheck executable, "" when it is not installed (every script is then
// reported unchecked in a note).
func NewShell(shellcheck string) *Shell { return &Shell{shellcheck: shellcheck} }

// Name implements Linter.
func (*Shell) Name() string { return review.AnalyzerPrefix + "shellcheck" }

// Applies implements Linter: *.sh, *.bash, *.ksh and *.dash files.
func (*Shell) Applies(p string) bool { return byExtension(p) != "" }

// MayApply implements Sniffer: a file whose name has no extension (and
// does not start with a dot) may be a script.
func (*Shell) MayApply(p string) bool {
	b := path.Base(p)
	return b != "" && !strings.Contains(b, ".")
}

// AppliesContent implements Sniffer: a file is a shell script when its #!
// line names sh, bash, dash or ksh, directly or through env.
func (*Shell) AppliesContent(content []byte) bool {
	switch shebangShell(content) {
	case "sh", "bash", "dash", "ksh":
		return true
	}
	return false
}

// byExtension is the shell a file's extension names, "" for none.
func byExtension(p string) string {
	switch {
	case strings.HasSuffix(p, ".sh"):
		return "sh"
	case strings.HasSuffix(p, ".bash"):
		return "bash"
	case strings.HasSuffix(p, ".ksh"):
		return "ksh"
	case strings.HasSuffix(p, ".dash"):
		return "dash"
	}
	return ""
}

// shellArgs is the --shell argument shellcheck needs for a file, if any.
// A script whose #! line or "# shellcheck shell=" directive names its
// shell gets none: shellcheck reads them from its input exactly as its CLI
// does from a file (a directive first, then the #! line), and an argument
// would override both. A script with neither is checked in the shell its
// extension names, sh when none.
func shellArgs(p string, content []byte) []string {
	if bytes.HasPrefix(content, []byte("#!")) || hasShellDirective(content) {
		return nil
	}
	sh := byExtension(p)
	if sh == "" {
		sh = "sh"
	}
	return []string{"--shell=" + sh}
}

// hasShellDirective reports whether a "# shellcheck shell=X" directive
// comes before the script's first command, where shellcheck honours it.
func hasShellDirective(content []byte) bool {
	for len(content) > 0 {
		var line []byte
		line, content, _ = bytes.Cut(content, []byte("\n"))
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		if line[0] != '#' {
			return false // a command
		}
		fields := strings.Fields(string(line[1:]))
		if len(fields) < 2 || fields[0] != "shellcheck" {
			continue
		}
		for _, f := range fields[1:] {
			if strings.HasPrefix(f, "shell=") {
				return true
			}
		}
	}
	return false
}

// shebangShell is the base name of the program a script's #! line runs,
// the program env runs when it is env (its options and NAME=value
// settings skipped), "" without a #! line.
func shebangShell(content []byte) string {
	if !bytes.HasPrefix(content, []byte("#!")) {
		return ""
	}
	line, _, _ := bytes.Cut(content[2:], []byte("\n"))
	if len(line) > 256 {
		line = line[:256]
	}
	fields := strings.Fields(string(line))
	if len(fields) == 0 {
		return ""
	}
	prog := path.Base(fields[0])
	if prog != "env" {
		return prog
	}
	for i := 1; i < len(fields); i++ {
		f := fields[i]
		switch {
		case f == "-u" || f == "--unset" || f == "-C" || f == "--chdir":
			i++ // the option's value
		case strings.HasPrefix(f, "-S") && len(f) > 2:
			return path.Base(f[2:]) // -Sbash
		case strings.HasPrefix(f, "-") || strings.Contains(f, "="):
		default:
			return path.Base(f)
		}
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

// unsupportedShell is shellcheck's code for a script whose #! line names
// a shell it does not check (zsh, fish, python, ...): its only comment on
// such a script.
const unsupportedShell = 1071

// errUnsupportedShell is the note on such a script: shellcheck's comment
// says nothing about the change.
var errUnsupportedShell = errors.New("its #! line names a shell shellcheck does not check (it checks sh, bash, dash and ksh)")

// comment is one entry of shellcheck's json1 output.
type comment struct {
	Line    int    `json:"line"`
	Column  int    `json:"column"`
	Level   string `json:"level"`
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (s *Shell) lint(ctx context.Context, f File) ([]review.Finding, error) {
	ctx, cancel := context.WithTimeout(ctx, shellTimeout)
	defer cancel()
	// The executable is the one found on PATH at start; the arguments are
	// fixed but for the dialect, one of four words or none.
	args := append(append([]string{"--format=json1", "--norc"}, shellArgs(f.Path(), f.Content)...), "-")
	cmd := exec.CommandContext(ctx, s.shellcheck, args...) //nolint:gosec // see above
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
		if c.Code == unsupportedShell {
			return nil, errUnsupportedShell
		}
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
	fd := finding(s.Name(), f, c.Line, sev, cat, conf, fmt.Sprintf("SC%d: %s", c.Code, title(c.Message)), desc)
	fd.Rule, fd.Column = fmt.Sprintf("SC%d", c.Code), c.Column
	return fd
}
