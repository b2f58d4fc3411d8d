// Package difftext is a review.Source answering from a bare unified diff,
// such as the diff_text of an API request: it knows the changed files and
// their hunks, and the full content only of files the diff shows whole.
package difftext

import (
	"context"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/diff"
)

// Source answers from a diff. It is immutable and safe for concurrent use.
type Source struct {
	text  string
	diff  *diff.Diff
	files []review.ChangedFile
	// tree is a checkout the head side is read from when it agrees with
	// the diff (WithTree); nil without one.
	tree fs.FS
}

var _ review.Source = (*Source)(nil)

// New parses text, a git-style unified diff. A diff that does not parse is
// an error; an empty one is a change without files.
func New(text string) (*Source, error) {
	d, err := diff.ParseString(text)
	if err != nil {
		return nil, fmt.Errorf("difftext: %w", err)
	}
	return &Source{text: text, diff: d, files: changedFiles(d)}, nil
}

// Change returns empty metadata: a bare diff names no repository,
// revisions, title or author.
func (s *Source) Change(context.Context) (review.Change, error) { return review.Change{}, nil }

// Diff returns the text New was given.
func (s *Source) Diff(context.Context) (string, error) { return s.text, nil }

// ParsedDiff returns the diff New parsed, so that a review does not parse
// it again. The caller must not modify it.
func (s *Source) ParsedDiff(context.Context) (*diff.Diff, error) { return s.diff, nil }

// Files lists the files of the diff.
func (s *Source) Files(context.Context) ([]review.ChangedFile, error) {
	return slices.Clone(s.files), nil
}

// Commits returns review.ErrUnsupported: a diff carries no commits.
func (s *Source) Commits(context.Context, int) ([]review.Commit, error) {
	return nil, fmt.Errorf("difftext: commits: %w", review.ErrUnsupported)
}

// Blame returns review.ErrUnsupported: a diff carries no history.
func (s *Source) Blame(context.Context, string, int) (review.BlameLine, error) {
	return review.BlameLine{}, fmt.Errorf("difftext: blame: %w", review.ErrUnsupported)
}

// WithTree returns the Source with a checkout of the head side (a
// repository's work tree, read through tree): the head side of a file the
// diff changes is read from it when the file there agrees with the diff,
// every line of every hunk's head side at its number; and ListFiles lists
// the tree's files. A file that disagrees (another revision) is not read.
// So a diff of a checkout's changes gets its modified files read whole,
// for the linters.
func (s *Source) WithTree(tree fs.FS) *Source {
	c := *s
	c.tree = tree
	return &c
}

// ReadFile returns a file's content when the diff holds all of it: the
// head side of an added file and the base side of a deleted file, whose
// every line is in the diff; with a tree (WithTree), the head side of a
// changed file that the tree's copy agrees with. Every other read —
// modified, renamed and binary files, whose unchanged lines the diff does
// not show, and paths the diff does not touch — is review.ErrNotFound;
// the diff's hunks are what a model can read of them (diff_file).
func (s *Source) ReadFile(_ context.Context, path string, rev review.Revision) ([]byte, error) {
	if rev == review.Head && s.tree != nil {
		if b, ok := s.fromTree(path); ok {
			return b, nil
		}
	}
	for _, f := range s.diff.Files {
		if f.Binary {
			continue
		}
		switch {
		case rev == review.Head && f.Status == diff.Added && f.NewPath == path:
			if b, ok := whole(f, diff.Add); ok {
				return b, nil
			}
		case rev == review.Base && f.Status == diff.Deleted && f.OldPath == path:
			if b, ok := whole(f, diff.Delete); ok {
				return b, nil
			}
		}
	}
	return nil, fmt.Errorf("difftext: read %s at %s: %w (a diff holds only added and deleted files whole)", path, rev, review.ErrNotFound)
}

// ListFiles lists the files that exist at the head revision among those
// the diff changes; the rest of the repository is unknown. With a tree it
// lists the tree's files (at most maxTreeFiles, .git left out) with them.
func (s *Source) ListFiles(context.Context) ([]string, error) {
	var out []string
	if s.tree != nil {
		_ = fs.WalkDir(s.tree, ".", func(p string, d fs.DirEntry, err error) error {
			switch {
			case err != nil:
				return nil //nolint:nilerr // an unreadable directory: its files are not listed
			case d.IsDir() && d.Name() == ".git":
				return fs.SkipDir
			case len(out) >= maxTreeFiles:
				return fs.SkipAll
			case d.Type().IsRegular():
				out = append(out, p)
			}
			return nil
		})
	}
	for _, f := range s.diff.Files {
		if f.Status != diff.Deleted {
			out = append(out, f.Path())
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// maxTreeFiles bounds the files ListFiles lists from a tree.
const maxTreeFiles = 100_000

// maxTreeFileBytes bounds a file read from a tree.
const maxTreeFileBytes = 4 << 20

// fromTree reads a changed file's head side from the tree when the tree's
// copy agrees with every hunk of the diff.
func (s *Source) fromTree(path string) ([]byte, bool) {
	i := slices.IndexFunc(s.diff.Files, func(f *diff.File) bool { return f.NewPath == path && !f.Binary })
	if i < 0 {
		return nil, false
	}
	if fi, err := fs.Stat(s.tree, path); err != nil || !fi.Mode().IsRegular() || fi.Size() > maxTreeFileBytes {
		return nil, false
	}
	b, err := fs.ReadFile(s.tree, path)
	if err != nil || !agrees(s.diff.Files[i], b) {
		return nil, false
	}
	return b, true
}

// agrees reports whether content has every head-side line of f's hunks
// (context and added) at its number.
func agrees(f *diff.File, content []byte) bool {
	lines := strings.Split(string(content), "\n")
	for _, h := range f.Hunks {
		for _, l := range h.Lines {
			if l.Kind == diff.Delete {
				continue
			}
			n := int(l.NewLine)
			if n < 1 || n > len(lines) || strings.TrimSuffix(lines[n-1], "\r") != l.Text {
				return false
			}
		}
	}
	return true
}

// whole rebuilds a file whose diff is a single hunk of kind lines starting
// at line 1 (or no hunk: an empty file).
func whole(f *diff.File, kind diff.LineKind) ([]byte, bool) {
	if len(f.Hunks) == 0 {
		return []byte{}, true
	}
	if len(f.Hunks) != 1 {
		return nil, false
	}
	var b strings.Builder
	for _, l := range f.Hunks[0].Lines {
		if l.Kind != kind {
			return nil, false
		}
		b.WriteString(l.Text)
		switch {
		case l.NoNewline:
		case l.CRLF:
			b.WriteString("\r\n")
		default:
			b.WriteByte('\n')
		}
	}
	return []byte(b.String()), true
}

// changedFiles lists the files of a parsed diff as a host would: statuses
// named as GitHub names them (added, removed, modified, renamed, copied,
// and changed for a mode-only change), OldPath set for renames and copies,
// and binary files marked PatchMissing (their content is unknown).
func changedFiles(d *diff.Diff) []review.ChangedFile {
	out := make([]review.ChangedFile, 0, len(d.Files))
	for _, f := range d.Files {
		cf := review.ChangedFile{
			Path:         f.Path(),
			Status:       string(f.Status),
			Additions:    f.Additions,
			Deletions:    f.Deletions,
			PatchMissing: f.Binary,
		}
		switch f.Status {
		case diff.Deleted:
			cf.Status = "removed"
		case diff.Renamed, diff.Copied:
			cf.OldPath = f.OldPath
		case diff.Modified:
			if len(f.Hunks) == 0 && !f.Binary && f.OldMode != f.NewMode {
				cf.Status = "changed"
			}
		}
		out = append(out, cf)
	}
	return out
}
