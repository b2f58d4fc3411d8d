package diff

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"

	"github.com/mergeguard/mergeguard/review/text"
)

const devNull = "/dev/null"

// ParseError reports malformed diff input at a line of that input.
type ParseError struct {
	// Line is the 1-based line of the input the problem was found on.
	Line int
	Msg  string
}

// Error implements error.
func (e *ParseError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

// Parse reads a unified diff (git style, as `git diff` and GitHub's
// application/vnd.github.diff produce it) with ReadText and parses it with
// ParseString.
func Parse(r io.Reader) (*Diff, error) {
	s, err := ReadText(r)
	if err != nil {
		return nil, fmt.Errorf("parse diff: read: %w", err)
	}
	return ParseString(s)
}

// ReadText reads r to its end into one string. The string is the only
// copy: it is not read into bytes first and converted (which held a large
// diff twice), and when r knows its size (a file, a strings.Reader or
// bytes.Reader) it is allocated at that size once. The parsed lines of
// ParseString point into it.
func ReadText(r io.Reader) (string, error) {
	var b strings.Builder
	switch x := r.(type) {
	case interface{ Len() int }:
		b.Grow(x.Len() + 1)
	case interface{ Stat() (os.FileInfo, error) }:
		if fi, err := x.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size() > 0 && fi.Size() < math.MaxInt32 {
			b.Grow(int(fi.Size()) + 1)
		}
	}
	if _, err := io.Copy(&b, r); err != nil {
		return "", err
	}
	return b.String(), nil
}

// ParseString parses a unified diff. It understands git's extended headers
// (renames and copies with their similarity, new and deleted files, mode
// changes, binary files, C-quoted paths) and plain ---/+++ diffs. Text before
// the first file header (a commit message, for example) is ignored. An empty
// input is an empty diff.
//
// Malformed input is an error wrapping a *ParseError that names the line:
// a hunk whose header miscounts its lines, an unknown line in a file header
// or between hunks, a hunk outside any file. Nothing is silently dropped.
//
// A diff whose every line ends in "\r\n" (a git diff converted to Windows
// line endings by an editor or transport) is read as if converted back;
// in a normal diff, "\r" before a line's "\n" belongs to the content and is
// recorded as Line.CRLF.
func ParseString(s string) (*Diff, error) {
	if strings.TrimSpace(s) == "" {
		return &Diff{}, nil
	}
	s = normalize(s)
	files, err := parseSections(s)
	if err != nil {
		return nil, fmt.Errorf("parse diff: %w", err)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("parse diff: %w", &ParseError{Line: 1, Msg: `no file header ("diff --git" or "---"/"+++" lines) found`})
	}
	d := &Diff{Files: files}
	if err := checkGitLayout(s, d.Files); err != nil {
		return nil, fmt.Errorf("parse diff: %w", err)
	}
	for _, f := range d.Files {
		binaryByContent(f)
	}
	return d, nil
}

// gitSection starts each file's section of a git diff.
const gitSection = "diff --git "

// parseSections parses s one section at a time: the text before the first
// "diff --git" line, then each "diff --git" line with the lines up to the
// next one. go-gitdiff reads a section as it reads the whole text (it
// starts each "diff --git" line afresh, looking for a file header), but
// what it builds for one section is dropped once converted, and the lines'
// texts point into s (zeroCopy): the input is held once, not once more as
// go-gitdiff's copies of every line. A section go-gitdiff rejects is read
// again to the end of s, so that the error is the one the whole text gives.
// Errors converting a file are reported after go-gitdiff's, as when it read
// the whole text first.
func parseSections(s string) ([]*File, error) {
	var (
		files   []*File
		convErr error
	)
	start, line := 0, 1 // the section's offset and line number
	var slab lineSlab
	for start < len(s) {
		end := len(s)
		if i := strings.Index(s[start+1:], "\n"+gitSection); i >= 0 {
			end = start + 1 + i + 1
		}
		section := s[start:end]
		gfs, err := parseGit(section)
		if err != nil {
			_, _, restErr := gitdiff.Parse(&zeroCopy{s: octalBackslashes(s[start:])})
			if restErr != nil {
				return nil, lineError(restErr, s[start:], 1-line)
			}
			return nil, lineError(err, section, 1-line)
		}
		slab.rest = len(s) - start
		for _, gf := range gfs {
			f, err := convertFile(gf, &slab)
			if err != nil && convErr == nil {
				convErr = err
			}
			files = append(files, f)
		}
		line += strings.Count(section, "\n")
		start = end
	}
	return files, convErr
}

// parseGit parses one section with go-gitdiff.
func parseGit(section string) ([]*gitdiff.File, error) {
	gfs, _, err := gitdiff.Parse(&zeroCopy{s: octalBackslashes(section)})
	return gfs, err
}

// zeroCopy hands go-gitdiff the lines of a string as substrings of it
// (its parser reads through ReadString when the reader has it), where
// bufio.Reader would copy each one.
type zeroCopy struct {
	s string
}

// ReadString returns the next line with its delimiter, or the rest of the
// text and io.EOF.
func (z *zeroCopy) ReadString(delim byte) (string, error) {
	if z.s == "" {
		return "", io.EOF
	}
	i := strings.IndexByte(z.s, delim)
	if i < 0 {
		line := z.s
		z.s = ""
		return line, io.EOF
	}
	line := z.s[:i+1]
	z.s = z.s[i+1:]
	return line, nil
}

// Read implements io.Reader (go-gitdiff reads through ReadString).
func (z *zeroCopy) Read(p []byte) (int, error) {
	if z.s == "" {
		return 0, io.EOF
	}
	n := copy(p, z.s)
	z.s = z.s[n:]
	return n, nil
}

// binaryByContent makes f binary when it is binary by GitHub's rule
// (IsBinary): a NUL byte in the first BinaryPrefix bytes of either side.
// A diff made with --text (which MergeGuard asks for, so that a
// repository's .gitattributes cannot pass a text file off as binary) prints
// a binary file's bytes as lines; a NUL further on leaves the file text, as
// GitHub shows it and as bash or python run it. Where a line starts in its
// file is known while the hunks show the file from its first line on;
// past a gap, each line not shown counts one byte at least, and a NUL whose
// place cannot be told apart from the first BinaryPrefix bytes makes the
// file binary. A binary file keeps its hunks: the model is not shown
// them, the secret scan reads them.
func binaryByContent(f *File) {
	oldSide, newSide := sideOffset{next: 1}, sideOffset{next: 1}
	for i := range f.Hunks {
		for _, l := range f.Hunks[i].Lines {
			nul := strings.IndexByte(l.Text, 0)
			size := len(l.Text) + 1
			if l.CRLF {
				size++
			}
			var at [2]int
			n := 0
			if l.Kind != Add {
				at[n], n = oldSide.place(l.OldLine, size), n+1
			}
			if l.Kind != Delete {
				at[n], n = newSide.place(l.NewLine, size), n+1
			}
			if nul < 0 {
				continue
			}
			for _, off := range at[:n] {
				if off+nul < BinaryPrefix {
					f.Binary = true
					return
				}
			}
		}
	}
}

// sideOffset follows where the lines of one side of a file start: next is
// the number of the line that starts at off bytes, or later.
type sideOffset struct {
	next int32
	off  int
}

// place returns the offset of line num (size bytes long, line ending
// included), or the least it can be when lines before it are not shown,
// and moves past it.
func (s *sideOffset) place(num int32, size int) int {
	if num > s.next {
		s.off += int(num - s.next) // each unseen line is one byte at least
	}
	at := s.off
	s.next, s.off = num+1, s.off+size
	return at
}

// ParsePatch parses the hunks of one file without any file header, the form
// GitHub's pull-request files API returns in files[].patch. The file is
// returned as Modified with OldPath and NewPath set to path; the caller sets
// Status, OldPath (empty for added files, the previous name for renames and
// copies), Similarity and Binary from the file listing. An empty patch gives
// a file without hunks. Error lines count from the patch's first line.
func ParsePatch(path, patch string) (*File, error) {
	if path == "" {
		return nil, errors.New("parse patch: empty path")
	}
	f := &File{OldPath: path, NewPath: path, Status: Modified}
	if strings.TrimSpace(patch) == "" {
		return f, nil
	}
	// go-gitdiff reads hunks only after a file header: give it a synthetic
	// one (its name is irrelevant) and shift error lines back.
	const header = "diff --git a/f b/f\n--- a/f\n+++ b/f\n"
	const headerLines = 3
	patch = withFinalNewline(patch)
	gfs, _, err := gitdiff.Parse(&zeroCopy{s: header + patch})
	if err != nil {
		return nil, fmt.Errorf("parse patch %q: %w", path, lineError(err, header+patch, headerLines))
	}
	if len(gfs) != 1 {
		return nil, fmt.Errorf("parse patch %q: %w", path, &ParseError{Line: 1, Msg: "not a single file's hunks"})
	}
	pf, err := convertFile(gfs[0], nil)
	if err != nil {
		return nil, fmt.Errorf("parse patch %q: %w", path, err)
	}
	lines := newLineScanner(patch)
	if err := checkHunkRegion(&lines, pf); err != nil {
		return nil, fmt.Errorf("parse patch %q: %w", path, err)
	}
	if line, ok := lines.nextNonBlank(); ok {
		msg := fmt.Sprintf("unexpected line %q after the last hunk", text.Clip(line, 60))
		if len(pf.Hunks) == 0 {
			msg = fmt.Sprintf("unexpected line %q: a patch starts with a hunk header (@@ -a,b +c,d @@)", text.Clip(line, 60))
		}
		return nil, fmt.Errorf("parse patch %q: %w", path, &ParseError{Line: lines.n, Msg: msg})
	}
	f.Hunks, f.Additions, f.Deletions, f.DiffBytes = pf.Hunks, pf.Additions, pf.Deletions, pf.DiffBytes
	binaryByContent(f)
	return f, nil
}

// normalize undoes a whole-diff CRLF conversion and makes sure the last line
// ends in "\n", so that a missing final newline is not mistaken for a
// "\ No newline at end of file" marker.
func normalize(s string) string {
	first, rest, _ := strings.Cut(s, "\n")
	second, _, _ := strings.Cut(rest, "\n")
	// git never writes "\r" at the end of its header lines, so two leading
	// lines ending in "\r" mean the whole text was converted.
	if strings.HasSuffix(first, "\r") && strings.HasSuffix(second, "\r") {
		s = strings.ReplaceAll(s, "\r\n", "\n")
	}
	return withFinalNewline(s)
}

func withFinalNewline(s string) string {
	if !strings.HasSuffix(s, "\n") {
		return s + "\n"
	}
	return s
}

// octalBackslashes rewrites the escaped backslashes (\\) of the quoted
// names in s's file headers as the equivalent octal escape (\134), which
// keeps every line's length in lines and its meaning. go-gitdiff takes the
// quote that closes a name ending in a backslash ("b/x\\") for an escaped
// one and rejects the whole diff: a file named so would stop the review.
// Hunk lines (counted from their headers) are left alone, and s itself is
// returned when no name needs rewriting.
func octalBackslashes(s string) string {
	if !strings.Contains(s, `\\`) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 64)
	lines := newLineScanner(s)
	oldLeft, newLeft := 0, 0
	changed := false
	for {
		line, ok := lines.next()
		if !ok && !changed {
			return s // the lines keep pointing into s
		}
		if !ok {
			return b.String()
		}
		switch {
		case oldLeft > 0 || newLeft > 0:
			switch {
			case strings.HasPrefix(line, "-"):
				oldLeft--
			case strings.HasPrefix(line, "+"):
				newLeft--
			case strings.HasPrefix(line, `\`):
			default:
				oldLeft--
				newLeft--
			}
		case strings.HasPrefix(line, "@@ -"):
			oldLeft, newLeft = hunkCounts(line)
		case strings.Contains(line, `"`) && isNameLine(line) && strings.Contains(line, `\\`):
			line = strings.ReplaceAll(line, `\\`, `\134`)
			changed = true
		}
		b.WriteString(line)
		if lines.pos <= len(s) && lines.pos > 0 && s[lines.pos-1] == '\n' {
			b.WriteByte('\n')
		}
	}
}

// isNameLine reports whether line is a file header line that may hold a
// quoted name.
func isNameLine(line string) bool {
	for _, p := range [...]string{"diff --git ", "--- ", "+++ ", "rename from ", "rename to ", "copy from ", "copy to ",
		"rename old ", "rename new ", "Binary files "} {
		if strings.HasPrefix(line, p) {
			return true
		}
	}
	return false
}

// hunkCounts reads the old and new line counts of a "@@ -a,b +c,d @@"
// header; 0, 0 when it is malformed (the parser reports it).
func hunkCounts(line string) (int, int) {
	var o, n int
	rest := strings.TrimPrefix(line, "@@ -")
	oldR, rest, ok1 := strings.Cut(rest, " +")
	newR, _, ok2 := strings.Cut(rest, " @@")
	if !ok1 || !ok2 {
		return 0, 0
	}
	count := func(r string) int {
		_, c, ok := strings.Cut(r, ",")
		if !ok {
			return 1
		}
		v, err := strconv.Atoi(c)
		if err != nil || v < 0 {
			return 0
		}
		return v
	}
	o, n = count(oldR), count(newR)
	return o, n
}

// lineError turns go-gitdiff's "gitdiff: line N: msg" errors on input s
// into a *ParseError, shifting the line by the given number of synthetic
// lines. Errors about a hunk's counts are moved onto the hunk's header:
// go-gitdiff reports them on a line after the hunk, past the end of the
// input when the hunk is the last one.
func lineError(err error, s string, shift int) error {
	rest, ok := strings.CutPrefix(err.Error(), "gitdiff: line ")
	if !ok {
		return err
	}
	num, msg, ok := strings.Cut(rest, ": ")
	n, convErr := strconv.Atoi(num)
	if !ok || convErr != nil {
		return err
	}
	if strings.HasPrefix(msg, "fragment header miscounts lines") || strings.HasPrefix(msg, "fragment contains no changes") ||
		strings.HasPrefix(msg, "no content following fragment header") {
		n = hunkHeaderBefore(s, n)
	}
	return &ParseError{Line: max(n-shift, 1), Msg: msg}
}

// hunkHeaderBefore returns the number of the last "@@ -" line of s at or
// before line n, or n when there is none.
func hunkHeaderBefore(s string, n int) int {
	lines := newLineScanner(s)
	found := n
	for {
		line, ok := lines.next()
		if !ok || lines.n > n {
			return found
		}
		if strings.HasPrefix(line, "@@ -") {
			found = lines.n
		}
	}
}

// convertFile maps a go-gitdiff file onto our types and checks its hunks.
func convertFile(gf *gitdiff.File, slab *lineSlab) (*File, error) {
	f := &File{OldPath: gf.OldName, NewPath: gf.NewName, Binary: gf.IsBinary}
	switch {
	case gf.IsNew || gf.OldName == devNull:
		f.Status, f.OldPath = Added, ""
		f.NewMode = modeString(gf.NewMode)
	case gf.IsDelete || gf.NewName == devNull:
		f.Status, f.NewPath = Deleted, ""
		f.OldMode = modeString(gf.OldMode)
	case gf.IsRename:
		f.Status, f.Similarity = Renamed, gf.Score
	case gf.IsCopy:
		f.Status, f.Similarity = Copied, gf.Score
	default:
		f.Status = Modified
		if f.OldPath != f.NewPath {
			return nil, fmt.Errorf("file %q: the old name %q differs but the header shows no rename or copy", f.NewPath, f.OldPath)
		}
	}
	// go-gitdiff also reads the mode of an "index" line into OldMode; a
	// mode change has both modes ("old mode", "new mode") and they differ.
	if f.Status != Added && f.Status != Deleted && gf.OldMode != 0 && gf.NewMode != 0 && gf.OldMode != gf.NewMode {
		f.OldMode, f.NewMode = modeString(gf.OldMode), modeString(gf.NewMode)
	}
	if len(gf.TextFragments) > 0 {
		f.Hunks = make([]Hunk, len(gf.TextFragments))
	}
	// One array holds the lines of all the file's hunks.
	n := 0
	for _, frag := range gf.TextFragments {
		n += len(frag.Lines)
	}
	lines := slab.take(n)
	for i, frag := range gf.TextFragments {
		var err error
		lines, err = convertHunk(f, &f.Hunks[i], frag, lines)
		if err == nil && i > 0 {
			err = checkOrder(&f.Hunks[i-1], &f.Hunks[i])
		}
		if err != nil {
			header := hunkHeader(&Hunk{
				OldStart: int(frag.OldPosition), OldLines: int(frag.OldLines),
				NewStart: int(frag.NewPosition), NewLines: int(frag.NewLines),
			})
			return nil, fmt.Errorf("file %q: hunk %d (%s): %w", f.Path(), i+1, header, err)
		}
	}
	return f, nil
}

// lineSlab hands out the lines of the files of one diff from shared
// arrays. A large diff is millions of lines: allocated file by file, among
// go-gitdiff's garbage of the same sizes, their arrays left a tenth of the
// heap they took unusable (free slots in half-used spans); slabs of 16,384
// lines are whole pages, which the parse fills one after the other.
type lineSlab struct {
	free []Line
	// rest is the size of the text left to parse, from which the number
	// of lines still to come is guessed: a small diff gets no 512 KB slab.
	rest int
}

// slabLines is the size of a slab, in lines.
const slabLines = 16 << 10

// take returns n lines, from the slab when it is not nil and n is small
// beside a slab.
func (s *lineSlab) take(n int) []Line {
	switch {
	case n == 0:
		return nil
	case s == nil || n > slabLines/8:
		return make([]Line, n)
	case len(s.free) < n:
		// A diff's line takes about 40 bytes of its text; a guess too
		// small only means one more slab.
		s.free = make([]Line, max(n, min(slabLines, s.rest/32)))
	}
	lines := s.free[:n:n]
	s.free = s.free[n:]
	return lines
}

func modeString(m os.FileMode) string {
	if m == 0 {
		return ""
	}
	return fmt.Sprintf("%06o", uint32(m))
}

// convertHunk converts frag into h, whose lines it takes from the front of
// lines; it returns the rest.
func convertHunk(f *File, h *Hunk, frag *gitdiff.TextFragment, lines []Line) ([]Line, error) {
	for _, n := range []int64{frag.OldPosition, frag.OldLines, frag.NewPosition, frag.NewLines} {
		if n < 0 || n > math.MaxInt32 {
			return lines, fmt.Errorf("line number or count %d out of range", n)
		}
	}
	if (frag.OldPosition == 0 && frag.OldLines > 0) || (frag.NewPosition == 0 && frag.NewLines > 0) {
		return lines, errors.New("a range starting at line 0 must be empty")
	}
	// A Line's numbers are int32.
	if frag.OldPosition+frag.OldLines > math.MaxInt32 || frag.NewPosition+frag.NewLines > math.MaxInt32 {
		return lines, errors.New("a range ends past line 2147483647")
	}
	*h = Hunk{
		OldStart: int(frag.OldPosition), OldLines: int(frag.OldLines),
		NewStart: int(frag.NewPosition), NewLines: int(frag.NewLines),
		Section: frag.Comment,
		Lines:   lines[:len(frag.Lines):len(frag.Lines)],
	}
	f.DiffBytes += len(hunkHeader(h)) + 1
	oldN, newN := int32(frag.OldPosition), int32(frag.NewPosition) //nolint:gosec // in range: checked above
	for i, gl := range frag.Lines {
		l := &h.Lines[i]
		text := gl.Line
		f.DiffBytes += len(text) + 1
		if t, ok := strings.CutSuffix(text, "\n"); ok {
			text = t
			if t, ok := strings.CutSuffix(text, "\r"); ok {
				text, l.CRLF = t, true
			}
		} else {
			l.NoNewline = true
			f.DiffBytes += 1 + len(noNewlineMarker) + 1
		}
		l.Text = text
		switch gl.Op {
		case gitdiff.OpContext:
			l.Kind, l.OldLine, l.NewLine = Context, oldN, newN
			oldN++
			newN++
		case gitdiff.OpAdd:
			l.Kind, l.NewLine = Add, newN
			newN++
			f.Additions++
		case gitdiff.OpDelete:
			l.Kind, l.OldLine = Delete, oldN
			oldN++
			f.Deletions++
		}
	}
	return lines[len(frag.Lines):], nil
}

// checkOrder rejects hunks that overlap or go backwards on either side.
func checkOrder(prev, h *Hunk) error {
	if rangeFrom(h.OldStart, h.OldLines) < rangeEnd(prev.OldStart, prev.OldLines) ||
		rangeFrom(h.NewStart, h.NewLines) < rangeEnd(prev.NewStart, prev.NewLines) {
		return errors.New("overlaps or precedes the previous hunk")
	}
	return nil
}

// rangeFrom is the first line of a hunk range; an empty range "@@ -5,0" sits
// after line 5.
func rangeFrom(start, n int) int {
	if n == 0 {
		return start + 1
	}
	return start
}

// rangeEnd is one past the last line of a hunk range.
func rangeEnd(start, n int) int { return rangeFrom(start, n) + n }

// isGitHeaderLine reports whether line is one of the extended header lines
// git writes between "diff --git" and the first hunk.
func isGitHeaderLine(line string) bool {
	for _, p := range [...]string{
		"--- ", "+++ ", "old mode ", "new mode ", "deleted file mode ", "new file mode ",
		"copy from ", "copy to ", "rename from ", "rename to ", "rename old ", "rename new ",
		"similarity index ", "dissimilarity index ", "index ",
	} {
		if strings.HasPrefix(line, p) {
			return true
		}
	}
	return false
}

// checkGitLayout walks a git diff a second time, knowing each file's hunks,
// and rejects any line go-gitdiff skipped silently: text inside a file
// header, between or after hunks (a hunk header that undercounts its lines
// leaves some behind), or hunks before the first "diff --git" line. Files
// are matched to "diff --git" sections in order. Free text is allowed before
// the first section (a commit message) and after a "-- " line (the signature
// that ends a git format-patch email). Diffs without "diff --git" lines
// (plain ---/+++ diffs) are not checked.
func checkGitLayout(s string, files []*File) error {
	lines := newLineScanner(s)
	fileIdx := -1
	freeText := true
	for {
		line, ok := lines.next()
		switch {
		case !ok:
			return nil
		case strings.HasPrefix(line, "diff --git "):
			fileIdx++
			if fileIdx >= len(files) {
				return &ParseError{Line: lines.n, Msg: "file header that was not parsed as a file"}
			}
			if err := checkGitFile(&lines, files[fileIdx]); err != nil {
				return err
			}
			freeText = false
		case freeText:
			if strings.HasPrefix(line, "@@ -") {
				return &ParseError{Line: lines.n, Msg: fmt.Sprintf("hunk %q outside a \"diff --git\" section", text.Clip(line, 60))}
			}
		case line == "-- " || line == "--":
			freeText = true
		case strings.TrimSpace(line) != "":
			return &ParseError{Line: lines.n, Msg: fmt.Sprintf("unexpected line %q after file %q (does a hunk header miscount its lines?)", text.Clip(line, 60), files[fileIdx].Path())}
		}
	}
}

// checkGitFile checks one file's section after its "diff --git" line and
// leaves the scanner on the section's last line.
func checkGitFile(lines *lineScanner, f *File) error {
	for {
		line, ok := lines.peek()
		if !ok || strings.HasPrefix(line, "diff --git ") {
			return nil
		}
		switch {
		case strings.HasPrefix(line, "@@ -"):
			return checkHunkRegion(lines, f)
		case line == "GIT binary patch" || (strings.HasSuffix(line, " differ") &&
			(strings.HasPrefix(line, "Binary files ") || strings.HasPrefix(line, "Files "))):
			lines.skipUntil("diff --git ") // go-gitdiff validates binary data
			return nil
		case isGitHeaderLine(line):
			lines.next()
		default:
			lines.next()
			return &ParseError{Line: lines.n, Msg: fmt.Sprintf("unexpected line %q in the header of file %q", text.Clip(line, 60), f.Path())}
		}
	}
}

// checkHunkRegion consumes f's hunks from the scanner, checking that each
// starts where the previous one ended.
func checkHunkRegion(lines *lineScanner, f *File) error {
	for i := range f.Hunks {
		h := &f.Hunks[i]
		line, ok := lines.next()
		if !ok || !strings.HasPrefix(line, "@@ -") {
			return &ParseError{Line: lines.n, Msg: fmt.Sprintf("unexpected line %q where hunk %d of file %q should start (does a hunk header miscount its lines?)", text.Clip(line, 60), i+1, f.Path())}
		}
		n := len(h.Lines)
		for _, l := range h.Lines {
			if l.NoNewline {
				n++ // its "\ No newline at end of file" marker
			}
		}
		lines.skip(n)
	}
	return nil
}

// lineScanner iterates over the lines of a text without allocating.
type lineScanner struct {
	s   string
	pos int
	n   int // number of the line last returned, 1-based
}

func newLineScanner(s string) lineScanner { return lineScanner{s: s} }

// next returns the next line without its "\n".
func (l *lineScanner) next() (string, bool) {
	if l.pos >= len(l.s) {
		return "", false
	}
	end := strings.IndexByte(l.s[l.pos:], '\n')
	var line string
	if end < 0 {
		line, l.pos = l.s[l.pos:], len(l.s)
	} else {
		line, l.pos = l.s[l.pos:l.pos+end], l.pos+end+1
	}
	l.n++
	return line, true
}

// peek returns the next line without consuming it.
func (l *lineScanner) peek() (string, bool) {
	c := *l
	return c.next()
}

func (l *lineScanner) skip(n int) {
	for range n {
		if _, ok := l.next(); !ok {
			return
		}
	}
}

// skipUntil consumes lines until the next one starts with prefix.
func (l *lineScanner) skipUntil(prefix string) {
	for {
		line, ok := l.peek()
		if !ok || strings.HasPrefix(line, prefix) {
			return
		}
		l.next()
	}
}

// nextNonBlank returns the next line that is not blank.
func (l *lineScanner) nextNonBlank() (string, bool) {
	for {
		line, ok := l.next()
		if !ok || strings.TrimSpace(line) != "" {
			return line, ok
		}
	}
}
