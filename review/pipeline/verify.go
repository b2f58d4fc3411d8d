package pipeline

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/analyzer"
	"github.com/mergeguard/mergeguard/review/diff"
)

// snapWithin is how far (in lines) a finding is moved to where its snippet
// really is, or to the nearest commentable line, and still counts as
// verified: models often miscount by a line or two.
const snapWithin = 5

// verifier checks findings deterministically against the diff and, for
// lines outside it, the file at the cited revision. It is used by one
// goroutine.
type verifier struct {
	src   review.Source
	d     *diff.Diff
	idx   *diff.Index
	files map[string]fileText // path@revision → content
}

type fileText struct {
	lines []string
	err   error
}

func newVerifier(src review.Source, d *diff.Diff, idx *diff.Index) *verifier {
	return &verifier{src: src, d: d, idx: idx, files: map[string]fileText{}}
}

// verify sets the finding's verification status, reason, anchor and
// fingerprint. "In the diff" means in a hunk of the file's diff on the
// finding's side, whether or not GitHub accepts a comment there (a huge
// file's diff takes none): where the finding is posted is the publisher's
// business, not the verdict's.
//
//   - false_positive: the file is not in the diff (its path is matched
//     byte for byte), the cited lines are not in the file, or the cited code
//     (the snippet) matches nothing in the file at the cited revision — a
//     hallucination. It is kept for the record, never posted, never counted.
//   - verified: the cited code is at (or within a few lines of) the cited
//     lines of the diff, re-anchored where it is; or a built-in analyzer's
//     finding without a snippet on lines of the diff. Either way the
//     detector is exact: a heuristic analyzer's finding is likely at best
//     (analyzer.Exact).
//   - likely: a finding WITHOUT a snippet on (or within three lines of)
//     lines of the diff — nothing to check it by — or a heuristic
//     analyzer's finding at its lines.
//   - unverified: real but unchecked: a finding without a snippet on lines
//     outside the diff or without lines, the cited code found in the file
//     away from the cited lines (re-anchored there), or a file that could
//     not be read to check.
func (v *verifier) verify(ctx context.Context, f review.Finding) review.Finding {
	if f.Side != review.SideLeft {
		f.Side = review.SideRight
	}
	file, path, ok := v.lookup(f.FilePath)
	if !ok {
		return v.fingerprint(ctx, mark(f, review.FalsePositive, fmt.Sprintf("file %q is not part of the diff", f.FilePath)), nil)
	}
	f.FilePath = path
	if f.LineEnd < f.LineStart {
		f.LineEnd = f.LineStart
	}
	if snippet := snippetLines(f.CodeSnippet); len(snippet) > 0 {
		f = v.withSnippet(ctx, f, file, snippet)
	} else {
		f = v.withoutSnippet(ctx, f, file)
	}
	return v.fingerprint(ctx, f, file)
}

// withSnippet judges a finding by its cited code: where it is in the
// file's diff, else in the file at the cited revision.
func (v *verifier) withSnippet(ctx context.Context, f review.Finding, file *diff.File, snippet []string) review.Finding {
	start, end := max(f.LineStart, 0), max(f.LineEnd, 0)
	if m, ok := v.findSnippet(file, f.Side, snippet, start, end); ok {
		cited := fmt.Sprintf("%d-%d", f.LineStart, f.LineEnd)
		if start == 0 || m.distance > 0 || !v.idx.CommentableRange(f.FilePath, f.Side, start, end) {
			f.LineStart, f.LineEnd = m.start, m.end
		}
		switch {
		case start == 0:
			return mark(f, review.Unverified, "no line cited; anchored where the cited code is")
		case m.distance > snapWithin:
			return mark(f, review.Unverified, fmt.Sprintf("the cited code is at lines %d-%d, not %s", m.start, m.end, cited))
		case m.distance > 0:
			return v.atLines(f, fmt.Sprintf("re-anchored from lines %s to where the cited code is", cited))
		}
		return v.atLines(f, "")
	}
	return v.snippetInFile(ctx, f, snippet)
}

// atLines marks a finding whose cited code is at its lines: verified, or
// likely for a heuristic analyzer.
func (v *verifier) atLines(f review.Finding, reason string) review.Finding {
	if analyzer.IsAnalyzer(f) && !analyzer.Exact(f) {
		return mark(f, review.Likely, strings.TrimPrefix(reason+"; a heuristic check, not an exact one", "; "))
	}
	return mark(f, review.Verified, reason)
}

// snippetInFile judges a finding whose cited code is not in the file's
// diff, against the file's content at the cited side's revision: the code
// is there (outside the diff: unverified, anchored where it is) or it is a
// hallucination.
func (v *verifier) snippetInFile(ctx context.Context, f review.Finding, snippet []string) review.Finding {
	lines, judged, ok := v.citedFile(ctx, f,
		// Only the diff of this file is known (a bare diff): the cited code
		// is neither at the cited lines nor anywhere in what was reviewed.
		mark(f, review.FalsePositive, "the cited code is not in the file's diff (the rest of the file is not known)"),
		mark(f, review.Unverified, "the cited code is not in the diff; the file could not be read to check it"))
	if !ok {
		return judged
	}
	rev := sideRevision(f.Side)
	m, ok := locateSnippet(lines, snippet, max(f.LineStart, 0), max(f.LineEnd, 0))
	if !ok {
		return mark(f, review.FalsePositive, fmt.Sprintf("the cited code is not in %s at the %s revision", f.FilePath, rev))
	}
	f.LineStart, f.LineEnd = m.start, m.end
	return mark(f, review.Unverified, "the cited code is outside the diff")
}

// withoutSnippet judges a finding that cites no code: only its lines can be
// checked.
func (v *verifier) withoutSnippet(ctx context.Context, f review.Finding, file *diff.File) review.Finding {
	if f.LineStart < 1 {
		return mark(f, review.Unverified, "no line cited")
	}
	if inOneHunk(file, f.Side, f.LineStart, f.LineEnd) {
		if analyzer.IsAnalyzer(f) {
			// The detector read these very lines of the diff.
			return v.atLines(f, "")
		}
		return mark(f, review.Likely, "no code snippet to check")
	}
	s, okS := v.idx.NearestCommentable(f.FilePath, f.Side, f.LineStart, 3)
	e, okE := v.idx.NearestCommentable(f.FilePath, f.Side, f.LineEnd, 3)
	if okS && okE && v.idx.CommentableRange(f.FilePath, f.Side, s, e) {
		f = mark(f, review.Likely, fmt.Sprintf("snapped from lines %d-%d to the nearest lines of the diff", f.LineStart, f.LineEnd))
		f.LineStart, f.LineEnd = s, e
		return f
	}
	return v.outsideDiff(ctx, f)
}

// inOneHunk reports whether lines start..end of f on side lie in one hunk.
func inOneHunk(f *diff.File, side review.Side, start, end int) bool {
	for i := range f.Hunks {
		h := &f.Hunks[i]
		first, n := h.NewStart, h.NewLines
		if side == review.SideLeft {
			first, n = h.OldStart, h.OldLines
		}
		if n > 0 && start >= first && end <= first+n-1 {
			return true
		}
	}
	return false
}

// sideRevision is the revision a side's line numbers refer to.
func sideRevision(s review.Side) review.Revision {
	if s == review.SideLeft {
		return review.Base
	}
	return review.Head
}

// outsideDiff judges a finding without a snippet whose lines are not in the
// diff, against the file's content at the cited side's revision.
func (v *verifier) outsideDiff(ctx context.Context, f review.Finding) review.Finding {
	lines, judged, ok := v.citedFile(ctx, f,
		// The diff says the file is there: the source just cannot read it
		// (a bare diff holds only the changed lines of a modified file).
		mark(f, review.Unverified, "lines outside the diff; only the diff of this file is known"),
		mark(f, review.Unverified, "lines outside the diff; the file could not be read to check them"))
	if !ok {
		return judged
	}
	f.LineEnd = min(f.LineEnd, len(lines))
	return mark(f, review.Unverified, "the cited lines are outside the diff")
}

// citedFile reads the file a finding cites, at its side's revision, for the
// checks of code outside the diff. When that cannot be done it returns the
// finding judged instead (ok false): onlyDiff when the diff says the file
// exists but only its diff is known, unreadable when reading failed, a
// false positive when the file does not exist there or the cited line is
// past its end.
func (v *verifier) citedFile(ctx context.Context, f review.Finding, onlyDiff, unreadable review.Finding) (lines []string, judged review.Finding, ok bool) {
	rev := sideRevision(f.Side)
	lines, err := v.read(ctx, f.FilePath, rev)
	switch {
	case errors.Is(err, review.ErrNotFound) && v.existsAt(f.FilePath, rev):
		return nil, onlyDiff, false
	case errors.Is(err, review.ErrNotFound):
		return nil, mark(f, review.FalsePositive, fmt.Sprintf("%s does not exist at the %s revision", f.FilePath, rev)), false
	case err != nil:
		return nil, unreadable, false
	case f.LineStart > len(lines):
		return nil, mark(f, review.FalsePositive, fmt.Sprintf("line %d is past the end of %s (%d lines)", f.LineStart, f.FilePath, len(lines))), false
	}
	return lines, review.Finding{}, true
}

// existsAt reports whether the diff says path exists at rev: everywhere
// but the head of a deleted file and the base of an added one.
func (v *verifier) existsAt(path string, rev review.Revision) bool {
	file, ok := v.idx.File(path)
	if !ok {
		return false
	}
	switch file.Status {
	case diff.Deleted:
		return rev == review.Base
	case diff.Added:
		return rev == review.Head
	}
	return true
}

// lookup finds the diff file for a cited path. Paths are compared byte for
// byte: " settings.py" is not "settings.py", and nothing is trimmed. A
// model's citation is forgiven a leading "./", "a/" or "b/", the quotes of
// a path written as a Go or C string literal ("\" settings.py\"") and a
// path cited by a unique suffix at a "/" boundary, each tried only when the
// exact path is not in the diff.
func (v *verifier) lookup(path string) (*diff.File, string, bool) {
	if f, ok := v.idx.File(path); ok {
		return f, f.Path(), true
	}
	candidates := []string{path}
	if len(path) >= 2 && path[0] == '"' && path[len(path)-1] == '"' {
		if p, err := strconv.Unquote(path); err == nil {
			candidates = append(candidates, p)
		}
	}
	for _, c := range candidates {
		for _, p := range []string{"", "./", "a/", "b/"} {
			if rest, ok := strings.CutPrefix(c, p); ok {
				if f, ok := v.idx.File(rest); ok {
					return f, f.Path(), true
				}
			}
		}
	}
	var found *diff.File
	for _, f := range v.d.Files {
		if p := f.Path(); path != "" && (strings.HasSuffix(p, "/"+path) || strings.HasSuffix(path, "/"+p)) {
			if found != nil && found != f {
				return nil, "", false
			}
			found = f
		}
	}
	if found == nil {
		return nil, "", false
	}
	return found, found.Path(), true
}

// read returns the lines of a file at a revision, cached.
func (v *verifier) read(ctx context.Context, path string, rev review.Revision) ([]string, error) {
	key := path + "@" + string(rev)
	if ft, ok := v.files[key]; ok {
		return ft.lines, ft.err
	}
	b, err := v.src.ReadFile(ctx, path, rev)
	var lines []string
	if err == nil {
		lines = strings.Split(strings.TrimSuffix(string(bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n"))), "\n"), "\n")
	}
	v.files[key] = fileText{lines: lines, err: err}
	return lines, err
}

// numbered is one line of a file's diff on one side.
type numbered struct {
	hunk int
	num  int
	norm string // whitespace-normalised text
}

// sideLines lists the non-blank lines of f's diff on side, in order.
func sideLines(f *diff.File, side review.Side) []numbered {
	var out []numbered
	for hi, h := range f.Hunks {
		for _, l := range h.Lines {
			num := int(l.NewLine)
			if side == review.SideLeft {
				num = int(l.OldLine)
			}
			if num == 0 {
				continue
			}
			if n := normalize(l.Text); n != "" {
				out = append(out, numbered{hunk: hi, num: num, norm: n})
			}
		}
	}
	return out
}

// snippetMatch is where a snippet was found in a file's diff.
type snippetMatch struct {
	start, end int
	// distance is how many lines the match lies outside the cited range.
	distance int
}

// findSnippet looks for the snippet in f's diff on side and returns the
// match closest to lines start..end (any match when start is 0; a unique
// one when it is far from the cited lines).
func (v *verifier) findSnippet(f *diff.File, side review.Side, snippet []string, start, end int) (snippetMatch, bool) {
	if len(snippet) == 0 {
		return snippetMatch{}, false
	}
	lines := sideLines(f, side)
	var best snippetMatch
	found := 0
	for i := 0; i+len(snippet) <= len(lines); i++ {
		if !matchesAt(lines[i:i+len(snippet)], snippet) {
			continue
		}
		m := snippetMatch{start: lines[i].num, end: lines[i+len(snippet)-1].num}
		switch {
		case start == 0:
		case m.end < start:
			m.distance = start - m.end
		case m.start > end:
			m.distance = m.start - end
		}
		if found == 0 || m.distance < best.distance {
			best = m
		}
		found++
	}
	if found == 0 || (found > 1 && best.distance > snapWithin) {
		return snippetMatch{}, false
	}
	return best, true
}

// matchesAt reports whether each snippet line is found in the diff line at
// the same position, all in one hunk. Models cite partial lines, so a line
// matches when it contains the snippet's line.
func matchesAt(lines []numbered, snippet []string) bool {
	for k, s := range snippet {
		if lines[k].hunk != lines[0].hunk || !strings.Contains(lines[k].norm, s) {
			return false
		}
	}
	return true
}

// locateSnippet finds the snippet's lines, in order and consecutively
// (ignoring blank lines), in a file's lines, and returns the match closest
// to lines start..end (the first one when start is 0).
func locateSnippet(file []string, snippet []string, start, end int) (snippetMatch, bool) {
	var lines []numbered
	for i, l := range file {
		if n := normalize(l); n != "" {
			lines = append(lines, numbered{num: i + 1, norm: n})
		}
	}
	var best snippetMatch
	found := false
	for i := 0; i+len(snippet) <= len(lines); i++ {
		if !matchesAt(lines[i:i+len(snippet)], snippet) {
			continue
		}
		m := snippetMatch{start: lines[i].num, end: lines[i+len(snippet)-1].num}
		switch {
		case start == 0:
		case m.end < start:
			m.distance = start - m.end
		case m.start > end:
			m.distance = m.start - end
		}
		if !found || m.distance < best.distance {
			best, found = m, true
		}
	}
	return best, found
}

// renderedPrefix matches the line-number column of diff.Render output and a
// diff's +/- prefix, which models sometimes copy into snippets.
var renderedPrefix = regexp.MustCompile(`^\s*\d+\s+[+-]?\s|^[+-]\s?`)

// snippetLines splits a cited snippet into normalised non-blank lines,
// without copied line numbers or diff prefixes.
func snippetLines(s string) []string {
	var out []string
	for _, l := range strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n") {
		if n := normalize(renderedPrefix.ReplaceAllString(l, "")); n != "" && n != "..." {
			out = append(out, n)
		}
	}
	return out
}

// normalize collapses the whitespace of a line.
func normalize(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// mark sets a finding's status and reason.
func mark(f review.Finding, s review.VerificationStatus, reason string) review.Finding {
	f.VerificationStatus, f.Reason = s, reason
	return f
}

// fingerprint sets f.Fingerprint from the path, the category and the code
// at the anchored lines (as the diff shows it, else as the file holds it,
// else the snippet): never from the model's words, so that a rerun that
// reports the same problem on the same code gets the same fingerprint even
// when the lines moved. file is nil for a file not in the diff.
func (v *verifier) fingerprint(ctx context.Context, f review.Finding, file *diff.File) review.Finding {
	var (
		code []string
		ok   bool
	)
	if file != nil {
		code, ok = diff.Lines(file, f.Side, f.LineStart, f.LineEnd)
	}
	if !ok && file != nil && f.LineStart > 0 {
		rev := review.Head
		if f.Side == review.SideLeft {
			rev = review.Base
		}
		if lines, err := v.read(ctx, f.FilePath, rev); err == nil && f.LineStart <= len(lines) {
			code, ok = lines[f.LineStart-1:min(f.LineEnd, len(lines))], true
		}
	}
	if !ok {
		code = snippetLines(f.CodeSnippet)
	}
	h := sha256.New()
	h.Write([]byte(f.FilePath + "\x00" + string(f.Category) + "\x00"))
	for _, l := range code {
		h.Write([]byte(normalize(l) + "\n"))
	}
	f.Fingerprint = hex.EncodeToString(h.Sum(nil))[:16]
	return f
}
