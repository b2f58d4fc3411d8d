package worker

import (
	"context"

	"github.com/mergeguard/mergeguard/github"
	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/lifecycle"
	"github.com/mergeguard/mergeguard/review/pipeline"
)

// This file is the job's side of the reviews that converge
// (docs/architecture.md): what a review starts from is
// lifecycle.Preparing's, what follows a posted review lifecycle.FollowUp's;
// the job logs what they could not do.

// prepare is what the run's review starts from: the healed ledger, and
// what changed since the last reviewed head or why the review is full.
func (p *Pool) prepare(ctx context.Context, j *job, repo Repo, opts review.Options) (lifecycle.Prepared, error) {
	run := j.run
	uc := lifecycle.Preparing{Ledger: ledger{p.deps.Store}, Conversation: repo, People: repo, Commits: repo,
		Retry: func(err error) bool { _, ok := github.Transient(err); return ok }}
	h, err := uc.Prepare(ctx, pullOf(run), run.ID, lifecycle.Head{SHA: run.HeadSHA, BaseSHA: run.BaseSHA}, opts.Full)
	if err != nil {
		return lifecycle.Prepared{}, err
	}
	logProblems(j, h.Problems)
	if h.Applied {
		j.log.Info().Msg("what people did to MergeGuard's threads since the last review was applied to the ledger")
	}
	return h, nil
}

// followUp is the follow-up part of the review body.
func followUp(res *pipeline.Result) *github.FollowUp {
	l := res.Ledger
	var exposed []review.LedgerEntry
	for _, e := range l.All {
		if e.State == review.FindingExposed {
			exposed = append(exposed, e)
		}
	}
	return &github.FollowUp{Scope: res.Scope, Fixed: l.Fixed, StillOpen: l.StillOpen, Dismissed: l.Dismissed,
		Exposed: exposed, BlockingCleared: l.BlockingCleared}
}

// followUpPosted resolves the threads of the findings the posted review
// found fixed and answers in the threads of the secrets it found exposed;
// best effort.
func (p *Pool) followUpPosted(ctx context.Context, j *job, repo Repo, res *pipeline.Result, h lifecycle.Prepared) {
	f := lifecycle.FollowUp(ctx, repo, pullOf(j.run), res.Ledger.Fixed, res.Ledger.Exposed, h.Resolved)
	for range f.Unresolved {
		p.deps.Metrics.PostFailure("resolve_thread")
	}
	logProblems(j, f.Problems)
}

// detailsURL is the run's page in the web UI, "" without a public URL.
func (p *Pool) detailsURL(runID string) string {
	return lifecycle.RunPage(p.deps.PublicURL, runID)
}
