package diff

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mergeguard/mergeguard/review"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// fixtures returns the paths of the real diffs in testdata/ (testdata/SOURCES.md
// says where each comes from).
func fixtures(t testing.TB) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "*.diff"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != 14 {
		t.Fatalf("found %d fixture diffs in testdata/, want 14", len(paths))
	}
	return paths
}

func readFixture(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func parseFixture(t testing.TB, path string) *Diff {
	t.Helper()
	d, err := ParseString(readFixture(t, path))
	if err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
	return d
}

func checkGolden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s differs (-golden +got; run go test -update if intended):\n%s", path, diff)
	}
}

// TestGolden renders every file of every fixture and dumps what the index
// says about it: <fixture>.render.golden and <fixture>.index.golden.
func TestGolden(t *testing.T) {
	for _, path := range fixtures(t) {
		name := strings.TrimSuffix(path, ".diff")
		t.Run(filepath.Base(name), func(t *testing.T) {
			d := parseFixture(t, path)
			var render strings.Builder
			for i, f := range d.Files {
				if i > 0 {
					render.WriteString("\n")
				}
				render.WriteString(Render(f, RenderOptions{}))
			}
			checkGolden(t, name+".render.golden", render.String())
			checkGolden(t, name+".index.golden", indexDump(t, d))
		})
	}
}

// fileDump is what the index golden records for one file.
type fileDump struct {
	Path       string   `json:"path"`
	OldPath    string   `json:"old_path,omitempty"`
	Status     Status   `json:"status"`
	Binary     bool     `json:"binary,omitempty"`
	Similarity int      `json:"similarity,omitempty"`
	OldMode    string   `json:"old_mode,omitempty"`
	NewMode    string   `json:"new_mode,omitempty"`
	Additions  int      `json:"additions"`
	Deletions  int      `json:"deletions"`
	Hunks      []string `json:"hunks"`
	// NoNewline lists lines followed by "\ No newline at end of file", as
	// "-old", "+new" or " new".
	NoNewline []string `json:"no_newline,omitempty"`
	CRLFLines int      `json:"crlf_lines,omitempty"`
	// Right and Left are the commentable line ranges found by asking
	// Commentable about every line from -1 to past the last hunk.
	Right []string `json:"commentable_right"`
	Left  []string `json:"commentable_left"`
}

func indexDump(t *testing.T, d *Diff) string {
	t.Helper()
	idx := NewIndex(d)
	dumps := make([]fileDump, 0, len(d.Files))
	for _, f := range d.Files {
		fd := fileDump{
			Path: f.Path(), OldPath: f.OldPath, Status: f.Status, Binary: f.Binary,
			Similarity: f.Similarity, OldMode: f.OldMode, NewMode: f.NewMode,
			Additions: f.Additions, Deletions: f.Deletions,
			Hunks: []string{}, Right: []string{}, Left: []string{},
		}
		if fd.OldPath == fd.Path {
			fd.OldPath = ""
		}
		maxLine := 0
		for i := range f.Hunks {
			h := &f.Hunks[i]
			fd.Hunks = append(fd.Hunks, hunkHeader(h))
			maxLine = max(maxLine, h.OldStart+h.OldLines, h.NewStart+h.NewLines)
			for _, l := range h.Lines {
				if l.CRLF {
					fd.CRLFLines++
				}
				if !l.NoNewline {
					continue
				}
				n := l.NewLine
				if l.Kind == Delete {
					n = l.OldLine
				}
				fd.NoNewline = append(fd.NoNewline, fmt.Sprintf("%c%d", l.Kind, n))
			}
		}
		fd.Right = probeRanges(idx, f.Path(), review.SideRight, maxLine+2)
		fd.Left = probeRanges(idx, f.Path(), review.SideLeft, maxLine+2)
		dumps = append(dumps, fd)
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(dumps); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// probeRanges asks Commentable about lines -1..upTo and returns the
// commentable runs as "first-last".
func probeRanges(idx *Index, path string, side review.Side, upTo int) []string {
	ranges := []string{}
	start, in := 0, false
	for line := -1; line <= upTo+1; line++ {
		ok := line <= upTo && idx.Commentable(path, side, line)
		switch {
		case ok && !in:
			start, in = line, true
		case !ok && in:
			ranges = append(ranges, fmt.Sprintf("%d-%d", start, line-1))
			in = false
		}
	}
	return ranges
}
