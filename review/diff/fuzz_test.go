package diff

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mergeguard/mergeguard/internal/allocs"
	"github.com/mergeguard/mergeguard/review"
)

// parseBound is what parsing and indexing a diff may allocate: the
// benchmark allocates about 4 bytes per input byte.
var parseBound = allocs.Bound{PerByte: 64, Fixed: 4 << 20}

// FuzzParse parses arbitrary text and, when it parses, indexes, renders,
// paginates and formats it: nothing may panic, parsing allocates within
// parseBound, the index must agree with
// the parsed lines, and Format must give text that parses into the same
// files. The seed corpus is the fixture diffs. ParsePatch gets the same
// text as a bare patch.
func FuzzParse(f *testing.F) {
	for _, path := range fixtures(f) {
		f.Add(readFixture(f, path))
	}
	f.Add(smallDiff)
	f.Add("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n")
	f.Add("@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n")
	f.Fuzz(func(t *testing.T, s string) {
		if p, err := ParsePatch("f", s); err == nil {
			Render(p, RenderOptions{MaxContext: 1, OldNumbers: true})
		}
		var (
			d   *Diff
			idx *Index
			err error
		)
		if merr := parseBound.Check(len(s), func() {
			if d, err = ParseString(s); err == nil {
				idx = NewIndex(d)
			}
		}); merr != nil {
			t.Fatalf("parse and index: %v", merr)
		}
		if err != nil {
			return
		}
		for _, file := range d.Files {
			Render(file, RenderOptions{})
			Render(file, RenderOptions{MaxContext: 2, OldNumbers: true})
			if _, _, err := Paginate(file, 1, 2); err != nil && len(file.Hunks) > 0 {
				t.Errorf("Paginate(%q, 1, 2): %v", file.Path(), err)
			}
			if mine, _ := idx.File(file.Path()); mine != file {
				continue // a path given twice: the index keeps one entry
			}
			checkFuzzIndex(t, idx, file)
		}
		if slices.ContainsFunc(d.Files, endsInBackslash) {
			return // go-gitdiff cannot read back its quoted name (see endsInBackslash)
		}
		again, err := ParseString(Format(d))
		if err != nil {
			t.Fatalf("formatted diff does not parse: %v\n%s", err, Format(d))
		}
		// Format writes the default mode for added and deleted files
		// whose header had none.
		for _, file := range d.Files {
			switch {
			case file.Status == Added && file.NewMode == "":
				file.NewMode = "100644"
			case file.Status == Deleted && file.OldMode == "":
				file.OldMode = "100644"
			}
		}
		if diff := cmp.Diff(d, again); diff != "" {
			t.Errorf("format round trip (-parsed +parsed again):\n%s", diff)
		}
	})
}

// endsInBackslash reports whether a path of f ends in a backslash. Git
// quotes such a name as "a/x\\", and go-gitdiff v0.9.0 (parseQuotedName)
// takes its closing quote for an escaped one and fails to parse the header,
// so a diff with such a path does not survive Format and ParseString.
func endsInBackslash(f *File) bool {
	return strings.HasSuffix(f.OldPath, `\`) || strings.HasSuffix(f.NewPath, `\`)
}

// checkFuzzIndex compares the index with the lines of one file, around
// every hunk edge.
func checkFuzzIndex(t *testing.T, idx *Index, f *File) {
	oracle := lineOracle(f)
	commentable := !f.Binary && f.DiffBytes <= MaxCommentableDiffBytes
	for _, h := range f.Hunks {
		for _, side := range []review.Side{left, right} {
			start := h.NewStart
			if side == left {
				start = h.OldStart
			}
			for line := start - 1; line <= start+2; line++ {
				_, shown := oracle[side][line]
				if got := idx.Commentable(f.Path(), side, line); got != (shown && commentable) {
					t.Fatalf("%s: Commentable(%s, %d) = %v, want %v", f.Path(), side, line, got, shown && commentable)
				}
				texts, ok := Lines(f, side, line, line)
				if ok != shown || (ok && len(texts) != 1) {
					t.Fatalf("%s: Lines(%s, %d, %d) = %q, %v; want shown %v", f.Path(), side, line, line, texts, ok, shown)
				}
				idx.NearestCommentable(f.Path(), side, line, 3)
				idx.CommentableRange(f.Path(), side, line, line+3)
			}
		}
	}
}
