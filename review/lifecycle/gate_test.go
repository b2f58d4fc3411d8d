package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/task"
)

// TestRefreshGate: after a person's dismissal the current head's check
// completes again from the ledger under the repository's own
// configuration; once nothing blocks, the bot's change requests are
// dismissed; a head not reviewed yet is left to its review.
func TestRefreshGate(t *testing.T) {
	t.Parallel()
	warning := review.LedgerEntry{Finding: review.Finding{Fingerprint: "w", Severity: review.SeverityWarning, VerificationStatus: review.Verified},
		State: review.FindingOpen}
	dismissed := warning
	dismissed.State = review.FindingDismissed
	reviewed := review.ReviewedHead{RunID: "r1", HeadSHA: "h1", CheckRunID: 44, Verdict: &review.Verdict{}}
	strict := fakeSource{files: map[string]string{config.RepoFileName + "@base": "blocking_severity: warning\n"}}
	broken := errors.New("broken")
	gh := func(f func(*fakeGitHub)) fakeGitHub {
		g := fakeGitHub{HeadValue: review.PullHead{SHA: "h1"}, SourceValue: strict}
		f(&g)
		return g
	}
	none := func(*fakeGitHub) {}
	tests := map[string]struct {
		gh         fakeGitHub
		st         fakeStore
		wantErr    error
		conclusion string // of check run 44, "" when not completed
		undone     []string
	}{
		"the head is not reviewed yet: left to its review": {gh: gh(none),
			st: fakeStore{ReviewOfHeadError: fmt.Errorf("x: %w", review.ErrNotFound), LedgerValue: []review.LedgerEntry{dismissed}}},
		"a warning still blocks under the repository's configuration": {gh: gh(none),
			st: fakeStore{ReviewOfHeadValue: reviewed, LedgerValue: []review.LedgerEntry{warning}}, conclusion: review.ConclusionFailure},
		"nothing blocks: success, change requests dismissed": {gh: gh(none),
			st: fakeStore{ReviewOfHeadValue: reviewed, LedgerValue: []review.LedgerEntry{dismissed}}, conclusion: review.ConclusionSuccess, undone: []string{"h1"}},
		"the default configuration: a warning does not block": {gh: gh(func(g *fakeGitHub) { g.SourceValue = fakeSource{} }),
			st: fakeStore{ReviewOfHeadValue: reviewed, LedgerValue: []review.LedgerEntry{warning}}, conclusion: review.ConclusionSuccess, undone: []string{"h1"}},
		"the model was skipped: neutral": {gh: gh(none),
			st: fakeStore{LedgerValue: []review.LedgerEntry{dismissed}, ReviewOfHeadValue: review.ReviewedHead{RunID: "r1", CheckRunID: 44,
				Verdict: &review.Verdict{Notes: []string{task.ModelSkippedNote + "a skip label. The built-in analyzers …"}}}},
			conclusion: review.ConclusionNeutral, undone: []string{"h1"}},
		"a configuration that does not parse: fails": {gh: gh(func(g *fakeGitHub) {
			g.SourceValue = fakeSource{files: map[string]string{config.RepoFileName + "@base": "blocking_severity: [\n"}}
		}), st: fakeStore{ReviewOfHeadValue: reviewed}, wantErr: &task.RepoConfigError{}},
		"the head cannot be read: fails":     {gh: gh(func(g *fakeGitHub) { g.HeadError = broken }), wantErr: broken},
		"the ledger cannot be read: fails":   {gh: gh(none), st: fakeStore{ReviewOfHeadValue: reviewed, LedgerError: broken}, wantErr: broken},
		"the check cannot be written: fails": {gh: gh(func(g *fakeGitHub) { g.UpdateCheckError = broken }), st: fakeStore{ReviewOfHeadValue: reviewed}, wantErr: broken},
		"change requests cannot be dismissed: fails": {gh: gh(func(g *fakeGitHub) { g.DismissError = broken }),
			st: fakeStore{ReviewOfHeadValue: reviewed}, conclusion: review.ConclusionSuccess, wantErr: broken},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			uc := Gating{GitHub: &tt.gh, Checks: &tt.gh, Reviews: &tt.st, Findings: &tt.st, Repo: config.DefaultRepo(), PublicURL: "https://mg.example"}
			err := uc.Refresh(context.Background(), PullRequest{Repository: "o/r", Number: 7})
			var cfgErr *task.RepoConfigError
			switch {
			case errors.As(tt.wantErr, &cfgErr):
				if !errors.As(err, &cfgErr) {
					t.Fatalf("Refresh error = %v, want a configuration error", err)
				}
			case !errors.Is(err, tt.wantErr):
				t.Fatalf("Refresh error = %v, want %v", err, tt.wantErr)
			}
			c := tt.gh.Updated[44]
			if c.Conclusion != tt.conclusion || (c.Conclusion != "" && (c.HeadSHA != "h1" || c.Status != review.CheckCompleted || c.DetailsURL != "https://mg.example/reviews/r1")) {
				t.Errorf("check run 44: %+v, want %q completed for h1", c, tt.conclusion)
			}
			if len(tt.gh.Created) != 0 {
				t.Errorf("created check runs %+v, want none: the review's is completed again", tt.gh.Created)
			}
			if diff := cmp.Diff(tt.undone, tt.gh.Undone); diff != "" {
				t.Errorf("change requests dismissed (-want +got):\n%s", diff)
			}
		})
	}
}
