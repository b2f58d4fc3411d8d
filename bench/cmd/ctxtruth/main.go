// Command ctxtruth computes the code-context truth of real Go commits
// (issue 24, testdata/eval-real/context): for a commit C of a repository,
// the definitions of the module that C's changed lines use (functions,
// methods, types, constants, package-level variables) and the references
// to the functions whose declarations hold a changed line, resolved with
// go/types over the whole module at C (golang.org/x/tools/go/packages,
// tests included). It is the reference MergeGuard's code context
// (review/codectx) is measured against by `mergeguard eval --real`.
//
// Run it from bench/:
//
//	go run ./cmd/ctxtruth -mirrors /work/.mirror -out ../testdata/eval-real/context ../scripts/eval-real/context-commits.txt
//
// Each line of the list is "owner/name commit"; the repository is read
// from MIRRORS/owner+name/repo (a bare clone: `git clone --bare
// https://github.com/owner/name MIRRORS/owner+name/repo`). The commit is
// checked out into a temporary directory, its modules downloaded (through
// the Go module proxy; a failure is noted, not fatal) and its packages
// loaded. One JSON file per commit, OUT/owner+name@<12 hex>.json.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

func main() {
	mirrors := flag.String("mirrors", "/work/.mirror", "`directory` of bare clones, owner+name/repo")
	out := flag.String("out", "../testdata/eval-real/context", "`directory` the truth files are written to")
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: ctxtruth [-mirrors DIR] [-out DIR] COMMITS_FILE")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(context.Background(), flag.Arg(0), *mirrors, *out); err != nil {
		fmt.Fprintln(os.Stderr, "ctxtruth:", err)
		os.Exit(1)
	}
}

// run writes the truth of every commit of the list.
func run(ctx context.Context, list, mirrors, out string) error {
	commits, err := readList(list)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil { //nolint:gosec // committed test data, readable by all
		return err
	}
	for _, c := range commits {
		start := time.Now()
		gitDir := filepath.Join(mirrors, strings.ReplaceAll(c.repo, "/", "+"), "repo")
		t, err := Generate(ctx, gitDir, c.repo, c.commit)
		if err != nil {
			return fmt.Errorf("%s %s: %w", c.repo, c.commit, err)
		}
		name := fmt.Sprintf("%s@%s.json", strings.ReplaceAll(c.repo, "/", "+"), c.commit[:12])
		if err := writeTruth(filepath.Join(out, name), t); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "%s %s: %d definitions, %d callers, %d notes (%s)\n",
			c.repo, c.commit[:12], len(t.Definitions), len(t.Callers), len(t.Notes), time.Since(start).Round(time.Millisecond))
	}
	return nil
}

// pinned is a line of the commit list.
type pinned struct{ repo, commit string }

// readList reads "owner/name commit" lines; # starts a comment.
func readList(path string) ([]pinned, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	var out []pinned
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "#")
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		if len(fields) < 2 || len(fields[1]) != 40 {
			return nil, fmt.Errorf("%s: want \"owner/name <40-hex commit>\", got %q", path, sc.Text())
		}
		out = append(out, pinned{fields[0], fields[1]})
	}
	return out, sc.Err()
}

// writeTruth writes one truth file, indented, with empty lists as [].
func writeTruth(path string, t truthFile) error {
	if t.Definitions == nil {
		t.Definitions = []definition{}
	}
	if t.Callers == nil {
		t.Callers = []caller{}
	}
	b, err := json.MarshalIndent(t, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644) //nolint:gosec // committed test data, readable by all
}
