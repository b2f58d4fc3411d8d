// Package difftext is a review.Source answering from a bare unified diff,
// such as the diff_text of an API request: it knows the changed files and
// their hunks, and the full content only of files the diff shows whole.
package difftext

import (
	"context"
	"fmt"
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

// ReadFile returns a file's content when the diff holds all of it: the
// head side of an added file and the base side of a deleted file, whose
// every line is in the diff. Every other read — modified, renamed and
// binary files, whose unchanged lines the diff does not show, and paths
// the diff does not touch — is review.ErrNotFound; the diff's hunks are
// what a model can read of them (diff_file).
func (s *Source) ReadFile(_ context.Context, path string, rev review.Revision) ([]byte, error) {
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
// the diff changes; the rest of the repository is unknown.
func (s *Source) ListFiles(context.Context) ([]string, error) {
	var out []string
	for _, f := range s.diff.Files {
		if f.Status != diff.Deleted {
			out = append(out, f.Path())
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
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
