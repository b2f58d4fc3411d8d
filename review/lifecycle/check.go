package lifecycle

import (
	"context"
	"errors"
	"strings"

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/task"
)

// This file is the MergeGuard check run of each reviewed head
// (docs/architecture.md, The life of a pull request): in progress while a
// run works, completed with the run, whatever its end, and completed again
// from the ledger when a person's dismissal changes the gate.

// Checks are the check runs of the pull request's heads on GitHub.
type Checks interface {
	CreateCheck(ctx context.Context, c review.Check) (int64, error)
	UpdateCheck(ctx context.Context, id int64, c review.Check) error
	// CheckSummary renders a pull request's ledger as a check's title and
	// summary.
	CheckSummary(ledger []review.LedgerEntry, blocking review.Severity, pullURL string) (title, summary string)
}

// Run is a pull request run as its check run knows it.
type Run struct {
	ID, HeadSHA string
	// CheckRunID is the run's check run, 0 before it has one.
	CheckRunID int64
}

// Checking is the use case of a head's check run, with the roles it
// needs.
type Checking struct {
	Checks Checks
	// PublicURL is where people reach MergeGuard's web UI; "" leaves the
	// details link out.
	PublicURL string
}

// Start marks the run's head in progress on its check run, once per run (a
// retried attempt goes on with the same check), and returns the check run
// for the caller to record; 0 when the run has its check already or no
// head. Starting is best effort: an installation that has not granted
// checks: write is reviewed all the same.
func (c Checking) Start(ctx context.Context, run Run) (int64, error) {
	if run.CheckRunID != 0 || run.HeadSHA == "" {
		return 0, nil
	}
	id, err := c.Checks.CreateCheck(ctx, review.Check{HeadSHA: run.HeadSHA, Status: review.CheckInProgress,
		DetailsURL: RunPage(c.PublicURL, run.ID), ExternalID: run.ID,
		Title: "Reviewing", Summary: "MergeGuard is reviewing this head; the details link follows the review live."})
	if err != nil && !errors.Is(err, review.ErrAnnotationsRejected) {
		return 0, err
	}
	return id, nil
}

// Complete completes the run's check run with check, creating it when the
// run ended before starting it (a skipped run).
func (c Checking) Complete(ctx context.Context, run Run, check review.Check) error {
	check.HeadSHA, check.Status, check.DetailsURL, check.ExternalID = run.HeadSHA, review.CheckCompleted, RunPage(c.PublicURL, run.ID), run.ID
	if run.CheckRunID == 0 {
		_, err := c.Checks.CreateCheck(ctx, check)
		return err
	}
	return c.Checks.UpdateCheck(ctx, run.CheckRunID, check)
}

// Reviewed is the completed check of a posted review: success, or the
// repository's blocking conclusion while a blocking finding is open, with
// the ledger's counts and its open findings as annotations. A review whose
// model was skipped (a title keyword, a skip label, max_files) and found
// nothing blocking is neutral, not success.
func (c Checking) Reviewed(res *task.Result, pullURL string) review.Check {
	check, _ := c.OfLedger(res.Ledger.All, res.Config, res.ModelSkipped, pullURL)
	return check
}

// OfLedger is the completed check of a pull request's whole ledger under
// repo: success, or the repository's blocking conclusion while a blocking
// entry (open, or exposed under secrets.removed: block) remains; blocked
// says which. modelSkipped says why the model did not review the head, ""
// when it did.
func (c Checking) OfLedger(ledger []review.LedgerEntry, repo config.Repo, modelSkipped, pullURL string) (check review.Check, blocked bool) {
	blocking := task.BlockingSeverity(repo)
	check = review.Check{Conclusion: review.ConclusionSuccess, Blocking: blocking, PullURL: pullURL}
	for _, e := range ledger {
		if e.State == review.FindingOpen {
			check.Annotate = append(check.Annotate, e)
		}
		if e.Blocking(blocking) && !blocked {
			check.Conclusion, blocked = repo.Check.BlockingConclusion, true
		}
	}
	check.Title, check.Summary = c.Checks.CheckSummary(ledger, blocking, pullURL)
	modelSkippedCheck(&check, modelSkipped)
	return check, blocked
}

// modelSkippedCheck makes a passing check neutral when the model did not
// review the head (why says why; "" when it did): the analyzers found
// nothing blocking, but that is not a pass.
func modelSkippedCheck(c *review.Check, why string) {
	if why == "" || c.Conclusion != review.ConclusionSuccess {
		return
	}
	c.Conclusion, c.Title = review.ConclusionNeutral, "Model review skipped"
	c.Summary = "MergeGuard's model did not review this head: " + why + ". " +
		"The built-in analyzers and linters reviewed every changed file and found nothing blocking.\n\n" + c.Summary
}

// ModelSkippedOf returns why the model did not review a finished run's
// head, as its verdict's notes say ("Model review skipped: WHY. …"); ""
// when it did.
func ModelSkippedOf(v *review.Verdict) string {
	if v == nil {
		return ""
	}
	for _, n := range v.Notes {
		if why, ok := strings.CutPrefix(n, task.ModelSkippedNote); ok {
			why, _, _ = strings.Cut(why, ". The built-in analyzers")
			return why
		}
	}
	return ""
}

// Ending is how a run ended, for the check of a run that posted no
// review.
type Ending string

// Endings of a run.
const (
	EndedSucceeded  Ending = "succeeded"
	EndedSkipped    Ending = "skipped"
	EndedSuperseded Ending = "superseded"
	EndedFailed     Ending = "failed"
)

// Ended is the completed check of a run that posted no review; reason
// says why it was skipped or superseded, or, for a failed run, what the
// pull request was told ("" for the default).
func Ended(e Ending, reason string) review.Check {
	switch e {
	case EndedSkipped:
		return review.Check{Conclusion: review.ConclusionNeutral, Title: "Review skipped", Summary: "MergeGuard did not review this head: " + reason + "."}
	case EndedSuperseded:
		return review.Check{Conclusion: review.ConclusionCancelled, Title: "Superseded", Summary: "MergeGuard stopped reviewing this head: " + reason + "."}
	case EndedSucceeded:
		return review.Check{Conclusion: review.ConclusionNeutral, Title: "Reviewed", Summary: "MergeGuard reviewed this head."}
	}
	c := review.Check{Conclusion: review.ConclusionFailure, Title: "Review failed",
		Summary: "MergeGuard could not complete the review of this head. The details link shows what happened; comment `/mergeguard rerun` to try again."}
	if reason != "" {
		c.Summary = reason // the reason, as the pull request is told it
	}
	return c
}
