package lint_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mergeguard/mergeguard/review/lint"
)

// shellCodes are a report's findings as "line:SCnnnn".
func shellCodes(rep lint.Report) []string {
	out := []string{}
	for _, f := range rep.Findings {
		code, _, _ := strings.Cut(f.Title, ":")
		out = append(out, fmt.Sprint(f.LineStart)+":"+code)
	}
	return out
}

// cliCodes runs the shellcheck CLI on testdata/shell/name copied to path
// (so it sees the file's own name, as its author runs it), with args
// before the file, and returns its findings as "line:SCnnnn".
func cliCodes(t *testing.T, sc, name, path string, args ...string) []string {
	t.Helper()
	p := filepath.Join(t.TempDir(), path)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, read(t, filepath.Join("shell", name)), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(sc, append(append([]string{"--format=json1", "--norc"}, args...), p)...)
	out, err := cmd.Output()
	var exit *exec.ExitError
	if err != nil && (!errors.As(err, &exit) || exit.ExitCode() != 1) {
		t.Fatalf("shellcheck %s: %v", name, err)
	}
	var res struct {
		Comments []struct{ Line, Code int } `json:"comments"`
	}
	if err := json.NewDecoder(bytes.NewReader(out)).Decode(&res); err != nil {
		t.Fatal(err)
	}
	codes := []string{}
	for _, c := range res.Comments {
		codes = append(codes, fmt.Sprintf("%d:SC%d", c.Line, c.Code))
	}
	return codes
}

// posixOnly are the findings of the rotate script checked as POSIX sh:
// local, $RANDOM, [[ ]] and &> are bash, and the unquoted $1 is wrong in
// every shell.
var posixOnly = []string{"4:SC3043", "4:SC3028", "5:SC3010", "9:SC3020", "10:SC2086"}

// TestShellDialect: shellcheck checks a script in the shell its #! line or
// a "# shellcheck shell=" directive names, as the shellcheck CLI does on
// the file, and in the shell its extension names (sh for *.sh) only when
// it has neither. Each row is the same script under another first line.
func TestShellDialect(t *testing.T) {
	sc := shellcheck(t)
	tests := []struct {
		name, path string
		want       []string
		cliArgs    []string // what the CLI needs to check the file as MergeGuard does
		note       string
	}{
		{name: "bash.sh", path: "scripts/bash.sh", want: []string{"10:SC2086"}},
		{name: "usr-bash.sh", path: "scripts/usr-bash.sh", want: []string{"10:SC2086"}},
		{name: "env-bash.sh", path: "scripts/env-bash.sh", want: []string{"10:SC2086"}},
		{name: "env-split.sh", path: "scripts/env-split.sh", want: []string{"10:SC2086"}},
		{name: "ksh.sh", path: "scripts/ksh.sh", want: []string{"10:SC2086"}},
		{name: "posix.sh", path: "scripts/posix.sh", want: posixOnly},
		{name: "dash.sh", path: "scripts/dash.sh", want: []string{"4:SC3028", "5:SC3010", "9:SC3020", "10:SC2086"}},
		{name: "directive.sh", path: "scripts/directive.sh", want: []string{"10:SC2086"}},
		{name: "directive-over-shebang.sh", path: "scripts/directive-over-shebang.sh", want: []string{"11:SC2086"}},
		{name: "rotate", path: "bin/rotate", want: []string{"10:SC2086"}},
		{name: "plain.bash", path: "scripts/plain.bash", want: []string{"9:SC2086"}},
		// Neither #! line nor directive: *.sh is POSIX sh (the CLI says
		// only that it cannot tell, SC2148, and checks it as bash).
		{name: "plain.sh", path: "scripts/plain.sh", want: []string{"3:SC3043", "3:SC3028", "4:SC3010", "8:SC3020", "9:SC2086"}, cliArgs: []string{"--shell=sh"}},
		// shellcheck does not check zsh: a note, not a finding.
		{name: "zsh.sh", path: "scripts/zsh.sh", want: []string{}, note: "shellcheck could not check scripts/zsh.sh: its #! line names a shell shellcheck does not check (it checks sh, bash, dash and ksh)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep, err := lint.NewShell(sc).Lint(context.Background(), []lint.File{added(t, tt.path, read(t, filepath.Join("shell", tt.name)))}, nil)
			if err != nil {
				t.Fatal(err)
			}
			got := shellCodes(rep)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
			if tt.note == "" {
				if diff := cmp.Diff(cliCodes(t, sc, tt.name, tt.path, tt.cliArgs...), got); diff != "" {
					t.Errorf("findings differ from the shellcheck CLI's (-cli +mergeguard):\n%s", diff)
				}
			}
			var notes []string
			if tt.note != "" {
				notes = []string{tt.note}
			}
			if diff := cmp.Diff(notes, rep.Notes); diff != "" {
				t.Errorf("notes (-want +got):\n%s", diff)
			}
		})
	}
}

// TestShellUntouchedShebang: the #! line decides the dialect even when the
// change does not touch it, because the linter reads the whole file.
func TestShellUntouchedShebang(t *testing.T) {
	sc := shellcheck(t)
	for _, tt := range []struct {
		name string
		want []string
	}{{"bash.sh", []string{}}, {"posix.sh", []string{"4:SC3043", "4:SC3028"}}} {
		f := changedLine(t, "scripts/"+tt.name, read(t, filepath.Join("shell", tt.name)), 4)
		rep, err := lint.NewShell(sc).Lint(context.Background(), []lint.File{f}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, shellCodes(rep)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
}

// TestShellByContent: a file without an extension is a shell script when
// its #! line names sh, bash, dash or ksh, directly or through env.
func TestShellByContent(t *testing.T) {
	var s lint.Sniffer = lint.NewShell("")
	tests := []struct {
		path, content string
		may, checks   bool
	}{
		{"bin/rotate", "#!/usr/bin/env bash\necho\n", true, true},
		{"bin/rotate", "#!/bin/bash -e\n", true, true},
		{"bin/rotate", "#! /bin/sh\n", true, true},
		{"bin/rotate", "#!/bin/dash\n", true, true},
		{"bin/rotate", "#!/usr/bin/ksh\n", true, true},
		{"bin/rotate", "#!/usr/bin/env -S bash -e\n", true, true},
		{"bin/rotate", "#!/usr/bin/env -i PATH=/bin sh\n", true, true},
		{"bin/rotate", "#!/usr/bin/env -Sbash -e\n", true, true},
		{"bin/rotate", "#!/usr/bin/env zsh\n", true, false},
		{"bin/rotate", "#!/usr/bin/env python3\nprint()\n", true, false},
		{"bin/rotate", "#!/bin/bashful\n", true, false},
		{"bin/rotate", "echo no shebang\n#!/bin/bash\n", true, false},
		{"bin/rotate", "", true, false},
		{"Makefile", "all:\n", true, false},
		{"scripts/run.py", "#!/usr/bin/env bash\n", false, false},
		{".envrc", "#!/usr/bin/env bash\n", false, false},
	}
	for _, tt := range tests {
		may := s.MayApply(tt.path)
		checks := may && s.AppliesContent([]byte(tt.content))
		if may != tt.may || checks != tt.checks {
			t.Errorf("%s %q: may %v checks %v, want %v %v", tt.path, tt.content, may, checks, tt.may, tt.checks)
		}
	}
}
