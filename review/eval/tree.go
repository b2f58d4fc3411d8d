package eval

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/source/difftext"
)

// treeSource is the Source of a Tree case: the base tree and the head tree
// (base with head/ copied over it) in two directories, named a and b so
// that `git diff --no-index --no-prefix a b`, the one process a case
// costs, prints a git-style diff with a/ and b/ paths.
type treeSource struct {
	*difftext.Source
	change     review.Change
	base, head string
}

var _ review.Source = (*treeSource)(nil)

// openTree lays out the case's trees under a new directory in tempDir and
// diffs them. cleanup removes the directory.
func openTree(ctx context.Context, c Case, tempDir string) (*treeSource, func(), error) {
	dir, err := os.MkdirTemp(tempDir, "mergeguard-eval-")
	if err != nil {
		return nil, func() {}, fmt.Errorf("lay out the trees: %w", err)
	}
	cleanup := func() { _ = os.RemoveAll(dir) }
	s := &treeSource{base: filepath.Join(dir, "a"), head: filepath.Join(dir, "b"),
		change: review.Change{Repository: c.ID, Title: c.Title, Body: c.Body, BaseRef: "base", HeadRef: "head", BaseSHA: "base", HeadSHA: "head"}}
	for _, step := range []struct{ from, to string }{
		{"base", s.base}, {"base", s.head}, {"head", s.head},
	} {
		if err := copyTree(filepath.Join(c.Tree, step.from), step.to); err != nil {
			cleanup()
			return nil, func() {}, err
		}
	}
	text, err := diffDirs(ctx, dir)
	if err == nil {
		s.Source, err = difftext.New(text)
	}
	if err != nil {
		cleanup()
		return nil, func() {}, err
	}
	return s, cleanup, nil
}

// diffDirs returns `git diff --no-index` of dir/a and dir/b.
func diffDirs(ctx context.Context, dir string) (string, error) {
	var out, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "git", "diff", "--no-index", "--no-prefix", "--no-color", "--no-ext-diff", "-U3", "a", "b")
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, &out, &stderr
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=" + os.DevNull, "LC_ALL=C"}
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == 1 {
		err = nil // differences found
	}
	if err != nil {
		return "", fmt.Errorf("git diff --no-index: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return out.String(), nil
}

// copyTree copies the regular files under from to the same paths under
// to, both opened as roots so that no path leaves them; a missing from
// copies nothing.
func copyTree(from, to string) error {
	if _, err := os.Stat(from); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	src, err := os.OpenRoot(from)
	if err != nil {
		return fmt.Errorf("copy %s: %w", from, err)
	}
	defer func() { _ = src.Close() }()
	if err := os.MkdirAll(to, 0o750); err != nil {
		return fmt.Errorf("copy %s: %w", from, err)
	}
	dst, err := os.OpenRoot(to)
	if err != nil {
		return fmt.Errorf("copy %s: %w", from, err)
	}
	defer func() { _ = dst.Close() }()
	err = fs.WalkDir(src.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		data, err := src.ReadFile(p)
		if err != nil {
			return err
		}
		if err := dst.MkdirAll(path.Dir(p), 0o750); err != nil {
			return err
		}
		return dst.WriteFile(p, data, 0o600)
	})
	if err != nil {
		return fmt.Errorf("copy %s: %w", from, err)
	}
	return nil
}

// Change implements review.Source.
func (s *treeSource) Change(context.Context) (review.Change, error) { return s.change, nil }

// Commits implements review.Source: the change is one commit.
func (s *treeSource) Commits(context.Context, int) ([]review.Commit, error) {
	return []review.Commit{{SHA: "head", Author: "eval", Message: strings.TrimSpace(s.change.Title + "\n\n" + s.change.Body)}}, nil
}

// ReadFile implements review.Source.
func (s *treeSource) ReadFile(_ context.Context, p string, rev review.Revision) ([]byte, error) {
	if p == "" || path.IsAbs(p) || slices.Contains(strings.Split(p, "/"), "..") {
		return nil, fmt.Errorf("read %s: %w", p, review.ErrNotFound)
	}
	dir := s.head
	if rev == review.Base {
		dir = s.base
	}
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(p)))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("read %s at %s: %w", p, rev, review.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("read %s at %s: %w", p, rev, err)
	}
	return b, nil
}

// ListFiles implements review.Source: the head tree's files.
func (s *treeSource) ListFiles(context.Context) ([]string, error) {
	var out []string
	err := filepath.WalkDir(s.head, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(s.head, p)
		out = append(out, filepath.ToSlash(rel))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("list files: %w", err)
	}
	return out, nil
}
