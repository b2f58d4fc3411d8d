package worker

import (
	"context"
	"errors"
	"time"

	"github.com/rs/zerolog"

	"github.com/mergeguard/mergeguard/github"
	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/lifecycle"
	"github.com/mergeguard/mergeguard/server/metrics"
	"github.com/mergeguard/mergeguard/server/store"
)

// Store is what the workers need from the database; *store.Store
// implements it: the queue of runs, and the roles of review/lifecycle the
// store plays as it is.
type Store interface {
	lifecycle.Ledger
	lifecycle.Feedback
	lifecycle.Reviews
	lifecycle.Usage
	lifecycle.Learnings
	lifecycle.Memory
	ReapRuns(ctx context.Context) ([]store.Run, error)
	ClaimRun(ctx context.Context, workerID string, lease time.Duration) (*store.Run, error)
	RenewLease(ctx context.Context, runID, workerID string, lease time.Duration) (cancelRequested bool, err error)
	RetryRun(ctx context.Context, runID, workerID string, after time.Duration, errMsg string) error
	SetRunHead(ctx context.Context, runID, workerID string, head review.PullHead) error
	SetRunCheck(ctx context.Context, runID, workerID string, checkRunID int64) error
	FinishRun(ctx context.Context, runID, workerID string, res store.Result) error
	ClaimPost(ctx context.Context, runID, workerID string) (alreadyStarted bool, err error)
	AppendEvent(ctx context.Context, runID string, e review.Event) (seq int, err error)
	Listen(ctx context.Context, channel string, fn func(payload string))
	ClaimGateRefresh(ctx context.Context, lease time.Duration) (*store.GateRefresh, error)
	FinishGateRefresh(ctx context.Context, g store.GateRefresh) error
}

var _ Store = (*store.Store)(nil)

// GitHub opens the repository of a pull request run.
type GitHub interface {
	Repo(installationID int64, fullName string) (Repo, error)
}

// Repo is a pull request's repository: the roles of review/lifecycle,
// which *github.Repo plays as it is.
type Repo interface {
	lifecycle.Conversation
	lifecycle.People
	lifecycle.Commits
	lifecycle.Gate
	lifecycle.Checks
	lifecycle.Commenter
	Publish(ctx context.Context, post review.Post) (review.Posted, error)
	Describe(ctx context.Context, number int, d review.Description) (bool, error)
}

var _ Repo = (*github.Repo)(nil)

// Installations is the GitHub of the App's installations.
func Installations(i *github.Installations) GitHub { return installations{i} }

type installations struct{ i *github.Installations }

func (g installations) Repo(installationID int64, fullName string) (Repo, error) {
	r, err := g.i.Repo(installationID, fullName)
	if err != nil {
		return nil, err
	}
	return r, nil
}

// Deps are what a Pool needs.
type Deps struct {
	Store Store
	// GitHub opens pull requests' repositories. It may be nil when no
	// GitHub App is configured; pull request runs then fail.
	GitHub GitHub
	// Reviewer runs the reviews.
	Reviewer lifecycle.Reviewer
	// Answerer answers questions (answer runs); nil fails them.
	Answerer lifecycle.Answerer
	// PublicURL is where people reach MergeGuard's web UI; reviews link
	// their run's page under it. Empty leaves the link out.
	PublicURL string
	// Model names the LLM reviews are billed to, "" without one.
	Model string
	// Metrics records finished reviews, stage times, retries and posting
	// failures; nil records nothing.
	Metrics *metrics.Metrics
	// Logger is the base logger.
	Logger *zerolog.Logger
}

func (d Deps) check() error {
	if d.Store == nil || d.Reviewer == nil || d.Logger == nil {
		return errors.New("store, reviewer and logger are required")
	}
	return nil
}
