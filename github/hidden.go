package github

import (
	"context"
	"errors"
	"fmt"
	"strings"

	udiff "github.com/aymanbagabas/go-udiff"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/diff"
)

// GitHub builds a pull request's diff with git, honouring the head's
// .gitattributes: a pull request that commits `*.py -diff` (or `binary`, or
// a diff driver) gets "Binary files … differ" for its Python files, and the
// files list gives them no patch. Reviewed as binary, such a file's planted
// secret would never be seen. The Source reads both sides of every file the
// diff calls binary and, when both are text by content, puts a real diff of
// them in its place. GitHub takes no review comments on lines it showed no
// diff for, so findings on such files go into the review body (Repo.Publish).
const (
	// maxHiddenFiles bounds the files one pull request has read back.
	maxHiddenFiles = 50
	// maxHiddenFileBytes bounds each side of such a file; a larger one
	// stays binary.
	maxHiddenFileBytes = 1 << 20
)

// unhideAndRecord unhides the diff and remembers which files it read back.
func (s *Source) unhideAndRecord(ctx context.Context, raw string) (string, error) {
	text, paths, err := s.unhide(ctx, raw)
	if err != nil {
		return "", err
	}
	s.hiddenMu.Lock()
	defer s.hiddenMu.Unlock()
	s.hidden = make(map[string]bool, len(paths))
	for _, p := range paths {
		s.hidden[p] = true
	}
	return text, nil
}

// hiddenFiles reports the files whose diff GitHub showed as binary and the
// Source read back from both sides: GitHub takes no review comments on
// their lines. Empty before Diff was read, and for a nil Source.
func (s *Source) hiddenFiles() map[string]bool {
	if s == nil {
		return nil
	}
	s.hiddenMu.Lock()
	defer s.hiddenMu.Unlock()
	return s.hidden
}

// unhide returns raw with every binary-marked file that is text by content
// replaced by a unified diff of its base and head contents, and the paths
// so replaced. A diff that does not parse is returned as is: the pipeline
// reports its error.
func (s *Source) unhide(ctx context.Context, raw string) (string, []string, error) {
	d, err := diff.ParseString(raw)
	if err != nil {
		return raw, nil, nil //nolint:nilerr // the pipeline parses it again and says why
	}
	var paths []string
	for i, f := range d.Files {
		if !f.Binary || len(paths) >= maxHiddenFiles {
			continue
		}
		text, err := s.asText(ctx, f)
		if err != nil {
			return "", nil, err
		}
		if text != nil {
			d.Files[i] = text
			paths = append(paths, text.Path())
		}
	}
	if len(paths) == 0 {
		return raw, nil, nil
	}
	return diff.Format(d), paths, nil
}

// asText reads both sides of a file the diff calls binary and returns its
// diff when both are text within the size bound, nil otherwise.
func (s *Source) asText(ctx context.Context, f *diff.File) (*diff.File, error) {
	var old, cur []byte
	var err error
	if f.Status != diff.Added {
		if old, err = s.side(ctx, f.OldPath, review.Base); err != nil || old == nil {
			return nil, err
		}
	}
	if f.Status != diff.Deleted {
		if cur, err = s.side(ctx, f.NewPath, review.Head); err != nil || cur == nil {
			return nil, err
		}
	}
	unified := udiff.Unified("a", "b", string(old), string(cur))
	_, hunks, ok := strings.Cut(unified, "\n+++ b\n")
	if !ok {
		return nil, nil // no change of content (a mode change)
	}
	text, err := diff.ParsePatch(f.Path(), hunks)
	if err != nil {
		return nil, fmt.Errorf("diff of %s, read back from both sides: %w", f.Path(), err)
	}
	text.OldPath, text.NewPath, text.Status = f.OldPath, f.NewPath, f.Status
	text.OldMode, text.NewMode, text.Similarity = f.OldMode, f.NewMode, f.Similarity
	return text, nil
}

// side reads one side of a file for asText: nil (and no error) when it is
// missing, too large or binary by content (GitHub's rule: a NUL in its
// first bytes; a NUL further on is text, which GitHub itself would show).
func (s *Source) side(ctx context.Context, path string, rev review.Revision) ([]byte, error) {
	b, err := s.ReadFile(ctx, path, rev)
	switch {
	case errors.Is(err, review.ErrNotFound):
		return nil, nil
	case err != nil:
		return nil, err
	case len(b) > maxHiddenFileBytes || diff.IsBinary(b):
		return nil, nil
	}
	if b == nil {
		b = []byte{} // an empty text file
	}
	return b, nil
}

// bodyOnly is a LineIndex that takes no comments on some files.
type bodyOnly struct {
	review.LineIndex
	paths map[string]bool
}

func (b bodyOnly) Commentable(path string, side review.Side, line int) bool {
	return !b.paths[path] && b.LineIndex.Commentable(path, side, line)
}

func (b bodyOnly) CommentableRange(path string, side review.Side, start, end int) bool {
	return !b.paths[path] && b.LineIndex.CommentableRange(path, side, start, end)
}
