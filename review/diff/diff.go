// Package diff models unified diffs: files, hunks and lines with their old
// and new numbers, an index of the lines GitHub accepts review comments on,
// and the renderings a model reads.
package diff

import (
	"bytes"
	"strings"
)

// Status is how a file changed.
type Status string

// File statuses.
const (
	Added    Status = "added"
	Deleted  Status = "deleted"
	Modified Status = "modified"
	Renamed  Status = "renamed"
	Copied   Status = "copied"
)

// LineKind is the kind of a diff line.
type LineKind byte

// Line kinds.
const (
	Context LineKind = ' '
	Add     LineKind = '+'
	Delete  LineKind = '-'
)

// Line is one line of a hunk. OldLine is 0 for added lines and NewLine is 0
// for deleted lines. (A large diff holds millions of lines: the numbers are
// int32, as the parser requires, and the fields ordered to keep a Line at
// 32 bytes.)
type Line struct {
	OldLine int32
	NewLine int32
	// Text is the line without its prefix and line ending.
	Text string
	Kind LineKind
	// NoNewline marks a line followed by "\ No newline at end of file".
	NoNewline bool
	// CRLF marks a line that ended in "\r\n" (a Windows line ending); the
	// "\r" is not part of Text.
	CRLF bool
}

// Hunk is one @@ section of a file's diff.
type Hunk struct {
	OldStart, OldLines int
	NewStart, NewLines int
	// Section is the text after the closing @@ (often a function name).
	Section string
	Lines   []Line
}

// File is the diff of one file.
type File struct {
	OldPath string // empty for added files
	NewPath string // empty for deleted files
	Status  Status
	Binary  bool
	OldMode string // e.g. "100644"; empty when unchanged or unknown
	NewMode string
	// Similarity is the rename/copy similarity index, 0..100.
	Similarity int
	Hunks      []Hunk
	Additions  int
	Deletions  int
	// DiffBytes is the size of the file's hunks as diff text (headers,
	// prefixes and line endings included). GitHub refuses review comments on
	// files whose diff is about 1 MB or more; see MaxCommentableDiffBytes.
	DiffBytes int
}

// Path is the file's path on the head side, or the old path of a deleted file.
func (f *File) Path() string {
	if f.NewPath != "" {
		return f.NewPath
	}
	return f.OldPath
}

// AddedText is the file's added lines, each ending with a newline.
func (f *File) AddedText() string {
	var b strings.Builder
	for _, h := range f.Hunks {
		for _, l := range h.Lines {
			if l.Kind == Add {
				b.WriteString(l.Text)
				b.WriteByte('\n')
			}
		}
	}
	return b.String()
}

// Diff is a parsed unified diff.
type Diff struct {
	Files []*File
}

// BinaryPrefix is how far into a file GitHub (and git) look for a NUL
// byte to call it binary: a NUL further on leaves the file text, shown and
// run as text (bash, node and python run a script with a NUL on its last
// line).
const BinaryPrefix = 8000

// IsBinary reports whether content is binary by GitHub's rule: a NUL byte
// in its first BinaryPrefix bytes. It is the one test of content every
// part of MergeGuard uses.
func IsBinary(b []byte) bool {
	return bytes.IndexByte(b[:min(len(b), BinaryPrefix)], 0) >= 0
}
