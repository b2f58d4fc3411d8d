package lifecycle

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/task"
)

// TestModelSkippedGate: a refreshed gate keeps a review whose model was
// skipped neutral, as the review's own check was: the reason is read back
// from the stored verdict's note; a blocked check stays blocked.
func TestModelSkippedGate(t *testing.T) {
	t.Parallel()
	skipped := &review.Verdict{Notes: []string{"Reviewed 3 files.",
		task.ModelSkippedNote + `title contains "WIP". The built-in analyzers and linters reviewed every changed file and decide the check.`}}
	tests := []struct {
		name       string
		v          *review.Verdict
		conclusion string // of the check, success before
		want       string
	}{
		{"model skipped, nothing blocks", skipped, review.ConclusionSuccess, review.ConclusionNeutral},
		{"model skipped, blocked", skipped, review.ConclusionFailure, review.ConclusionFailure},
		{"model reviewed", &review.Verdict{Notes: []string{"Reviewed 3 files."}}, review.ConclusionSuccess, review.ConclusionSuccess},
		{"no verdict", nil, review.ConclusionSuccess, review.ConclusionSuccess},
	}
	for _, tt := range tests {
		c := &review.Check{Conclusion: tt.conclusion, Summary: "No open findings."}
		modelSkippedCheck(c, ModelSkippedOf(tt.v))
		if c.Conclusion != tt.want {
			t.Errorf("%s: conclusion %s, want %s", tt.name, c.Conclusion, tt.want)
		}
	}
	if got, want := ModelSkippedOf(skipped), `title contains "WIP"`; got != want {
		t.Errorf("ModelSkippedOf = %q, want %q", got, want)
	}
}

// TestCheckOfLedger: the check of a ledger blocks with the repository's
// conclusion while a blocking entry remains (open, or an exposed secret
// that blocks), annotates the open entries only, and turns a pass neutral
// when the model was skipped.
func TestCheckOfLedger(t *testing.T) {
	t.Parallel()
	entry := func(fp string, s review.Severity, st review.FindingState) review.LedgerEntry {
		return review.LedgerEntry{Finding: review.Finding{Fingerprint: fp, Severity: s, VerificationStatus: review.Verified}, State: st}
	}
	warning, critical := entry("w", review.SeverityWarning, review.FindingOpen), entry("c", review.SeverityCritical, review.FindingOpen)
	fixed, exposed := entry("f", review.SeverityCritical, review.FindingFixed), entry("x", review.SeverityCritical, review.FindingExposed)
	exposed.StateHow = review.ExposedBlocking
	repo := config.Repo{BlockingSeverity: "critical", Check: config.Check{BlockingConclusion: "action_required"}}
	tests := map[string]struct {
		ledger       []review.LedgerEntry
		modelSkipped string
		conclusion   string
		title        string
		blocked      bool
		annotated    []string
	}{
		"nothing open: success": {ledger: []review.LedgerEntry{fixed}, conclusion: review.ConclusionSuccess, title: "title"},
		"a warning open: success, annotated": {ledger: []review.LedgerEntry{warning, fixed}, conclusion: review.ConclusionSuccess,
			title: "title", annotated: []string{"w"}},
		"a critical open: blocked with the repository's conclusion": {ledger: []review.LedgerEntry{warning, critical},
			conclusion: "action_required", title: "title", blocked: true, annotated: []string{"w", "c"}},
		"an exposed secret that blocks: blocked, not annotated": {ledger: []review.LedgerEntry{exposed},
			conclusion: "action_required", title: "title", blocked: true},
		"model skipped, nothing blocks: neutral": {ledger: []review.LedgerEntry{warning}, modelSkipped: "a skip label",
			conclusion: review.ConclusionNeutral, title: "Model review skipped", annotated: []string{"w"}},
		"model skipped, blocked: stays blocked": {ledger: []review.LedgerEntry{critical}, modelSkipped: "a skip label",
			conclusion: "action_required", title: "title", blocked: true, annotated: []string{"c"}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c, blocked := Checking{Checks: &fakeGitHub{}}.OfLedger(tt.ledger, repo, tt.modelSkipped, "https://github.com/o/r/pull/7")
			var annotated []string
			for _, e := range c.Annotate {
				annotated = append(annotated, e.Finding.Fingerprint)
			}
			if c.Conclusion != tt.conclusion || c.Title != tt.title || blocked != tt.blocked || c.Blocking != review.SeverityCritical || c.PullURL == "" {
				t.Errorf("check %s %q (blocking from %s) blocked %v; want %s %q blocked %v", c.Conclusion, c.Title, c.Blocking, blocked, tt.conclusion, tt.title, tt.blocked)
			}
			if diff := cmp.Diff(tt.annotated, annotated); diff != "" {
				t.Errorf("annotated (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCheckRunOfARun: a run starts its head's check once (a retried
// attempt keeps it; refused annotations still give a check run) and
// completes it, creating it when the run ended before starting one.
func TestCheckRunOfARun(t *testing.T) {
	t.Parallel()
	broken := errors.New("403 checks: write not granted")
	tests := map[string]struct {
		run       Run
		gh        fakeGitHub
		started   int64
		startErr  error
		created   int
		completed string // where Complete wrote: "created", "updated", ""
	}{
		"a first attempt":                   {run: Run{ID: "r1", HeadSHA: "h1"}, gh: fakeGitHub{CreateCheckValue: 44}, started: 44, created: 1, completed: "updated"},
		"a retried attempt keeps its check": {run: Run{ID: "r1", HeadSHA: "h1", CheckRunID: 44}, completed: "updated"},
		"no head yet: no check":             {run: Run{ID: "r1"}, completed: "created"},
		"annotations refused: the check run stands": {run: Run{ID: "r1", HeadSHA: "h1"},
			gh: fakeGitHub{CreateCheckValue: 45, CreateCheckError: review.ErrAnnotationsRejected}, started: 45, created: 1, completed: "updated"},
		"checks not granted: reviewed all the same": {run: Run{ID: "r1", HeadSHA: "h1"}, gh: fakeGitHub{CreateCheckError: broken}, startErr: broken},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			uc := Checking{Checks: &tt.gh, PublicURL: "https://mg.example"}
			id, err := uc.Start(context.Background(), tt.run)
			if id != tt.started || !errors.Is(err, tt.startErr) || len(tt.gh.Created) != tt.created {
				t.Fatalf("Start = %d, %v (%d created); want %d, %v (%d created)", id, err, len(tt.gh.Created), tt.started, tt.startErr, tt.created)
			}
			if tt.startErr != nil {
				return
			}
			if id != 0 {
				if c := tt.gh.Created[0]; c.Status != review.CheckInProgress || c.DetailsURL != "https://mg.example/reviews/r1" || c.ExternalID != "r1" || c.HeadSHA != "h1" {
					t.Errorf("started check %+v", c)
				}
				tt.run.CheckRunID = id
			}
			tt.gh.CreateCheckError, tt.gh.Created = nil, nil
			if err := uc.Complete(context.Background(), tt.run, Ended(EndedSkipped, "paused")); err != nil {
				t.Fatal(err)
			}
			got := review.Check{}
			switch tt.completed {
			case "created":
				got = tt.gh.Created[0]
			case "updated":
				got = tt.gh.Updated[tt.run.CheckRunID]
			}
			want := review.Check{HeadSHA: tt.run.HeadSHA, Status: review.CheckCompleted, Conclusion: review.ConclusionNeutral, DetailsURL: "https://mg.example/reviews/r1",
				ExternalID: "r1", Title: "Review skipped", Summary: "MergeGuard did not review this head: paused."}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("completed check (-want +got):\n%s", diff)
			}
		})
	}
}

// TestEndedCheck: a run that posted no review completes its check with
// how it ended; a failed run's check says what the pull request was told.
func TestEndedCheck(t *testing.T) {
	t.Parallel()
	tests := []struct {
		e                     Ending
		reason                string
		conclusion, title, in string
	}{
		{EndedSkipped, "paused", review.ConclusionNeutral, "Review skipped", "did not review this head: paused."},
		{EndedSuperseded, "the head moved", review.ConclusionCancelled, "Superseded", "stopped reviewing this head: the head moved."},
		{EndedSucceeded, "", review.ConclusionNeutral, "Reviewed", "reviewed this head."},
		{EndedFailed, "", review.ConclusionFailure, "Review failed", "`/mergeguard rerun`"},
		{EndedFailed, "Fix .mergeguard.yml.", review.ConclusionFailure, "Review failed", "Fix .mergeguard.yml."},
	}
	for _, tt := range tests {
		c := Ended(tt.e, tt.reason)
		if c.Conclusion != tt.conclusion || c.Title != tt.title || !strings.Contains(c.Summary, tt.in) {
			t.Errorf("Ended(%s, %q) = %s %q %q", tt.e, tt.reason, c.Conclusion, c.Title, c.Summary)
		}
	}
}
