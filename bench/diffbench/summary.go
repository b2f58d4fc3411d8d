// Package diffbench compares MergeGuard's diff parser and index of
// commentable lines (review/diff) with reviewdog's parser and diff filter,
// sourcegraph/go-diff and bluekeyes/go-gitdiff on the same diffs: first it
// checks that all four read each diff alike, then it times them.
package diffbench

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
	rddiff "github.com/reviewdog/reviewdog/diff"
	"github.com/reviewdog/reviewdog/filter"
	sgdiff "github.com/sourcegraph/go-diff/diff"

	"github.com/mergeguard/mergeguard/review"
	mgdiff "github.com/mergeguard/mergeguard/review/diff"
)

// FileSummary is what an implementation read of one file of a diff: its
// head path (the old path of a deleted file), its added and deleted lines
// and the lines of the new file a review comment may be placed on (RIGHT
// side: added and context lines, by their new numbers).
type FileSummary struct {
	Path             string
	Added, Deleted   int
	RightCommentable []int
}

// Summary is an implementation's reading of a diff: the files with text
// changes (at least one hunk), by path. Entries without hunks (binary
// files, mode-only changes, pure renames) are left out: the peers do not
// all report them.
type Summary []FileSummary

// Impl is one implementation under comparison.
type Impl struct {
	// Name names the implementation in tables.
	Name string
	// Run parses (and, where the implementation has one, indexes) the
	// diff, given as bytes and as a string (both made before timing, so
	// that each implementation takes the form it reads without a copy):
	// the work that is timed.
	Run func(b []byte, s string) error
	// Summarize parses the diff and reports what was read.
	Summarize func(in []byte) (Summary, error)
}

// Impls are the four implementations, MergeGuard's first.
func Impls() []Impl {
	return []Impl{
		{Name: "mergeguard (ParseString + NewIndex)", Run: runOurs, Summarize: summarizeOurs},
		{Name: "reviewdog (ParseMultiFile + NewDiffFilter)", Run: runReviewdog, Summarize: summarizeReviewdog},
		{Name: "sourcegraph/go-diff (ParseMultiFileDiff)", Run: runGoDiff, Summarize: summarizeGoDiff},
		{Name: "bluekeyes/go-gitdiff (Parse)", Run: runGitdiff, Summarize: summarizeGitdiff},
	}
}

// OursReader is MergeGuard's Parse(io.Reader) + NewIndex, timed beside
// ParseString.
func OursReader() Impl {
	return Impl{Name: "mergeguard (Parse(io.Reader) + NewIndex)", Run: func(in []byte, _ string) error {
		d, err := mgdiff.Parse(bytes.NewReader(in))
		if err != nil {
			return err
		}
		_ = mgdiff.NewIndex(d)
		return nil
	}, Summarize: summarizeOurs}
}

func runOurs(_ []byte, in string) error {
	d, err := mgdiff.ParseString(in)
	if err != nil {
		return err
	}
	_ = mgdiff.NewIndex(d)
	return nil
}

func summarizeOurs(in []byte) (Summary, error) {
	d, err := mgdiff.ParseString(string(in))
	if err != nil {
		return nil, err
	}
	idx := mgdiff.NewIndex(d)
	var s Summary
	for _, f := range d.Files {
		if len(f.Hunks) == 0 {
			continue
		}
		fs := FileSummary{Path: f.Path(), Added: f.Additions, Deleted: f.Deletions}
		last := 0
		for _, h := range f.Hunks {
			last = max(last, h.NewStart+h.NewLines)
		}
		for line := 1; line <= last+1; line++ { // ask the index about every line
			if idx.Commentable(f.Path(), review.SideRight, line) {
				fs.RightCommentable = append(fs.RightCommentable, line)
			}
		}
		s = append(s, fs)
	}
	return s, nil
}

func runReviewdog(in []byte, _ string) error {
	fds, err := rddiff.ParseMultiFile(bytes.NewReader(in))
	if err != nil {
		return err
	}
	_ = filter.NewDiffFilter(fds, 1, "", filter.ModeDiffContext)
	return nil
}

func summarizeReviewdog(in []byte) (Summary, error) {
	fds, err := rddiff.ParseMultiFile(bytes.NewReader(in))
	if err != nil {
		return nil, err
	}
	df := filter.NewDiffFilter(fds, 1, "", filter.ModeDiffContext)
	var s Summary
	for _, fd := range fds {
		if len(fd.Hunks) == 0 {
			continue
		}
		path := headPath(fd.PathOld, fd.PathNew)
		fs := FileSummary{Path: path}
		last := 0
		for _, h := range fd.Hunks {
			last = max(last, h.StartLineNew+h.LineLengthNew)
			for _, l := range h.Lines {
				switch l.Type {
				case rddiff.LineAdded:
					fs.Added++
				case rddiff.LineDeleted:
					fs.Deleted++
				}
			}
		}
		if fd.PathNew != "/dev/null" {
			for line := 1; line <= last+1; line++ { // ask the filter about every line
				if ok, _, dl := df.ShouldReport(path, line); ok && dl != nil {
					fs.RightCommentable = append(fs.RightCommentable, line)
				}
			}
		}
		s = append(s, fs)
	}
	return s, nil
}

func runGoDiff(in []byte, _ string) error {
	_, err := sgdiff.ParseMultiFileDiff(in)
	return err
}

func summarizeGoDiff(in []byte) (Summary, error) {
	fds, err := sgdiff.ParseMultiFileDiff(in)
	if err != nil {
		return nil, err
	}
	var s Summary
	for _, fd := range fds {
		if len(fd.Hunks) == 0 {
			continue
		}
		fs := FileSummary{Path: headPath(fd.OrigName, fd.NewName)}
		for _, h := range fd.Hunks {
			n := int(h.NewStartLine)
			for _, line := range strings.SplitAfter(strings.TrimSuffix(string(h.Body), "\n"), "\n") {
				switch {
				case strings.HasPrefix(line, "+"):
					fs.Added++
				case strings.HasPrefix(line, "-"):
					fs.Deleted++
					continue
				case strings.HasPrefix(line, "\\"):
					continue
				}
				if fd.NewName != "/dev/null" {
					fs.RightCommentable = append(fs.RightCommentable, n)
				}
				n++
			}
		}
		s = append(s, fs)
	}
	return s, nil
}

func runGitdiff(in []byte, _ string) error {
	_, _, err := gitdiff.Parse(bytes.NewReader(in))
	return err
}

func summarizeGitdiff(in []byte) (Summary, error) {
	files, _, err := gitdiff.Parse(bytes.NewReader(in))
	if err != nil {
		return nil, err
	}
	var s Summary
	for _, f := range files {
		if len(f.TextFragments) == 0 {
			continue
		}
		path := f.NewName
		if f.IsDelete {
			path = f.OldName
		}
		fs := FileSummary{Path: path}
		for _, frag := range f.TextFragments {
			n := int(frag.NewPosition)
			for _, l := range frag.Lines {
				switch l.Op {
				case gitdiff.OpAdd:
					fs.Added++
				case gitdiff.OpDelete:
					fs.Deleted++
					continue
				}
				if !f.IsDelete {
					fs.RightCommentable = append(fs.RightCommentable, n)
				}
				n++
			}
		}
		s = append(s, fs)
	}
	return s, nil
}

// headPath is the path a file is known by: its new path without git's
// "b/" prefix, or the old one without "a/" when the file was deleted.
func headPath(oldName, newName string) string {
	if newName == "/dev/null" || newName == "" {
		return strings.TrimPrefix(oldName, "a/")
	}
	return strings.TrimPrefix(newName, "b/")
}

// Compare reports how b's reading of a diff differs from a's, or "" when
// they agree: same files in the same order, same counts, same RIGHT-side
// commentable lines.
func Compare(a, b Summary) string {
	if len(a) != len(b) {
		return fmt.Sprintf("%d files, want %d (%v vs %v)", len(b), len(a), paths(b), paths(a))
	}
	for i := range a {
		x, y := a[i], b[i]
		switch {
		case x.Path != y.Path:
			return fmt.Sprintf("file %d is %q, want %q", i, y.Path, x.Path)
		case x.Added != y.Added || x.Deleted != y.Deleted:
			return fmt.Sprintf("%s: +%d -%d, want +%d -%d", x.Path, y.Added, y.Deleted, x.Added, x.Deleted)
		case !slices.Equal(x.RightCommentable, y.RightCommentable):
			return fmt.Sprintf("%s: %d RIGHT-side commentable lines, want %d (or other lines)", x.Path,
				len(y.RightCommentable), len(x.RightCommentable))
		}
	}
	return ""
}

func paths(s Summary) []string {
	out := make([]string, len(s))
	for i, f := range s {
		out[i] = f.Path
	}
	return out
}
