package worker

import (
	"context"
	"errors"
	"fmt"

	"github.com/mergeguard/mergeguard/review/lifecycle"
	"github.com/mergeguard/mergeguard/review/pipeline"
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

// applyGate completes the check of the pull request's current head from
// its ledger and, when nothing blocks, dismisses the bot's REQUEST_CHANGES
// reviews. A head not reviewed yet is left to its review.
func (p *Pool) applyGate(ctx context.Context, g store.GateRefresh) error {
	if p.deps.GitHub == nil {
		return errors.New("no GitHub App is configured")
	}
	repo, err := p.deps.GitHub.Repo(g.InstallationID, g.Repository)
	if err != nil {
		return err
	}
	head, err := repo.Head(ctx, g.PRNumber)
	if err != nil {
		return fmt.Errorf("read head: %w", err)
	}
	run, err := p.deps.Store.ReviewOfHead(ctx, g.Repository, g.PRNumber, head.SHA)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil // the head's review renders the gate when it ends
	case err != nil:
		return err
	}
	ledger, err := p.deps.Store.Ledger(ctx, g.Repository, g.PRNumber)
	if err != nil {
		return err
	}
	cfg, err := pipeline.RepoConfig(ctx, pipeline.Request{Source: repo.Source(g.PRNumber), Repo: p.cfg.DefaultRepo, ReadRepoFile: true})
	if err != nil {
		return err
	}
	uc := p.checking(repo)
	c, blocked := uc.OfLedger(ledger, cfg, lifecycle.ModelSkippedOf(run.Result), repo.PullURL(g.PRNumber))
	if err := uc.Complete(ctx, checkRun(&run), c); err != nil {
		return fmt.Errorf("complete the check run: %w", err)
	}
	if blocked {
		return nil
	}
	if _, err := repo.DismissChangeRequests(ctx, g.PRNumber, head.SHA); err != nil {
		return err
	}
	return nil
}
