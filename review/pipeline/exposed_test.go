package pipeline

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/diff"
	"github.com/mergeguard/mergeguard/review/task"
)

// TestCarryAnalyzerFindings: an analyzer's finding is fixed only when the
// analyzer no longer reports it anywhere in the pull request's diff, and a
// secret the analyzer stopped reporting was pushed all the same: it is
// exposed, and blocks unless secrets.removed is warn. Splitting the key into
// two literals is not a fix.
func TestCarryAnalyzerFindings(t *testing.T) {
	const key = "AKIAZ7VRSQ5TJN2XMY4W"
	lines := func(l2 string) []string {
		return []string{"import os", l2, "def main():", "    print('hi')"}
	}
	// The pushed since-diff rewrites line 2 of cfg.py from the key to l2.
	push := func(l2 string) string {
		return "diff --git a/cfg.py b/cfg.py\nindex 1111111..2222222 100644\n--- a/cfg.py\n+++ b/cfg.py\n@@ -1,3 +1,3 @@\n import os\n" +
			`-AWS_KEY = "` + key + "\"\n+" + l2 + "\n def main():\n"
	}
	secret := review.LedgerEntry{State: review.FindingOpen, FirstSeenSHA: "h1", LastSeenSHA: "h1", CommentID: 100, ThreadID: "T_key",
		Finding: review.Finding{FilePath: "cfg.py", LineStart: 2, LineEnd: 2, Side: review.SideRight, Severity: review.SeverityCritical,
			Category: review.CategorySecurity, Title: "Possible secret committed (aws-access-token)", Agent: "analyzer:secrets",
			VerificationStatus: review.Verified, Fingerprint: "key"}}
	warn := config.DefaultRepo()
	warn.Secrets.Removed = config.SecretsRemovedWarn
	tests := map[string]struct {
		l2, other  string // cfg.py's line 2 at the new head; another file's line
		repo       config.Repo
		want       review.FindingState
		wantHow    string
		counted    bool
		blocking   bool
		newExposed bool
	}{
		"split into two literals": {l2: `AWS_KEY = "AKIAZ7VRSQ" "5TJN2XMY4W"`, repo: config.DefaultRepo(),
			want: review.FindingExposed, wantHow: review.ExposedBlocking, counted: true, blocking: true, newExposed: true},
		"removed": {l2: `AWS_KEY = os.environ["AWS_KEY"]`, repo: config.DefaultRepo(),
			want: review.FindingExposed, wantHow: review.ExposedBlocking, counted: true, blocking: true, newExposed: true},
		"removed, secrets.removed: warn": {l2: `AWS_KEY = os.environ["AWS_KEY"]`, repo: warn,
			want: review.FindingExposed, wantHow: review.ExposedWarning, newExposed: true},
		"moved to another file of the diff": {l2: `AWS_KEY = os.environ["AWS_KEY"]`, other: `K = "` + key + `"`, repo: config.DefaultRepo(),
			want: review.FindingOpen, counted: true, blocking: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			src := &memSource{change: review.Change{Repository: "o/r", Number: 1, HeadSHA: "h2", BaseSHA: "b"},
				head: map[string]string{"cfg.py": strings.Join(lines(tc.l2), "\n") + "\n"}}
			src.diff = addedFileDiff("cfg.py", lines(tc.l2)...)
			if tc.other != "" {
				src.diff += addedFileDiff("other.py", tc.other)
			}
			d, err := diff.ParseString(src.diff)
			if err != nil {
				t.Fatal(err)
			}
			since, err := diff.ParseString(push(tc.l2))
			if err != nil {
				t.Fatal(err)
			}
			r := &run{p: newTest(Deps{Config: testLLM()}), req: task.Request{Source: src, Repo: tc.repo}}
			c := r.carry(t.Context(), &task.History{Ledger: []review.LedgerEntry{secret}}, "h2", d, since, touchedFiles(d, since), nil)
			got := c.ledger.All[0]
			if got.State != tc.want || got.StateHow != tc.wantHow || got.FirstSeenSHA != "h1" || got.ThreadID != "T_key" {
				t.Errorf("entry = %s/%q first seen %s thread %s, want %s/%q first seen h1 thread T_key",
					got.State, got.StateHow, got.FirstSeenSHA, got.ThreadID, tc.want, tc.wantHow)
			}
			if len(c.ledger.Fixed) != 0 {
				t.Errorf("found fixed: %+v", c.ledger.Fixed)
			}
			if n := len(c.ledger.Exposed); (n == 1) != tc.newExposed || n > 1 {
				t.Errorf("newly exposed = %d, want %v", n, tc.newExposed)
			}
			if counted := len(c.counted) == 1; counted != tc.counted {
				t.Errorf("counted by the verdict = %v, want %v", counted, tc.counted)
			}
			if b := got.Blocking(review.SeverityCritical); b != tc.blocking {
				t.Errorf("Blocking = %v, want %v", b, tc.blocking)
			}
		})
	}
}

// TestCarryExposedStays: a later review keeps an exposed entry exposed
// (not posted again, still counted while secrets.removed is block) until a
// person dismisses it.
func TestCarryExposedStays(t *testing.T) {
	src := &memSource{change: review.Change{Repository: "o/r", Number: 1, HeadSHA: "h3"},
		head: map[string]string{"cfg.py": "x = 1\n"}, diff: addedFileDiff("cfg.py", "x = 1")}
	d, err := diff.ParseString(src.diff)
	if err != nil {
		t.Fatal(err)
	}
	exposed := review.LedgerEntry{State: review.FindingExposed, StateHow: review.ExposedBlocking, FirstSeenSHA: "h1", LastSeenSHA: "h2",
		Finding: review.Finding{FilePath: "cfg.py", LineStart: 1, LineEnd: 1, Side: review.SideRight, Severity: review.SeverityCritical,
			Category: review.CategorySecurity, Agent: "analyzer:secrets", VerificationStatus: review.Verified, Fingerprint: "key"}}
	r := &run{p: newTest(Deps{Config: testLLM()}), req: task.Request{Source: src, Repo: config.DefaultRepo()}}
	c := r.carry(t.Context(), &task.History{Ledger: []review.LedgerEntry{exposed}}, "h3", d, nil, touchedFiles(d, nil), nil)
	if diff := cmp.Diff([]string{"key"}, fingerprints(c.counted)); diff != "" {
		t.Errorf("counted (-want +got):\n%s", diff)
	}
	if len(c.ledger.Exposed) != 0 || c.ledger.All[0].State != review.FindingExposed || c.ledger.BlockingCleared {
		t.Errorf("ledger = %+v", c.ledger)
	}
}
