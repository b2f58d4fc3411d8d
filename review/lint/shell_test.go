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

// rotate is testdata/shell-rotate.txt, a bash function that rotates a
// log, under first lines (a #! line, a directive) that name its shell; ""
// for none.
func rotate(t *testing.T, first string) []byte {
	t.Helper()
	body := read(t, "shell-rotate.txt")
	if first == "" {
		return body
	}
	return append([]byte(first+"\n"), body...)
}

// shellCodes are a report's findings as "line:SCnnnn".
func shellCodes(rep lint.Report) []string {
	out := []string{}
	for _, f := range rep.Findings {
		code, _, _ := strings.Cut(f.Title, ":")
		out = append(out, fmt.Sprint(f.LineStart)+":"+code)
	}
	return out
}

// cliCodes runs the shellcheck CLI on content written to a file at path
// (so it sees the file's own name, as its author runs it), with args
// before the file, and returns its findings as "line:SCnnnn".
func cliCodes(t *testing.T, sc, path string, content []byte, args ...string) []string {
	t.Helper()
	p := filepath.Join(t.TempDir(), path)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, content, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(sc, append(append([]string{"--format=json1", "--norc"}, args...), p)...)
	out, err := cmd.Output()
	var exit *exec.ExitError
	if err != nil && (!errors.As(err, &exit) || exit.ExitCode() != 1) {
		t.Fatalf("shellcheck %s: %v", path, err)
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

// TestShellDialect: shellcheck checks a script in the shell its #! line or
// a "# shellcheck shell=" directive names, as the shellcheck CLI does on
// the file, and in the shell its extension names (sh for *.sh) only when
// it has neither. Each row is the same script under other first lines.
func TestShellDialect(t *testing.T) {
	sc := shellcheck(t)
	// What is wrong in every shell: the unquoted $1.
	bash := []string{"10:SC2086"}
	// And in POSIX sh: local, $RANDOM, [[ ]] and &> are bash.
	posix := []string{"4:SC3043", "4:SC3028", "5:SC3010", "9:SC3020", "10:SC2086"}
	tests := []struct {
		name, path, first string
		want              []string
		cliArgs           []string // what the CLI needs to check the file as MergeGuard does
		note              string
	}{
		{name: "bash", path: "scripts/rotate.sh", first: "#!/bin/bash", want: bash},
		{name: "usr bash with options", path: "scripts/rotate.sh", first: "#!/usr/bin/bash -eu", want: bash},
		{name: "env bash", path: "scripts/rotate.sh", first: "#!/usr/bin/env bash", want: bash},
		{name: "env -S bash", path: "scripts/rotate.sh", first: "#!/usr/bin/env -S bash -e", want: bash},
		{name: "ksh", path: "scripts/rotate.sh", first: "#!/bin/ksh", want: bash},
		{name: "sh", path: "scripts/rotate.sh", first: "#!/bin/sh", want: posix},
		{name: "sh as bash", path: "scripts/rotate.bash", first: "#!/bin/sh", want: posix},
		{name: "dash", path: "scripts/rotate.sh", first: "#!/bin/dash", want: []string{"4:SC3028", "5:SC3010", "9:SC3020", "10:SC2086"}},
		{name: "directive", path: "scripts/rotate.sh", first: "# shellcheck shell=bash", want: bash},
		{name: "directive over #!", path: "scripts/rotate.sh", first: "#!/bin/sh\n# shellcheck shell=bash", want: []string{"11:SC2086"}},
		{name: "no extension", path: "bin/rotate", first: "#!/usr/bin/env bash", want: bash},
		{name: "bash by extension", path: "scripts/rotate.bash", want: []string{"9:SC2086"}},
		// Neither #! line nor directive: *.sh is POSIX sh (the CLI says
		// only that it cannot tell, SC2148, and checks it as bash).
		{name: "sh by extension", path: "scripts/rotate.sh", want: []string{"3:SC3043", "3:SC3028", "4:SC3010", "8:SC3020", "9:SC2086"}, cliArgs: []string{"--shell=sh"}},
		// shellcheck does not check zsh: a note, not a finding.
		{name: "zsh", path: "scripts/rotate.sh", first: "#!/usr/bin/env zsh", want: []string{}, note: "shellcheck could not check scripts/rotate.sh: its #! line names a shell shellcheck does not check (it checks sh, bash, dash and ksh)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			content := rotate(t, tt.first)
			rep, err := lint.NewShell(sc).Lint(context.Background(), []lint.File{added(t, tt.path, content)}, nil)
			if err != nil {
				t.Fatal(err)
			}
			got := shellCodes(rep)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
			var notes []string
			if tt.note != "" {
				notes = []string{tt.note}
			} else if diff := cmp.Diff(cliCodes(t, sc, tt.path, content, tt.cliArgs...), got); diff != "" {
				t.Errorf("findings differ from the shellcheck CLI's (-cli +mergeguard):\n%s", diff)
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
		first string
		want  []string
	}{{"#!/bin/bash", []string{}}, {"#!/bin/sh", []string{"4:SC3043", "4:SC3028"}}} {
		f := changedLine(t, "scripts/rotate.sh", rotate(t, tt.first), 4)
		rep, err := lint.NewShell(sc).Lint(context.Background(), []lint.File{f}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, shellCodes(rep)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.first, diff)
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
