package diff

import (
	"sort"

	"github.com/mergeguard/mergeguard/review"
)

// MaxCommentableDiffBytes is the size of a file's diff above which the index
// treats none of its lines as commentable. GitHub rejects review comments on
// files whose diff is about 1 MB (measured by a third party, ReviewNB, and
// called a known limitation by GitHub support), and a single rejected
// comment fails the whole review. The bound is kept a little under 1 MiB.
const MaxCommentableDiffBytes = 1_000_000

// Index answers where GitHub accepts review comments (pulls/create-review
// with line, side, start_line, start_side) on a diff:
//
//   - a comment's path is the file's head path (Path), the new name of a
//     renamed file;
//   - RIGHT lines are added and context lines, numbered in the new file;
//   - LEFT lines are deleted and context lines, numbered in the old file
//     (GitHub documents LEFT for deleted lines; a context line shows on both
//     sides of the split view, but RIGHT is the side to anchor it on);
//   - lines outside every hunk (between hunks, past the last one) are not
//     commentable, nor is any line of a binary file, a mode-only change, a
//     rename without changes, or a file whose diff is too large
//     (MaxCommentableDiffBytes);
//   - a multi-line comment's first and last line lie in the same hunk.
//
// Every line of a hunk's range on one side is either a changed or a context
// line, so the commentable lines of a side are exactly the hunks' ranges: the
// index keeps those ranges sorted and answers by binary search.
//
// An Index is read-only after NewIndex and safe for concurrent use.
type Index struct {
	files map[string]*indexedFile
}

type indexedFile struct {
	file        *File
	commentable bool
	left, right []span // sorted, disjoint
}

// span is the range of one hunk on one side.
type span struct {
	first, last int // inclusive
}

// NewIndex indexes the files of d by path. When two entries share a path (git
// shows a type change, such as a symlink replaced by a file, as a deletion and
// an addition), the entry that is not a deletion wins.
func NewIndex(d *Diff) *Index {
	idx := &Index{files: make(map[string]*indexedFile, len(d.Files))}
	for _, f := range d.Files {
		path := f.Path()
		if prev, ok := idx.files[path]; ok && (f.Status == Deleted || prev.file.Status != Deleted) {
			continue
		}
		ixf := &indexedFile{
			file:        f,
			commentable: !f.Binary && f.DiffBytes <= MaxCommentableDiffBytes,
		}
		for i := range f.Hunks {
			h := &f.Hunks[i]
			if h.OldLines > 0 {
				ixf.left = append(ixf.left, span{first: h.OldStart, last: h.OldStart + h.OldLines - 1})
			}
			if h.NewLines > 0 {
				ixf.right = append(ixf.right, span{first: h.NewStart, last: h.NewStart + h.NewLines - 1})
			}
		}
		idx.files[path] = ixf
	}
	return idx
}

// File returns the diff of the file at path (its head path; the old path for
// a deleted file).
func (x *Index) File(path string) (*File, bool) {
	ixf, ok := x.files[path]
	if !ok {
		return nil, false
	}
	return ixf.file, true
}

// spans returns the hunk ranges of one side of a file, or nil.
func (x *Index) spans(path string, side review.Side) []span {
	ixf, ok := x.files[path]
	if !ok {
		return nil
	}
	switch side {
	case review.SideLeft:
		return ixf.left
	case review.SideRight:
		return ixf.right
	}
	return nil
}

// find returns the position in spans of the span holding line.
func find(spans []span, line int) (int, bool) {
	i := sort.Search(len(spans), func(i int) bool { return spans[i].last >= line })
	return i, i < len(spans) && spans[i].first <= line
}

// commentableSpans is spans for a file GitHub accepts comments on.
func (x *Index) commentableSpans(path string, side review.Side) []span {
	if ixf, ok := x.files[path]; !ok || !ixf.commentable {
		return nil
	}
	return x.spans(path, side)
}

// Commentable reports whether GitHub accepts a review comment on line of
// path on side: an added or context line by its new number on RIGHT, a
// deleted or context line by its old number on LEFT.
func (x *Index) Commentable(path string, side review.Side, line int) bool {
	_, ok := find(x.commentableSpans(path, side), line)
	return ok
}

// CommentableRange reports whether GitHub accepts a comment on lines start
// through end of path, both on side: both ends commentable and in the same
// hunk, start <= end. When start == end it is a single-line comment, and
// the review must then leave start_line and start_side out: GitHub rejects
// start_line == line ("start line must precede the end line").
func (x *Index) CommentableRange(path string, side review.Side, start, end int) bool {
	if start > end {
		return false
	}
	spans := x.commentableSpans(path, side)
	i, ok := find(spans, start)
	return ok && end <= spans[i].last
}

// NearestCommentable returns the commentable line of path on side closest
// to line and at most within lines away from it: line itself when it is
// commentable; on a tie, the earlier line. It snaps a model's slightly-off
// citation onto the diff.
func (x *Index) NearestCommentable(path string, side review.Side, line, within int) (int, bool) {
	if within < 0 {
		return 0, false
	}
	spans := x.commentableSpans(path, side)
	i, ok := find(spans, line)
	if ok {
		return line, true
	}
	// spans[i] (if any) starts after line; spans[i-1] (if any) ends before.
	// Hunk lines are below 2^32: clamping line to ±2^40 keeps the distances
	// from overflowing and changes no answer for a within below 2^39.
	line = min(max(line, -1<<40), 1<<40)
	best, dist, found := 0, 0, false
	if i > 0 {
		best, dist, found = spans[i-1].last, line-spans[i-1].last, true
	}
	if i < len(spans) {
		if d := spans[i].first - line; !found || d < dist {
			best, dist, found = spans[i].first, d, true
		}
	}
	if !found || dist > within {
		return 0, false
	}
	return best, true
}
