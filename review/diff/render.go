package diff

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/mergeguard/mergeguard/review"
)

// RenderOptions tunes Render.
type RenderOptions struct {
	// MaxContext, when positive, keeps at most this many unchanged lines
	// before and after each change; each longer run of context lines is
	// replaced by one "... N unchanged lines" line. Hunks, their headers and
	// all line numbers stay as they are. Zero shows every context line of the
	// diff. A diff cannot show more context than it was made with (git and
	// GitHub use 3 lines); more needs the file's content.
	MaxContext int
	// OldNumbers adds a column of old-side line numbers before the new-side
	// one, so that deleted lines can be cited (on LEFT).
	OldNumbers bool
}

// Render writes f for a model to read: a header with the path and the kind
// of change, then each hunk's "@@ -a,b +c,d @@ section" line and its lines.
// Added and context lines carry their new-side line number, removed lines
// none, so that the numbers a model cites are real new-side (RIGHT) lines,
// as in "  42 + added code", "  43   context code" and "     - removed code".
// The number column is at least 4 wide. Line endings are not shown; a file
// with CRLF lines says so in the header. The output is deterministic.
func Render(f *File, opts RenderOptions) string {
	var b strings.Builder
	renderHeader(&b, f)
	if f.Binary {
		b.WriteString("Binary file: no text diff.\n")
		return b.String()
	}
	if len(f.Hunks) == 0 {
		b.WriteString("No text changes.\n")
		return b.String()
	}
	r := renderer{b: &b, opts: opts, width: 4}
	for i := range f.Hunks {
		h := &f.Hunks[i]
		r.width = max(r.width, len(strconv.Itoa(h.NewStart+h.NewLines)))
		if opts.OldNumbers {
			r.width = max(r.width, len(strconv.Itoa(h.OldStart+h.OldLines)))
		}
	}
	for i := range f.Hunks {
		r.hunk(&f.Hunks[i])
	}
	return b.String()
}

func renderHeader(b *strings.Builder, f *File) {
	fmt.Fprintf(b, "File: %s\n", ShowPath(f.Path()))
	b.WriteString("Change: ")
	b.WriteString(string(f.Status))
	switch f.Status {
	case Renamed, Copied:
		fmt.Fprintf(b, " from %s (similarity %d%%)", ShowPath(f.OldPath), f.Similarity)
	}
	if f.OldMode != "" && f.NewMode != "" && f.OldMode != f.NewMode {
		fmt.Fprintf(b, ", mode %s -> %s", f.OldMode, f.NewMode)
	}
	fmt.Fprintf(b, ", +%d -%d\n", f.Additions, f.Deletions)
	crlf, lf := 0, 0
	for i := range f.Hunks {
		for _, l := range f.Hunks[i].Lines {
			switch {
			case l.CRLF:
				crlf++
			case !l.NoNewline:
				lf++
			}
		}
	}
	switch {
	case crlf > 0 && lf == 0:
		b.WriteString("Line endings: CRLF\n")
	case crlf > 0:
		b.WriteString("Line endings: mixed CRLF and LF\n")
	}
}

type renderer struct {
	b     *strings.Builder
	opts  RenderOptions
	width int
}

func (r *renderer) hunk(h *Hunk) {
	r.b.WriteString(hunkHeader(h))
	r.b.WriteByte('\n')
	keep := r.keptLines(h)
	for i := 0; i < len(h.Lines); i++ {
		if !keep[i] {
			j := i
			for j < len(h.Lines) && !keep[j] {
				j++
			}
			r.row("", "", ' ', fmt.Sprintf("... %d unchanged lines", j-i))
			i = j - 1
			continue
		}
		l := &h.Lines[i]
		var oldNum, newNum string
		if l.OldLine > 0 && r.opts.OldNumbers {
			oldNum = strconv.Itoa(int(l.OldLine))
		}
		if l.NewLine > 0 {
			newNum = strconv.Itoa(int(l.NewLine))
		}
		r.row(oldNum, newNum, byte(l.Kind), l.Text)
		if l.NoNewline {
			r.row("", "", ' ', noNewlineMarker)
		}
	}
}

// row writes one rendered line: the number columns, the marker and the text.
func (r *renderer) row(oldNum, newNum string, marker byte, text string) {
	var line strings.Builder
	if r.opts.OldNumbers {
		fmt.Fprintf(&line, "%*s ", r.width, oldNum)
	}
	fmt.Fprintf(&line, "%*s %c %s", r.width, newNum, marker, text)
	r.b.WriteString(strings.TrimRight(line.String(), " "))
	r.b.WriteByte('\n')
}

// keptLines marks the lines of h that MaxContext keeps.
func (r *renderer) keptLines(h *Hunk) []bool {
	keep := make([]bool, len(h.Lines))
	n := min(r.opts.MaxContext, len(h.Lines))
	if n <= 0 {
		for i := range keep {
			keep[i] = true
		}
		return keep
	}
	// Keep each change and the n lines on either side of it: one pass
	// forward from the last change seen, one backward from the next.
	last := -n - 1
	for i, l := range h.Lines {
		if l.Kind != Context {
			last = i
		}
		keep[i] = i-last <= n
	}
	next := len(h.Lines) + n + 1
	for i := len(h.Lines) - 1; i >= 0; i-- {
		if h.Lines[i].Kind != Context {
			next = i
		}
		keep[i] = keep[i] || next-i <= n
	}
	return keep
}

// Paginate returns the page of f holding hunks startHunk through endHunk
// (1-based, inclusive; endHunk past the last hunk is cut to it) and the
// number of hunks of f. A page never cuts a hunk. The page shares f's header
// fields (paths, status, counts) and hunks; only Hunks is narrowed. A file
// without hunks (binary, mode change, pure rename) has a single empty page 1.
func Paginate(f *File, startHunk, endHunk int) (page *File, total int, err error) {
	total = len(f.Hunks)
	switch {
	case startHunk < 1:
		return nil, total, fmt.Errorf("paginate %s: start hunk %d: hunks are numbered from 1", f.Path(), startHunk)
	case endHunk < startHunk:
		return nil, total, fmt.Errorf("paginate %s: end hunk %d is before start hunk %d", f.Path(), endHunk, startHunk)
	case total == 0 && startHunk == 1:
		p := *f
		return &p, 0, nil
	case startHunk > total:
		return nil, total, fmt.Errorf("paginate %s: start hunk %d is past the last hunk (the file has %d)", f.Path(), startHunk, total)
	}
	endHunk = min(endHunk, total)
	p := *f
	p.Hunks = f.Hunks[startHunk-1 : endHunk : endHunk]
	return &p, total, nil
}

// Lines returns the text of lines start through end of f on side, as the
// diff shows them: new-side (added and context) lines for RIGHT, old-side
// (deleted and context) lines for LEFT. It reports false when any line of
// the range is not in the diff or the range is empty.
func Lines(f *File, side review.Side, start, end int) ([]string, bool) {
	if start < 1 || end < start || (side != review.SideLeft && side != review.SideRight) {
		return nil, false
	}
	var out []string
	for i := range f.Hunks {
		h := &f.Hunks[i]
		first, n := h.NewStart, h.NewLines
		if side == review.SideLeft {
			first, n = h.OldStart, h.OldLines
		}
		if n == 0 || first+n-1 < start || first > end {
			continue
		}
		for _, l := range h.Lines {
			num := int(l.NewLine)
			if side == review.SideLeft {
				num = int(l.OldLine)
			}
			if num >= start && num <= end && num == start+len(out) {
				out = append(out, l.Text)
			}
		}
	}
	if len(out) != end-start+1 {
		return nil, false
	}
	return out, true
}
