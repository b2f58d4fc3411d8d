package codectx

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/diff"
)

// repo is a Reader over files in memory.
type repo map[string]string

func (r repo) ReadFile(_ context.Context, p string, _ review.Revision) ([]byte, error) {
	s, ok := r[p]
	if !ok {
		return nil, fmt.Errorf("%s: %w", p, review.ErrNotFound)
	}
	return []byte(s), nil
}

func (r repo) ListFiles(context.Context) ([]string, error) {
	var out []string
	for p := range r {
		out = append(out, p)
	}
	slices.Sort(out)
	return out, nil
}

// gitDiff diffs the changed files of head against base with git.
func gitDiff(t *testing.T, base, head repo) *diff.Diff {
	t.Helper()
	dir := t.TempDir()
	write := func(side string, r repo) {
		for p, s := range r {
			path := dir + "/" + side + "/" + p
			if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
				t.Fatal(err)
			}
			if err := writeFile(path, s); err != nil {
				t.Fatal(err)
			}
		}
	}
	write("a", base)
	write("b", base)
	write("b", head)
	cmd := exec.Command("git", "diff", "--no-index", "--no-prefix", "a", "b")
	cmd.Dir = dir
	out, _ := cmd.Output() // exit status 1 when the trees differ
	d, err := diff.ParseString(string(out))
	if err != nil {
		t.Fatal(err)
	}
	return d
}
