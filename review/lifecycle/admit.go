package lifecycle

import (
	"context"
	"fmt"
	"time"

	"github.com/mergeguard/mergeguard/config"
)

// This file admits a run before any GitHub call, from the store alone
// (docs/architecture.md, The life of a pull request): a pull request whose
// automatic reviews are paused and an installation over its daily budget
// are skipped.

// Usage is what the store knows of a pull request's pause and of an
// installation's spending.
type Usage interface {
	Paused(ctx context.Context, repo string, number int) (bool, error)
	InstallationUsageSince(ctx context.Context, installationID int64, since time.Time) (tokens int, cost float64, err error)
}

// Admitting is the use case of admitting a run, with what it needs.
type Admitting struct {
	Usage   Usage
	Budgets config.Budgets
	// Now is the clock; nil is time.Now.
	Now func() time.Time
}

// Admission is whether a run may go on: Skip says why not ("" when it
// may), Notice what the pull request is told.
type Admission struct {
	Skip, Notice string
}

// Admit admits a run of installationID on pr; automatic is set for a run
// a webhook queued, which a pause stops.
func (a Admitting) Admit(ctx context.Context, pr PullRequest, installationID int64, automatic bool) (Admission, error) {
	if automatic {
		paused, err := a.Usage.Paused(ctx, pr.Repository, pr.Number)
		if err != nil {
			return Admission{}, err
		}
		if paused {
			return Admission{Skip: "automatic reviews are paused on this pull request (/mergeguard resume restarts them)"}, nil
		}
	}
	reason, err := a.overDailyBudget(ctx, installationID)
	if err != nil || reason == "" {
		return Admission{}, err
	}
	return Admission{Skip: reason, Notice: "MergeGuard did not review this pull request: " + reason + "."}, nil
}

// overDailyBudget says why an installation may not spend more today, ""
// when it may.
func (a Admitting) overDailyBudget(ctx context.Context, installationID int64) (string, error) {
	b := a.Budgets
	if b.InstallationDailyMaxTokens <= 0 && b.InstallationDailyMaxCost <= 0 {
		return "", nil
	}
	now := time.Now
	if a.Now != nil {
		now = a.Now
	}
	day := now().UTC().Truncate(24 * time.Hour)
	tokens, cost, err := a.Usage.InstallationUsageSince(ctx, installationID, day)
	if err != nil {
		return "", err
	}
	switch {
	case b.InstallationDailyMaxTokens > 0 && tokens >= b.InstallationDailyMaxTokens:
		return fmt.Sprintf("this installation used its daily budget of %d tokens; reviews resume at 00:00 UTC", b.InstallationDailyMaxTokens), nil
	case b.InstallationDailyMaxCost > 0 && cost >= b.InstallationDailyMaxCost:
		return fmt.Sprintf("this installation used its daily budget of $%.2f; reviews resume at 00:00 UTC", b.InstallationDailyMaxCost), nil
	}
	return "", nil
}
