package worker

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/mergeguard/mergeguard/github"
	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/lifecycle"
	"github.com/mergeguard/mergeguard/review/source/difftext"
	"github.com/mergeguard/mergeguard/server/store"
)

// postTimeout bounds posting a review. Posting is not cancelled by a newer
// head once it has begun: the post was claimed while the head was current,
// and a half-posted review is worse than a stale one.
const postTimeout = 2 * time.Minute

// job is one claimed run being worked on.
type job struct {
	run       *store.Run
	workerID  string
	log       *zerolog.Logger
	claimedAt time.Time
}

// outcome is how a job ended without error: what FinishRun records (the
// posted review included), and how the pull request is told
// (lifecycle.Closing).
type outcome struct {
	result store.Result
	end    lifecycle.End
}

func superseded(reason string) outcome {
	return outcome{result: store.Result{Status: store.StatusSuperseded, Reason: reason},
		end: lifecycle.End{Ending: lifecycle.EndedSuperseded, Reason: reason}}
}

// review works on one run.
func (p *Pool) review(ctx context.Context, j *job) (outcome, error) {
	switch j.run.Mode {
	case store.ModePR:
		return p.reviewPR(ctx, j)
	case store.ModeDiff:
		return p.reviewDiff(ctx, j)
	case store.ModeAnswer:
		return p.answer(ctx, j)
	}
	return outcome{}, fmt.Errorf("run mode %q is not worked on by workers", j.run.Mode)
}

// reviewDiff reviews the diff text of an API run; nothing is posted.
func (p *Pool) reviewDiff(ctx context.Context, j *job) (outcome, error) {
	if j.run.DiffText == nil {
		return outcome{}, errors.New("diff run without diff text")
	}
	src, err := difftext.New(*j.run.DiffText)
	if err != nil {
		return outcome{}, lifecycle.UserError{Err: err}
	}
	in, err := p.input(j, src)
	if err != nil {
		return outcome{}, err
	}
	o, err := lifecycle.ReviewText(ctx, p.deps.Reviewer, in)
	return p.reviewed(j, o, err)
}

// reviewPR is the job of a pull request run: lifecycle.Reviewing reviews
// the head and publishes the review once; this only moves it between the
// store and GitHub.
func (p *Pool) reviewPR(ctx context.Context, j *job) (outcome, error) {
	repo, err := p.repo(j)
	if err != nil {
		return outcome{}, err
	}
	in, err := p.input(j, repo.Source(j.run.PRNumber))
	if err != nil {
		return outcome{}, err
	}
	run := j.run
	o, err := p.reviewing(j, repo, in.Options.Describe).Review(ctx, lifecycle.ReviewAsked{PullRequest: pullOf(run), RunID: run.ID,
		InstallationID: run.InstallationID, CheckRunID: run.CheckRunID, ReviewInput: in,
		Queued:    review.PullHead{SHA: run.HeadSHA, BaseSHA: run.BaseSHA, Branch: run.Branch},
		Automatic: run.Trigger == store.TriggerWebhook, LastAttempt: run.Attempts >= run.MaxAttempts})
	return p.reviewed(j, o, err)
}

// reviewing is the review use case of a job's pull request.
func (p *Pool) reviewing(j *job, repo Repo, describe bool) lifecycle.Reviewing {
	st := p.deps.Store
	uc := lifecycle.Reviewing{Pipeline: p.deps.Reviewer, Publisher: repo, Admitting: p.admitting(), Checking: p.checking(repo),
		Preparing: lifecycle.Preparing{Ledger: st, Conversation: repo, People: repo, Commits: repo, Retry: retryable,
			Memory: st, MemoryLimit: p.cfg.Memory.Dismissals},
		Learnings: st, Run: p.runLog(j), PublicURL: p.deps.PublicURL, PostTimeout: postTimeout, Experiments: p.cfg.Experiments}
	if describe {
		run := j.run
		uc.Describing = &lifecycle.Describing{GitHub: repo, Reviews: st, PublicURL: p.deps.PublicURL,
			Retry: func(err error) bool { return retryable(err) && run.Attempts < run.MaxAttempts }}
	}
	return uc
}

func (p *Pool) admitting() lifecycle.Admitting {
	return lifecycle.Admitting{Usage: p.deps.Store, Budgets: p.cfg.Budgets}
}

func (p *Pool) checking(repo Repo) lifecycle.Checking {
	return lifecycle.Checking{Checks: repo, PublicURL: p.deps.PublicURL}
}

// reviewed is the outcome of a run's review: what the store records.
func (p *Pool) reviewed(j *job, o lifecycle.Outcome, err error) (outcome, error) {
	p.logProblems(j, o.Problems)
	if o.Healed {
		j.log.Info().Msg("what people did to MergeGuard's threads since the last review was applied to the ledger")
	}
	for range o.Unresolved {
		p.deps.Metrics.PostFailure("resolve_thread")
	}
	if pe, ok := errors.AsType[lifecycle.PublishError](err); ok {
		p.deps.Metrics.PostFailure(github.FailureReason(pe.Err))
	}
	if err != nil {
		return outcome{}, err
	}
	if o.Ending == lifecycle.EndedSuperseded {
		return superseded(o.Reason), nil
	}
	out := outcome{end: lifecycle.EndOf(o), result: store.Result{Status: store.StatusSkipped, Reason: o.Reason}}
	res := o.Result
	if res == nil { // skipped before the review: not admitted, or described from an earlier one
		return out, nil
	}
	out.result.Agents, out.result.Model, out.result.Cost = res.Verdict.Agents, cmp.Or(res.Model, p.deps.Model), res.Cost
	out.result.Arm, out.result.PromptVersion = res.Arm, res.PromptVersion
	if o.Ending == lifecycle.EndedSkipped {
		return out, nil
	}
	out.result.Status, out.result.Verdict = store.StatusSucceeded, &res.Verdict
	if o.Posted != nil {
		out.result.Scope = res.Scope
		out.result.Posted = &store.Posting{ReviewID: o.Posted.ReviewID, Placements: o.Posted.Placements}
		out.result.Ledger = o.Ledger
	}
	return out, nil
}

// repo opens the repository of a pull request run.
func (p *Pool) repo(j *job) (Repo, error) {
	if p.deps.GitHub == nil {
		return nil, errors.New("no GitHub App is configured")
	}
	return p.deps.GitHub.Repo(j.run.InstallationID, j.run.Repository)
}

// input is what a run's review reads and is asked with: its options,
// the default repository configuration, the per-review token budget and
// the event sink.
func (p *Pool) input(j *job, src review.Source) (lifecycle.ReviewInput, error) {
	opts, err := j.run.ReviewOptions()
	if err != nil {
		return lifecycle.ReviewInput{}, err
	}
	if opts, err = opts.Normalize(); err != nil {
		return lifecycle.ReviewInput{}, lifecycle.UserError{Err: fmt.Errorf("run options: %w", err)}
	}
	return lifecycle.ReviewInput{Source: src, Repo: p.cfg.DefaultRepo, Options: opts,
		MaxTokens: p.cfg.Budgets.ReviewMaxTokens, Sink: p.sink(j)}, nil
}

// sink appends the pipeline's events to the run's event log and times the
// stages. An event that cannot be stored is logged and dropped: the review
// goes on.
func (p *Pool) sink(j *job) review.Sink {
	var mu sync.Mutex
	stages := p.deps.Metrics.NewStageTimer(nil)
	return review.SinkFunc(func(ctx context.Context, e review.Event) {
		mu.Lock()
		stages.Observe(e)
		mu.Unlock()
		if _, err := p.deps.Store.AppendEvent(ctx, j.run.ID, e); err != nil && ctx.Err() == nil {
			j.log.Warn().Err(err).Str("event", string(e.Type)).Msg("store review event")
		}
	})
}
