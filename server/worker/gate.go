package worker

import (
	"context"
	"errors"

	"github.com/mergeguard/mergeguard/review/lifecycle"
	"github.com/mergeguard/mergeguard/server/store"
)

// This file refreshes a pull request's gate after a person's dismissal (a
// command, feedback, a 👎, a resolved thread): the check of the current
// head completes again from the ledger, and when nothing blocks any more
// the bot's REQUEST_CHANGES reviews are dismissed, without waiting for the
// next push. The store queues the refresh with the dismissal.

// refreshGate carries out one queued gate refresh; it reports whether
// there was one. A refresh that fails stays queued: its lease runs out and
// a worker (of any replica) tries it again.
func (p *Pool) refreshGate(ctx context.Context, workerID string) bool {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), claimTimeout)
	g, err := p.deps.Store.ClaimGateRefresh(cctx, p.cfg.Lease)
	cancel()
	if err != nil {
		if ctx.Err() == nil {
			p.log.Error().Err(err).Str("worker", workerID).Msg("claim gate refresh")
		}
		return false
	}
	if g == nil {
		return false
	}
	log := p.log.With().Str("worker", workerID).Str("repository", g.Repository).Int("github_pr_num", g.PRNumber).Logger()
	jctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), p.cfg.Lease)
	defer cancel()
	if err := p.applyGate(jctx, *g); err != nil {
		log.Warn().Err(err).Int("attempt", g.Attempts).Msg("refresh the gate")
		return true
	}
	if err := p.deps.Store.FinishGateRefresh(jctx, *g); err != nil {
		log.Warn().Err(err).Msg("finish gate refresh")
	}
	return true
}

// applyGate refreshes the gate of a pull request
// (lifecycle.Gating.Refresh).
func (p *Pool) applyGate(ctx context.Context, g store.GateRefresh) error {
	if p.deps.GitHub == nil {
		return errors.New("no GitHub App is configured")
	}
	repo, err := p.deps.GitHub.Repo(g.InstallationID, g.Repository)
	if err != nil {
		return err
	}
	uc := lifecycle.Gating{GitHub: repo, Checks: repo, Reviews: p.deps.Store, Findings: p.deps.Store,
		Repo: p.cfg.DefaultRepo, PublicURL: p.deps.PublicURL}
	return uc.Refresh(ctx, lifecycle.PullRequest{Repository: g.Repository, Number: g.PRNumber})
}
