package worker

import (
	"context"
	"errors"
	"fmt"

	"github.com/mergeguard/mergeguard/github"
	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/lifecycle"
	"github.com/mergeguard/mergeguard/server/store"
)

// This file is the job's side of the MergeGuard check run of each reviewed
// head: what the check says is lifecycle.Checking's; the job starts it,
// records it on the run and completes it with the run, whatever its end.

// checking is the check-run use case over a repository.
func (p *Pool) checking(repo Repo) lifecycle.Checking {
	return lifecycle.Checking{Checks: checks{repo}, PublicURL: p.deps.PublicURL}
}

// checkRun is a run as its check run knows it.
func checkRun(run *store.Run) lifecycle.Run {
	return lifecycle.Run{ID: run.ID, HeadSHA: run.HeadSHA, CheckRunID: run.CheckRunID}
}

// startCheck marks the run's head in progress on its check run, once per
// run, and records it; best effort.
func (p *Pool) startCheck(ctx context.Context, j *job, repo Repo) {
	run := j.run
	id, err := p.checking(repo).Start(ctx, checkRun(run))
	switch {
	case err != nil:
		p.deps.Metrics.PostFailure("check_run")
		j.log.Warn().Err(err).Msg("create the check run")
		return
	case id == 0:
		return
	}
	if err := p.deps.Store.SetRunCheck(ctx, run.ID, j.workerID, id); err != nil {
		j.log.Warn().Err(err).Msg("record the check run")
	}
	run.CheckRunID = id
}

// endings are the check endings of the runs' statuses.
var endings = map[store.Status]lifecycle.Ending{
	store.StatusSucceeded: lifecycle.EndedSucceeded, store.StatusSkipped: lifecycle.EndedSkipped,
	store.StatusSuperseded: lifecycle.EndedSuperseded, store.StatusFailed: lifecycle.EndedFailed,
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
	var c lifecycle.Check
	switch {
	case out.check != nil:
		c = *out.check
	case out.result.Status == store.StatusFailed:
		c = lifecycle.Ended(lifecycle.EndedFailed, out.notice)
	default:
		c = lifecycle.Ended(endings[out.result.Status], out.result.Reason)
	}
	if err := p.checking(repo).Complete(ctx, checkRun(run), c); err != nil {
		p.deps.Metrics.PostFailure("check_run")
		j.log.Warn().Err(err).Str("conclusion", c.Conclusion).Msg("complete the check run")
	}
}

// checks is a repository as the lifecycle's Checks: the check's markdown
// and annotations are package github's.
type checks struct{ Repo }

func (c checks) CreateCheck(ctx context.Context, check lifecycle.Check) (int64, error) {
	id, err := c.Repo.CreateCheck(ctx, githubCheck(check))
	return id, annotationsRejected(err)
}

func (c checks) UpdateCheck(ctx context.Context, id int64, check lifecycle.Check) error {
	return annotationsRejected(c.Repo.UpdateCheck(ctx, id, githubCheck(check)))
}

func (checks) CheckSummary(ledger []review.LedgerEntry, blocking review.Severity, pullURL string) (string, string) {
	return github.CheckSummary(ledger, blocking, pullURL)
}

// githubCheck is a lifecycle check as package github writes it.
func githubCheck(c lifecycle.Check) github.Check {
	g := github.Check{HeadSHA: c.HeadSHA, Status: c.Status, Conclusion: c.Conclusion, DetailsURL: c.DetailsURL,
		ExternalID: c.ExternalID, Title: c.Title, Summary: c.Summary}
	if len(c.Annotate) > 0 {
		g.Annotations = github.LedgerAnnotations(c.Annotate, c.Blocking, c.PullURL)
	}
	return g
}

// annotationsRejected marks GitHub's refusal of annotations as the
// lifecycle's.
func annotationsRejected(err error) error {
	if errors.Is(err, github.ErrAnnotationsRejected) {
		return fmt.Errorf("%w: %w", lifecycle.ErrAnnotationsRejected, err)
	}
	return err
}
