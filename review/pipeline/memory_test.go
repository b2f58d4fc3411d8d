package pipeline

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/diff"
	"github.com/mergeguard/mergeguard/review/memory"
	"github.com/mergeguard/mergeguard/review/task"
)

// TestCarrySuppresses: a new finding similar to memory.suppress_after
// dismissals is neither reported, nor counted, nor in the ledger, and the
// notes say so; a secret that matches as many is reported, and so is a
// finding already open on the pull request (it was posted). With
// suppress_after 0 nothing is suppressed.
func TestCarrySuppresses(t *testing.T) {
	src, _ := twentyFilePR()
	d, err := diff.ParseString(src.diff)
	if err != nil {
		t.Fatal(err)
	}
	nit := func(fp, name string, line int) review.Finding {
		return review.Finding{FilePath: prPath(3), LineStart: line, LineEnd: line, Side: review.SideRight,
			Severity: review.SeverityStyle, Category: review.CategoryQuality, VerificationStatus: review.Verified,
			Title:       "Error string should not be capitalized",
			Description: fmt.Sprintf("Lowercase the error string returned by %s.", name), Fingerprint: fp}
	}
	secret := review.Finding{FilePath: prPath(4), LineStart: 2, LineEnd: 2, Side: review.SideRight, Agent: "analyzer:secrets",
		Severity: review.SeverityCritical, Category: review.CategorySecurity, VerificationStatus: review.Verified,
		Title: "AWS access key committed", Description: "Rotate it.", Fingerprint: "secret"}
	real := review.Finding{FilePath: prPath(5), LineStart: 9, LineEnd: 9, Side: review.SideRight,
		Severity: review.SeverityWarning, Category: review.CategoryBug, VerificationStatus: review.Verified,
		Title: "Possible nil pointer dereference", Description: "The lookup result is dereferenced unchecked.", Fingerprint: "real"}
	at := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	var dismissals []memory.Dismissal
	for i, f := range []review.Finding{nit("d1", "loadUser", 3), nit("d2", "saveOrder", 9), nit("d3", "readFile", 27), secret, secret, secret} {
		dismissals = append(dismissals, memory.Dismissal{PRNumber: 10 + i, Fingerprint: f.Fingerprint, Finding: f,
			By: "writer", How: review.DismissedCommand, At: at.Add(time.Duration(i) * time.Minute)})
	}
	posted := review.LedgerEntry{Finding: nit("posted", "parseUser", 40), State: review.FindingOpen, FirstSeenSHA: "h1", LastSeenSHA: "h1"}
	reported := []review.Finding{nit("new-nit", "checkToken", 12), secret, real, posted.Finding}

	tests := map[string]struct {
		suppressAfter  int
		wantReported   []string
		wantSuppressed []string
		wantNotes      []string
	}{
		"after 3 dismissals": {3, []string{"secret", "real", "posted"}, []string{"new-nit"},
			[]string{"1 finding not posted: similar to findings this repository's writers dismissed (see MergeGuard's page of this pull request)."}},
		"memory off": {0, []string{"new-nit", "secret", "real", "posted"}, nil, nil},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			repo := config.DefaultRepo()
			repo.Memory.SuppressAfter = tc.suppressAfter
			r := &run{p: newTest(Deps{Config: testLLM()}), req: task.Request{Source: src, Repo: repo}}
			h := &task.History{Ledger: []review.LedgerEntry{posted}, Memory: memory.New(dismissals, nil)}
			c := r.carry(t.Context(), h, "h2", d, nil, touchedFiles(d, nil), reported)
			if diff := cmp.Diff(tc.wantReported, fingerprints(c.reported)); diff != "" {
				t.Errorf("reported (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantReported, fingerprints(c.counted)); diff != "" {
				t.Errorf("counted (-want +got):\n%s", diff)
			}
			var suppressed []string
			for _, s := range c.suppressed {
				suppressed = append(suppressed, s.Finding.Fingerprint)
				if len(s.Matches) != 3 || s.Matches[0].By != "writer" {
					t.Errorf("matches of %s: %+v, want the three dismissals", s.Finding.Fingerprint, s.Matches)
				}
			}
			if diff := cmp.Diff(tc.wantSuppressed, suppressed); diff != "" {
				t.Errorf("suppressed (-want +got):\n%s", diff)
			}
			for _, e := range c.ledger.All {
				if e.Finding.Fingerprint == "new-nit" && tc.suppressAfter > 0 {
					t.Errorf("the suppressed finding is in the ledger: %+v", e)
				}
			}
			if diff := cmp.Diff(tc.wantNotes, c.notes); diff != "" {
				t.Errorf("notes (-want +got):\n%s", diff)
			}
		})
	}
}
