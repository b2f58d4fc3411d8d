package lifecycle

import (
	"context"
	"errors"
	"fmt"

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/task"
)

// This file refreshes a pull request's gate after a person's dismissal (a
// command, feedback, a 👎, a resolved thread; docs/architecture.md, The
// life of a pull request): the check of the current head completes again
// from the ledger, and when nothing blocks any more the bot's
// REQUEST_CHANGES reviews are dismissed, without waiting for the next
// push.

// Findings reads the pull request's finding ledger.
type Findings interface {
	Ledger(ctx context.Context, repo string, number int) ([]review.LedgerEntry, error)
}

// Gate is the pull request on GitHub as its gate is refreshed.
type Gate interface {
	Head(ctx context.Context, number int) (review.PullHead, error)
	// Source is the pull request's content, from which its configuration
	// is read.
	Source(number int) review.Source
	PullURL(number int) string
	// DismissChangeRequests dismisses the bot's REQUEST_CHANGES reviews.
	DismissChangeRequests(ctx context.Context, number int, head string) ([]int64, error)
}

// Gating is the use case of refreshing a pull request's gate, with the
// roles it needs.
type Gating struct {
	GitHub   Gate
	Checks   Checks
	Reviews  Reviews
	Findings Findings
	// Repo is the default repository configuration .mergeguard.yml is
	// read over.
	Repo      config.Repo
	PublicURL string
}

// Refresh completes the check of the pull request's current head from its
// ledger and, when nothing blocks, dismisses the bot's REQUEST_CHANGES
// reviews. A head not reviewed yet is left to its review.
func (g Gating) Refresh(ctx context.Context, pr PullRequest) error {
	head, err := g.GitHub.Head(ctx, pr.Number)
	if err != nil {
		return fmt.Errorf("read head: %w", err)
	}
	run, err := g.Reviews.ReviewOfHead(ctx, pr.Repository, pr.Number, head.SHA)
	switch {
	case errors.Is(err, review.ErrNotFound):
		return nil // the head's review renders the gate when it ends
	case err != nil:
		return err
	}
	ledger, err := g.Findings.Ledger(ctx, pr.Repository, pr.Number)
	if err != nil {
		return err
	}
	cfg, err := task.RepoConfig(ctx, task.Request{Source: g.GitHub.Source(pr.Number), Repo: g.Repo, ReadRepoFile: true})
	if err != nil {
		return err
	}
	uc := Checking{Checks: g.Checks, PublicURL: g.PublicURL}
	c, blocked := uc.OfLedger(ledger, cfg, ModelSkippedOf(run.Verdict), g.GitHub.PullURL(pr.Number))
	if err := uc.Complete(ctx, Run{ID: run.RunID, HeadSHA: head.SHA, CheckRunID: run.CheckRunID}, c); err != nil {
		return fmt.Errorf("complete the check run: %w", err)
	}
	if blocked {
		return nil
	}
	if _, err := g.GitHub.DismissChangeRequests(ctx, pr.Number, head.SHA); err != nil {
		return err
	}
	return nil
}
