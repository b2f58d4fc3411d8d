package eval

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/diff"
)

// corpusDir is the seeded-bug corpus.
var corpusDir = filepath.Join("..", "..", "testdata", "eval")

// TestCorpus checks every case of the corpus: its trees diff into a diff
// that parses, each golden comment is on head-side lines of the diff
// (added or context lines, where a comment can be anchored), each context
// range is inside its file, and the corpus README lists it. It also checks
// the corpus's size and spread.
func TestCorpus(t *testing.T) {
	cases, err := LoadCorpus(corpusDir)
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(corpusDir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	langs := map[string]int{}
	clean := 0
	for _, c := range cases {
		t.Run(c.ID, func(t *testing.T) {
			checkCorpusCase(t, c)
			if !strings.Contains(string(readme), "| `"+c.ID+"` |") {
				t.Errorf("README.md has no row for %s", c.ID)
			}
		})
		if c.Clean {
			clean++
		} else {
			langs[c.Language]++
		}
	}
	if n := len(cases) - clean; n < 40 || clean < 10 {
		t.Errorf("corpus has %d defect cases and %d clean ones, want at least 40 and 10", n, clean)
	}
	for _, l := range []string{"go", "python", "typescript", "java"} {
		if langs[l] < 8 {
			t.Errorf("corpus has %d %s defect cases, want at least 8", langs[l], l)
		}
	}
}

// checkCorpusCase checks one case's diff, golden comments and context
// lines.
func checkCorpusCase(t *testing.T, c Case) {
	t.Helper()
	ctx := context.Background()
	src, cleanup, err := OpenSource(ctx, c, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	text, err := src.Diff(ctx)
	if err != nil {
		t.Fatal(err)
	}
	d, err := diff.ParseString(text)
	if err != nil || len(d.Files) == 0 {
		t.Fatalf("diff: %v, %d files", err, len(d.Files))
	}
	if c.Clean != (len(c.Golden) == 0) || c.Title == "" || c.Body == "" || c.Why == "" || c.Kind == "" {
		t.Errorf("want a title, body, kind and why, and golden comments exactly when not clean")
	}
	for _, g := range c.Golden {
		start, end := g.Lines()
		for n := start; n <= end; n++ {
			if !headLineInDiff(d, g.File, n) {
				t.Errorf("golden %s:%d is not a head-side line of the diff", g.File, n)
			}
		}
		if review.Severity(g.Severity).Rank() == 0 || g.Category == "" {
			t.Errorf("golden %s:%d: severity %q, category %q", g.File, start, g.Severity, g.Category)
		}
	}
	if !c.Clean && len(c.ContextLines) == 0 {
		t.Errorf("no context_lines")
	}
	for _, r := range c.ContextLines {
		b, err := src.ReadFile(ctx, r.File, review.Head)
		if err != nil {
			t.Errorf("context %s: %v", r, err)
			continue
		}
		if got := LinesOf(string(b), r.StartLine, r.EndLine); len(got) != r.EndLine-r.StartLine+1 {
			t.Errorf("context %s: the file has %d lines", r, strings.Count(string(b), "\n"))
		}
	}
}

// headLineInDiff reports whether line n of path at head is an added or
// context line of d.
func headLineInDiff(d *diff.Diff, path string, n int) bool {
	for _, f := range d.Files {
		if f.Path() != path {
			continue
		}
		for _, h := range f.Hunks {
			for _, l := range h.Lines {
				if l.Kind != diff.Delete && int(l.NewLine) == n {
					return true
				}
			}
		}
	}
	return false
}
