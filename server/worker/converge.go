package worker

import (
	"context"
	"errors"

	"github.com/mergeguard/mergeguard/github"
	"github.com/mergeguard/mergeguard/review/lifecycle"
)

// This file adapts the repository handle to the roles of reviews that
// converge (docs/architecture.md): what a review starts from is
// lifecycle.Preparing's, what it posts lifecycle.Reviewing's.

// preparing is the use case that prepares a review of a repository's
// pull request.
func (p *Pool) preparing(repo Repo) lifecycle.Preparing {
	return lifecycle.Preparing{Ledger: ledger{p.deps.Store}, Conversation: repo, People: repo, Commits: repo,
		Retry: func(err error) bool { _, ok := github.Transient(err); return ok }}
}

// publisher is a repository as the lifecycle's Publisher: the review's
// markdown is package github's.
type publisher struct{ Repo }

func (r publisher) Publish(ctx context.Context, p lifecycle.Post) (lifecycle.Posted, error) {
	post := github.Post{Number: p.Number, HeadSHA: p.HeadSHA, RunID: p.RunID, Verdict: p.Verdict,
		Findings: p.Findings, Index: p.Index, DetailsURL: p.DetailsURL}
	if f := p.FollowUp; f != nil {
		post.FollowUp = &github.FollowUp{Scope: f.Scope, Fixed: f.Fixed, StillOpen: f.StillOpen, Dismissed: f.Dismissed,
			Exposed: f.Exposed, BlockingCleared: f.BlockingCleared}
	}
	posted, err := r.Repo.Publish(ctx, post)
	if errors.Is(err, github.ErrDismiss) {
		err = errors.Join(lifecycle.ErrDismiss, err)
	}
	return lifecycle.Posted{ReviewID: posted.ReviewID, Placements: posted.Placements}, err
}
