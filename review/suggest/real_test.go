package suggest

import (
	"bytes"
	"cmp"
	"context"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/mergeguard/mergeguard/review/analyzer"
	"github.com/mergeguard/mergeguard/review/diff"
	"github.com/mergeguard/mergeguard/review/lang"
)

// TestRealReplacements measures how often the checks reject a change a
// person really made: in the last MERGEGUARD_SUGGEST_COMMITS (default 300)
// non-merge commits up to MERGEGUARD_SUGGEST_REV (default HEAD) of the git
// directory MERGEGUARD_SUGGEST_REPO, every
// change of a Go, Python, JavaScript, TypeScript or Java file that is one
// hunk replacing lines (git diff -U0) is offered as a suggestion on the
// file before the commit — applied, it gives the file the commit made —
// and the reasons of the rejected ones are counted. It is a measurement, run on
// demand (docs/quality.md, Suggestions that apply):
//
//	MERGEGUARD_SUGGEST_REPO=/path/to/repo.git MERGEGUARD_SUGGEST_REV=<commit> \
//	  go test -count=1 -v -run TestRealReplacements ./review/suggest/
func TestRealReplacements(t *testing.T) {
	repo := os.Getenv("MERGEGUARD_SUGGEST_REPO")
	if repo == "" {
		t.Skip("set MERGEGUARD_SUGGEST_REPO to a git directory to measure")
	}
	n := 300
	if s := os.Getenv("MERGEGUARD_SUGGEST_COMMITS"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil {
			t.Fatal(err)
		}
	}
	git := func(args ...string) []byte {
		out, err := exec.CommandContext(t.Context(), "git", append([]string{"--git-dir", repo}, args...)...).Output()
		if err != nil {
			t.Fatalf("git %v: %v", args, err)
		}
		return out
	}
	as := []analyzer.Analyzer{analyzer.ConflictMarkers{}, analyzer.DebugStatements{}, analyzer.FocusedTests{}}
	offered, reasons := 0, map[string]int{}
	rev := cmp.Or(os.Getenv("MERGEGUARD_SUGGEST_REV"), "HEAD")
	for line := range strings.Lines(string(git("log", "--no-merges", "--format=%H %P", "-n", strconv.Itoa(n), rev))) {
		c, parent, _ := strings.Cut(strings.TrimSpace(line), " ")
		if parent == "" {
			continue // the first commit
		}
		text, err := exec.CommandContext(t.Context(), "git", "--git-dir", repo, "diff", "-U0", "--no-color", "--no-ext-diff", parent, c).Output()
		if err != nil {
			continue // the parent is not in a shallow mirror
		}
		d, err := diff.ParseString(string(text))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range d.Files {
			if f.Status != diff.Modified || len(f.Hunks) != 1 || !measured[lang.Detect(f.NewPath)] {
				continue
			}
			base := git("show", parent+":"+f.OldPath)
			for _, h := range f.Hunks {
				if reason, ok := replace(t.Context(), f.NewPath, base, h, as); ok {
					offered++
					if reason != "" {
						k := digits.ReplaceAllString(reason, "N")
						if reasons[k]++; reasons[k] <= 2 {
							t.Logf("%s %s:%d: %s", c[:10], f.NewPath, f.Hunks[0].OldStart, reason)
						}
					}
				}
			}
		}
	}
	logReasons(t, repo, offered, reasons)
}

// measured are the languages TestRealReplacements offers.
var measured = map[string]bool{"go": true, "python": true, "javascript": true, "typescript": true, "tsx": true, "java": true}

var digits = regexp.MustCompile(`\d+`)

// replace offers hunk h, a replacement of lines, as a suggestion on base;
// false when h is not one (it only adds or only removes lines).
func replace(ctx context.Context, path string, base []byte, h diff.Hunk, as []analyzer.Analyzer) (string, bool) {
	if h.OldLines == 0 || h.NewLines == 0 || bytes.Contains(base, []byte("\r")) {
		return "", false
	}
	var code []string
	for _, l := range h.Lines {
		if l.Kind == diff.Add {
			code = append(code, l.Text)
		}
	}
	return Check(ctx, Input{Path: path, Content: base, Start: h.OldStart, End: h.OldStart + h.OldLines - 1,
		Code: strings.Join(code, "\n"), Analyzers: as}), true
}

func logReasons(t *testing.T, repo string, offered int, reasons map[string]int) {
	rejected := 0
	var keys []string
	for k, v := range reasons {
		rejected += v
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return reasons[keys[i]] > reasons[keys[j]] })
	share := 0.0
	if offered > 0 {
		share = 100 * float64(rejected) / float64(offered)
	}
	t.Logf("%s: %d real replacements offered, %d rejected (%.1f%%)", repo, offered, rejected, share)
	for _, k := range keys {
		t.Logf("%5d  %s", reasons[k], k)
	}
}
