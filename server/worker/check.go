package worker

import (
	"context"
	"errors"
	"strings"

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/github"
	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/pipeline"
	"github.com/mergeguard/mergeguard/server/store"
)

// This file is the MergeGuard check run of each reviewed head: in progress
// while a run works, completed with the run, whatever its end.

// startCheck marks the run's head in progress on its check run, once per
// run (a retried attempt goes on with the same check). It is best effort:
// an installation that has not granted checks: write is reviewed all the
// same.
func (p *Pool) startCheck(ctx context.Context, j *job, repo Repo) {
	run := j.run
	if run.CheckRunID != 0 || run.HeadSHA == "" {
		return
	}
	id, err := repo.CreateCheck(ctx, github.Check{HeadSHA: run.HeadSHA, Status: github.CheckInProgress,
		DetailsURL: p.detailsURL(run.ID), ExternalID: run.ID,
		Title: "Reviewing", Summary: "MergeGuard is reviewing this head; the details link follows the review live."})
	if err != nil && !errors.Is(err, github.ErrAnnotationsRejected) {
		p.deps.Metrics.PostFailure("check_run")
		j.log.Warn().Err(err).Msg("create the check run")
		return
	}
	if err := p.deps.Store.SetRunCheck(ctx, run.ID, j.workerID, id); err != nil {
		j.log.Warn().Err(err).Msg("record the check run")
	}
	run.CheckRunID = id
}

// reviewedCheck is the completed check of a posted review: success, or
// the repository's blocking conclusion while a blocking finding is open,
// with the ledger's counts and its open findings as annotations. A review
// whose model was skipped (a title keyword, a skip label, max_files) and
// found nothing blocking is neutral, not success.
func reviewedCheck(res *pipeline.Result, pullURL string) *github.Check {
	c, _ := ledgerCheck(res.Ledger.All, res.Config, pullURL)
	modelSkippedCheck(c, res.ModelSkipped)
	return c
}

// modelSkippedCheck makes a passing check neutral when the model did not
// review the head (why says why; "" when it did): the analyzers found
// nothing blocking, but that is not a pass.
func modelSkippedCheck(c *github.Check, why string) {
	if why == "" || c.Conclusion != github.ConclusionSuccess {
		return
	}
	c.Conclusion, c.Title = github.ConclusionNeutral, "Model review skipped"
	c.Summary = "MergeGuard's model did not review this head: " + why + ". " +
		"The built-in analyzers and linters reviewed every changed file and found nothing blocking.\n\n" + c.Summary
}

// modelSkippedOf returns why the model did not review a finished run's
// head, as its verdict's notes say ("Model review skipped: WHY. …"); ""
// when it did.
func modelSkippedOf(v *review.Verdict) string {
	if v == nil {
		return ""
	}
	for _, n := range v.Notes {
		if why, ok := strings.CutPrefix(n, pipeline.ModelSkippedNote); ok {
			why, _, _ = strings.Cut(why, ". The built-in analyzers")
			return why
		}
	}
	return ""
}

// ledgerCheck is the completed check of a pull request's whole ledger
// under repo: success, or the repository's blocking conclusion while a
// blocking entry (open, or exposed under secrets.removed: block) remains;
// blocked says which.
func ledgerCheck(ledger []review.LedgerEntry, repo config.Repo, pullURL string) (c *github.Check, blocked bool) {
	blocking := pipeline.BlockingSeverity(repo)
	c = &github.Check{Conclusion: github.ConclusionSuccess}
	var open []review.LedgerEntry
	for _, e := range ledger {
		if e.State == review.FindingOpen {
			open = append(open, e)
		}
		if e.Blocking(blocking) && !blocked {
			c.Conclusion, blocked = repo.Check.BlockingConclusion, true
		}
	}
	c.Title, c.Summary = github.CheckSummary(ledger, blocking, pullURL)
	c.Annotations = github.LedgerAnnotations(open, blocking, pullURL)
	return c, blocked
}

// endedCheck is the completed check of a run that posted no review.
func endedCheck(res store.Result) *github.Check {
	switch res.Status {
	case store.StatusSkipped:
		return &github.Check{Conclusion: github.ConclusionNeutral, Title: "Review skipped", Summary: "MergeGuard did not review this head: " + res.Reason + "."}
	case store.StatusSuperseded:
		return &github.Check{Conclusion: github.ConclusionCancelled, Title: "Superseded", Summary: "MergeGuard stopped reviewing this head: " + res.Reason + "."}
	case store.StatusSucceeded:
		return &github.Check{Conclusion: github.ConclusionNeutral, Title: "Reviewed", Summary: "MergeGuard reviewed this head."}
	}
	return &github.Check{Conclusion: github.ConclusionFailure, Title: "Review failed",
		Summary: "MergeGuard could not complete the review of this head. The details link shows what happened; comment `/mergeguard rerun` to try again."}
}

// completeCheck completes the run's check run with how the run ended,
// creating it when the run ended before starting it (a skipped run). It is
// best effort: the run is already recorded.
func (p *Pool) completeCheck(ctx context.Context, j *job, out outcome) {
	run := j.run
	if run.Mode != store.ModePR || run.HeadSHA == "" || p.deps.GitHub == nil || j.noCheck {
		return
	}
	repo, err := p.deps.GitHub.Repo(run.InstallationID, run.Repository)
	if err != nil {
		j.log.Warn().Err(err).Msg("complete the check run")
		return
	}
	c := out.check
	if c == nil {
		c = endedCheck(out.result)
		if out.result.Status == store.StatusFailed && out.notice != "" {
			c.Summary = out.notice // the reason, as the pull request is told it
		}
	}
	c.HeadSHA, c.Status, c.DetailsURL, c.ExternalID = run.HeadSHA, github.CheckCompleted, p.detailsURL(run.ID), run.ID
	if run.CheckRunID == 0 {
		_, err = repo.CreateCheck(ctx, *c)
	} else {
		err = repo.UpdateCheck(ctx, run.CheckRunID, *c)
	}
	if err != nil {
		p.deps.Metrics.PostFailure("check_run")
		j.log.Warn().Err(err).Str("conclusion", c.Conclusion).Msg("complete the check run")
	}
}
