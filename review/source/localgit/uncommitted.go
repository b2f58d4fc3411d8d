package localgit

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/source/difftext"
)

// mode says what the head side of a Source is.
type mode int

const (
	modeCommit   mode = iota // a commit
	modeWorkTree             // the files of the working tree
	modeStaged               // the index
)

// Uncommitted says which uncommitted changes NewUncommitted reviews.
type Uncommitted int

// Uncommitted changes.
const (
	// WorkTree is the working tree against HEAD: staged and unstaged
	// changes to tracked files. Untracked files are not included.
	WorkTree Uncommitted = iota
	// Staged is the index against HEAD: what `git commit` would commit.
	Staged
)

// NewUncommitted opens the repository containing dir and reviews its
// uncommitted changes against the HEAD commit: the working tree or the
// index, as which says. The base is HEAD; the head has no SHA, HeadRef
// reads "(working tree)" or "(index)", and there are no commits.
//
// The diff is taken with the same pinned flags as New's. Head files are
// read from the index (`git cat-file blob :path`) or from the working
// tree through an os.Root at the repository's top, so a symbolic link
// cannot lead a read outside the repository: a link reads as its target
// path, as git stores it. Blame blames the working tree.
func NewUncommitted(ctx context.Context, dir string, which Uncommitted) (*Source, error) {
	s := &Source{env: gitEnv(), files: map[string]blob{}, mode: modeWorkTree}
	if which == Staged {
		s.mode = modeStaged
	}
	if err := s.open(ctx, dir); err != nil {
		return nil, err
	}
	headSHA, err := s.resolve(ctx, "HEAD")
	if err != nil {
		return nil, fmt.Errorf("localgit: HEAD: %w", err)
	}
	s.baseRev = headSHA
	s.change = review.Change{Repository: filepath.Base(s.root), BaseRef: "HEAD", BaseSHA: headSHA, HeadRef: "(working tree)", Title: "Uncommitted changes"}
	args := []string{"diff"}
	if s.mode == modeStaged {
		s.change.HeadRef, s.change.Title = "(index)", "Staged changes"
		args = append(args, "--cached")
	}
	args = append(args, append(diffFlags(), headSHA, "--")...)
	text, err := s.gitText(ctx, maxDiffBytes, args...)
	if err != nil {
		return nil, fmt.Errorf("localgit: diff: %w", err)
	}
	if s.diff, err = difftext.New(text); err != nil {
		return nil, fmt.Errorf("localgit: %w", err)
	}
	return s, nil
}

// HasUncommitted reports whether the repository containing dir has
// changes to tracked files, staged or not, against HEAD. A repository
// without a commit has none.
func HasUncommitted(ctx context.Context, dir string) (bool, error) {
	s := &Source{env: gitEnv()}
	if err := s.open(ctx, dir); err != nil {
		return false, err
	}
	if _, err := s.resolve(ctx, "HEAD"); err != nil {
		return false, nil //nolint:nilerr // no commit yet: nothing to compare with
	}
	out, err := s.git(ctx, maxDiffBytes, "status", "--porcelain=v1", "-z", "--untracked-files=no", "--ignore-submodules=all")
	if err != nil {
		return false, fmt.Errorf("localgit: status: %w", err)
	}
	return len(out) > 0, nil
}

// readWorkTree reads a file of the working tree, review.ErrNotFound when
// it is not there, is a directory, or lies behind a link leaving the
// repository.
func (s *Source) readWorkTree(p string) ([]byte, error) {
	root, err := os.OpenRoot(s.root)
	if err != nil {
		return nil, fmt.Errorf("open repository: %w", err)
	}
	defer func() { _ = root.Close() }() // read-only: nothing to lose
	fi, err := root.Lstat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, review.ErrNotFound
	case err != nil:
		return nil, fmt.Errorf("%w: %w", review.ErrNotFound, err) // an escaping parent link, a file name too long
	case fi.Mode()&fs.ModeSymlink != 0:
		target, err := root.Readlink(p)
		if err != nil {
			return nil, fmt.Errorf("read link: %w", err)
		}
		return []byte(target), nil
	case !fi.Mode().IsRegular():
		return nil, review.ErrNotFound
	case fi.Size() > maxFileBytes:
		return nil, fmt.Errorf("file larger than %d MiB", maxFileBytes>>20)
	}
	return root.ReadFile(p)
}

// ErrUnknownRevision is returned by ReadFileAt for a revision that names
// no commit of the repository (a branch that was not fetched, a shallow
// clone's missing parent).
var ErrUnknownRevision = errors.New("no such commit in the repository")

// ReadFileAt reads file p as committed at revision rev of the repository
// containing dir (`git cat-file blob COMMIT:p`), with the same isolation
// as a Source, and returns the commit's SHA too. A file that is not there
// is review.ErrNotFound; a revision that names no commit is
// ErrUnknownRevision. The working tree is never read.
func ReadFileAt(ctx context.Context, dir, rev, p string) (data []byte, commit string, err error) {
	if err := checkPath(p); err != nil {
		return nil, "", fmt.Errorf("localgit: read %q: %w", p, err)
	}
	s := &Source{env: gitEnv()}
	if err := s.open(ctx, dir); err != nil {
		return nil, "", err
	}
	if commit, err = s.resolve(ctx, rev); err != nil {
		if ctx.Err() != nil {
			return nil, "", ctx.Err()
		}
		return nil, "", fmt.Errorf("localgit: %q: %w", rev, ErrUnknownRevision)
	}
	data, err = s.git(ctx, maxFileBytes, "cat-file", "blob", commit+":"+p)
	var ge *gitError
	switch {
	case errors.As(err, &ge) && ge.notFound():
		return nil, commit, fmt.Errorf("localgit: read %s at %s: %w", p, rev, review.ErrNotFound)
	case err != nil:
		return nil, commit, fmt.Errorf("localgit: read %s at %s: %w", p, rev, err)
	}
	return data, commit, nil
}
