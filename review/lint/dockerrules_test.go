package lint_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mergeguard/mergeguard/review/lint"
	"github.com/mergeguard/mergeguard/review/lint/buildcheck"
)

// dockerRules lints a Dockerfile whose every line is added and returns
// "line RULE" for each best-practice finding (BuildKit's own are left out).
func dockerRules(t *testing.T, content string, tr lint.Tree) []string {
	t.Helper()
	rep, err := lint.Dockerfile{Checks: buildcheck.Run}.Lint(context.Background(), []lint.File{added(t, "Dockerfile", []byte(content))}, tr)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range rep.Findings {
		id, _, ok := strings.Cut(f.Title, ": ")
		if ok && (strings.HasPrefix(id, "DL") || strings.HasPrefix(id, "MGD")) {
			got = append(got, fmt.Sprintf("%d %s", f.LineStart, id))
		}
	}
	return got
}

// TestDockerfileWithoutBuildChecks checks that a Dockerfile linter without
// BuildKit's checks (a build without package buildcheck) still runs the
// best-practice rules, reports nothing of BuildKit's, and says what it
// left out.
func TestDockerfileWithoutBuildChecks(t *testing.T) {
	file := "FROM ubuntu as Build\nMAINTAINER someone@example.com\n" // DL3006; BuildKit: casing, MAINTAINER
	for _, checks := range []lint.BuildChecks{nil, buildcheck.Run} {
		rep, err := lint.Dockerfile{Checks: checks}.Lint(t.Context(), []lint.File{added(t, "Dockerfile", []byte(file))}, nil)
		if err != nil {
			t.Fatal(err)
		}
		var rules []string
		for _, f := range rep.Findings {
			rules = append(rules, f.Rule)
		}
		noted := slices.ContainsFunc(rep.Notes, func(n string) bool { return strings.Contains(n, "build checks are not part of this build") })
		buildKit := slices.ContainsFunc(rules, func(r string) bool { return !strings.HasPrefix(r, "DL") }) // hadolint's rules are DLnnnn
		if !slices.Contains(rules, "DL3006") || buildKit != (checks != nil) || noted != (checks == nil) {
			t.Errorf("with build checks %t: rules %q, notes %q; want DL3006, BuildKit's rules only with the checks, the note only without", checks != nil, rules, rep.Notes)
		}
	}
}

// TestDockerfileUnparsedWithoutBuildChecks: a Dockerfile the rules cannot
// parse, with no BuildKit to report why, is not passed over silently.
func TestDockerfileUnparsedWithoutBuildChecks(t *testing.T) {
	rep, err := lint.Dockerfile{}.Lint(t.Context(), []lint.File{added(t, "Dockerfile", []byte("# no instruction\n"))}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Findings) != 0 || !slices.ContainsFunc(rep.Notes, func(n string) bool { return strings.HasPrefix(n, "dockerfile: could not check Dockerfile") }) {
		t.Errorf("findings %v, notes %q; want a note that the file could not be checked", rep.Findings, rep.Notes)
	}
}

func TestDockerfileBestPractices(t *testing.T) {
	tests := []struct {
		name string
		file string
		want []string
	}{
		{"untagged base", "FROM ubuntu\n", []string{"1 DL3006"}},
		{"latest base", "FROM docker.io/library/ubuntu:latest\n", []string{"1 DL3007"}},
		{"tagged, digest, scratch, stage, arg", "ARG BASE=alpine:3.20\nFROM golang:1.23 AS build\nFROM build\nFROM scratch\nFROM ${BASE}\nFROM alpine@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\nFROM localhost:5000/app:1\n", nil},
		{"registry port is not a tag", "FROM localhost:5000/app\n", []string{"1 DL3006"}},
		{"apt-get without -y and recommends, lists kept",
			"FROM debian:12\nRUN apt-get update && \\\n    apt-get install curl\n",
			[]string{"3 DL3014", "3 DL3015", "3 DL3009"}},
		{"apt-get done right",
			"FROM debian:12\nRUN apt-get update \\\n && apt-get install -y --no-install-recommends curl \\\n && rm -rf /var/lib/apt/lists/*\n", nil},
		{"apt-get -qq and -o recommends, cache mount",
			"FROM debian:12\nRUN --mount=type=cache,target=/var/lib/apt/lists apt-get -qq install -o APT::Install-Recommends=false curl\n", nil},
		{"apt lists only matter in the final stage",
			"FROM debian:12 AS build\nRUN apt-get install -y --no-install-recommends gcc\nFROM debian:12\n", nil},
		{"pip cache", "FROM python:3.12\nRUN pip install requests\nRUN python -m pip install --no-cache-dir flask\n", []string{"2 DL3042"}},
		{"pip placed on its line", "FROM python:3.12\nRUN apt-get install -y --no-install-recommends x && rm -rf /var/lib/apt/lists/* && \\\n    pip3 install requests\n", []string{"3 DL3042"}},
		{"pip cache off by env", "FROM python:3.12\nENV PIP_NO_CACHE_DIR=1\nRUN pip3 install requests\n", nil},
		{"commands placed on their own lines", "FROM debian:12\nRUN cd /a && \\\n    make && \\\n    cd /b; \\\n    sudo make\n", []string{"2 DL3003", "4 DL3003", "5 DL3004"}},
		{"sudo's options are not the command", "FROM debian:12\nRUN sudo -u app -- apt-get install x\n", []string{"2 DL3004", "2 DL3014", "2 DL3015", "2 DL3009"}},
		{"sudo and cd", "FROM debian:12\nRUN sudo -u app make && cd /src && make\n", []string{"2 DL3004", "2 DL3003"}},
		{"download piped to a shell", "FROM debian:12\nRUN curl -fsSL https://example.com/install.sh | sh\n", []string{"2 MGD001"}},
		{"download piped to sudo bash", "FROM debian:12\nRUN wget -qO- https://example.com/i | sudo bash -s -- --yes\n", []string{"2 MGD001", "2 DL3004"}},
		{"download piped to python", "FROM python:3.12\nRUN curl -sSL https://install.python-poetry.org | python3 -\n", []string{"2 MGD001"}},
		{"python reading a file is fine", "FROM python:3.12\nRUN curl -sSL https://example.com/x.json | python3 parse.py\n", nil},
		{"download piped to a file is fine", "FROM debian:12\nRUN curl -fsSL https://example.com/x.tgz | tar -xz\n", nil},
		{"ADD of a URL", "FROM debian:12\nADD https://example.com/x.tgz /x.tgz\nADD --checksum=sha256:24454f830cdb571e2c4ad15481119c43b3cafd48dd869a9b2945d1036d1dc68d https://example.com/y.tgz /y.tgz\nADD local.tgz /\n", []string{"2 MGD002"}},
		{"exec form sh -c", "FROM debian:12\nRUN [\"sh\", \"-c\", \"apt-get install -y --no-install-recommends x && rm -rf /var/lib/apt/lists/*\"]\n", nil},
		{"heredoc", "# syntax=docker/dockerfile:1\nFROM debian:12\nRUN <<EOF\napt-get install -y curl\nEOF\n", []string{"4 DL3015", "4 DL3009"}},
		{"hadolint ignore above the instruction", "# hadolint ignore=DL3007,DL3006 because\nFROM ubuntu\n# hadolint ignore=DL3004\nRUN sudo make\nRUN sudo make\n", []string{"5 DL3004"}},
		{"hadolint global ignore", "FROM ubuntu\n# hadolint global ignore=DL3006\nRUN true\nFROM debian\n", nil},
		{"quoted words are read", "FROM debian:12\nRUN \"apt-get\" install -y --no-install-recommends 'curl' && rm -rf \"/var/lib/apt/lists\"\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, dockerRules(t, tt.file, nil)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestDockerfileHadolintConfig: the rules the repository's .hadolint.yaml
// ignores are not reported; a configuration that cannot be read is a
// note, and every rule is checked.
func TestDockerfileHadolintConfig(t *testing.T) {
	file := "FROM ubuntu\nRUN sudo make\n"
	tests := []struct {
		name string
		tree tree
		want []string
		note bool
	}{
		{"none", tree{}, []string{"1 DL3006", "2 DL3004"}, false},
		{"yaml", tree{".hadolint.yaml": "ignored:\n  - DL3006\n"}, []string{"2 DL3004"}, false},
		{"yml", tree{".hadolint.yml": "ignored: [DL3004, DL3006]\n"}, nil, false},
		{"broken", tree{".hadolint.yaml": "ignored: [\n"}, []string{"1 DL3006", "2 DL3004"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep, err := lint.Dockerfile{Checks: buildcheck.Run}.Lint(context.Background(), []lint.File{added(t, "Dockerfile", []byte(file))}, tt.tree)
			if err != nil {
				t.Fatal(err)
			}
			if got := len(rep.Notes) > 0; got != tt.note {
				t.Errorf("notes = %q, want a note: %v", rep.Notes, tt.note)
			}
			if diff := cmp.Diff(tt.want, dockerRules(t, file, tt.tree)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestDockerfileRulesOnRealFiles runs the rules on real Dockerfiles (see
// testdata/dockerfiles/SOURCES.md): jupyter/docker-stacks lints its images
// with hadolint, and gets nothing; docker-library/python is
// hadolint-clean but for the `cd`s of its builds (DL3003, style).
func TestDockerfileRulesOnRealFiles(t *testing.T) {
	tests := []struct {
		file   string
		config string
		want   []string
	}{
		{"jupyter-base-notebook.Dockerfile", "jupyter.hadolint.yaml", nil},
		{"jupyter-pytorch-notebook.Dockerfile", "jupyter.hadolint.yaml", nil},
		{"python-3.13-slim-trixie.Dockerfile", "", []string{"65 DL3003", "112 DL3003"}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			tr := tree{}
			if tt.config != "" {
				tr[".hadolint.yaml"] = string(read(t, "dockerfiles/"+tt.config))
			}
			if diff := cmp.Diff(tt.want, dockerRules(t, string(read(t, "dockerfiles/"+tt.file)), tr)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
