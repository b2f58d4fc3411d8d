// Command gentokens writes the token-counting benchmark's inputs,
// testdata/tokens/code.go.txt (5,000 lines of MergeGuard's Go source) and
// testdata/tokens/mixed.txt (documentation, a webhook payload's JSON and a
// diff with emoji and non-Latin text), from the app's files. Run it from
// bench/: go run ./cmd/gentokens. The inputs are committed so that every
// run counts the same text.
package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "gentokens:", err)
		os.Exit(1)
	}
}

func run() error {
	code, err := goSource([]string{"../review", "../server"}, 5000)
	if err != nil {
		return err
	}
	var mixed strings.Builder
	for _, name := range []string{"../README.md", "../docs/architecture.md", "../docs/api.md",
		"testdata/webhooks/pull_request.opened.payload.json",
		"testdata/diffs/py-pr-agent_pr1706-62-files-docs-emoji-unicode_246f372.diff"} {
		b, err := os.ReadFile(name)
		if err != nil {
			return fmt.Errorf("read %s: %w", name, err)
		}
		mixed.Write(b)
		mixed.WriteString("\n")
	}
	if err := os.MkdirAll("testdata/tokens", 0o755); err != nil { //nolint:gosec // committed test data
		return fmt.Errorf("mkdir: %w", err)
	}
	if err := os.WriteFile("testdata/tokens/code.go.txt", []byte(code), 0o644); err != nil { //nolint:gosec // committed test data
		return fmt.Errorf("write: %w", err)
	}
	return os.WriteFile("testdata/tokens/mixed.txt", []byte(mixed.String()), 0o644) //nolint:gosec // committed test data
}

// goSource concatenates the non-test Go files under dirs, in path order,
// and keeps the first lines lines.
func goSource(dirs []string, lines int) (string, error) {
	var names []string
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(p, ".go") && !strings.HasSuffix(p, "_test.go") {
				names = append(names, p)
			}
			return err
		})
		if err != nil {
			return "", fmt.Errorf("walk %s: %w", dir, err)
		}
	}
	slices.Sort(names)
	var out []string
	for _, name := range names {
		b, err := os.ReadFile(name)
		if err != nil {
			return "", fmt.Errorf("read %s: %w", name, err)
		}
		out = append(out, strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")...)
		if len(out) >= lines {
			break
		}
	}
	if len(out) < lines {
		return "", fmt.Errorf("only %d lines of Go under %v", len(out), dirs)
	}
	return strings.Join(out[:lines], "\n") + "\n", nil
}
