package worker

import (
	"context"
	"encoding/json"
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
	// noCheck keeps the run from completing a check run: a describe run
	// that reviewed nothing must not replace the head's check.
	noCheck bool
}

// outcome is how a job ended without error.
type outcome struct {
	// result is what FinishRun records, the posted review included.
	result store.Result
	// notice is a comment for the pull request explaining a skip.
	notice string
	// check is the completed check run of a posted review; nil gives the
	// check of the result's status.
	check *lifecycle.Check
}

func skipped(reason string) outcome {
	return outcome{result: store.Result{Status: store.StatusSkipped, Reason: reason}}
}

func superseded(reason string) outcome {
	return outcome{result: store.Result{Status: store.StatusSuperseded, Reason: reason}}
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

// reviewPR is the job of a pull request run: describe from an earlier
// review, gate, start the check, then lifecycle.Reviewing reviews the head
// and publishes the review once; this only moves it between the store and
// GitHub.
func (p *Pool) reviewPR(ctx context.Context, j *job) (outcome, error) {
	describe := describeAsked(j.run)
	var repo Repo
	if describe { // before the gate: describing from a review costs nothing
		var err error
		if repo, err = p.repo(j); err != nil {
			return outcome{}, err
		}
		if out, done, err := p.describeFromReview(ctx, j, repo); done || err != nil {
			return out, err
		}
	}
	if out, stop, err := p.gate(ctx, j); stop || err != nil {
		return out, err
	}
	if repo == nil {
		var err error
		if repo, err = p.repo(j); err != nil {
			return outcome{}, err
		}
	}
	in, err := p.input(j, repo.Source(j.run.PRNumber))
	if err != nil {
		return outcome{}, err
	}
	p.startCheck(ctx, j, repo)
	run := j.run
	o, err := p.reviewing(j, repo, describe).Review(ctx, lifecycle.ReviewAsked{PullRequest: pullOf(run), RunID: run.ID,
		Queued: review.PullHead{SHA: run.HeadSHA, BaseSHA: run.BaseSHA, Branch: run.Branch}, ReviewInput: in,
		Automatic: run.Trigger == store.TriggerWebhook, LastAttempt: run.Attempts >= run.MaxAttempts})
	return p.reviewed(j, o, err)
}

// reviewing is the review use case of a job's pull request.
func (p *Pool) reviewing(j *job, repo Repo, describe bool) lifecycle.Reviewing {
	uc := lifecycle.Reviewing{Pipeline: p.deps.Reviewer, Publisher: publisher{repo}, Preparing: p.preparing(repo),
		Checking: p.checking(repo), Learnings: p.deps.Store, Run: p.runLog(j), PublicURL: p.deps.PublicURL, PostTimeout: postTimeout}
	if describe {
		d := p.describing(j, repo)
		uc.Describing = &d
	}
	return uc
}

// reviewed is the outcome of a run's review: what the store records.
func (p *Pool) reviewed(j *job, o lifecycle.Outcome, err error) (outcome, error) {
	logProblems(j, o.Problems)
	if o.Healed {
		j.log.Info().Msg("what people did to MergeGuard's threads since the last review was applied to the ledger")
	}
	for range o.Unresolved {
		p.deps.Metrics.PostFailure("resolve_thread")
	}
	var pe lifecycle.PublishError
	if errors.As(err, &pe) {
		p.deps.Metrics.PostFailure(github.FailureReason(pe.Err))
	}
	if err != nil {
		return outcome{}, err
	}
	if o.Ending == lifecycle.EndedSuperseded {
		return superseded(o.Reason), nil
	}
	res := o.Result
	out := outcome{notice: o.Notice, check: o.Check, result: store.Result{
		Status: store.StatusSucceeded, Verdict: &res.Verdict, Agents: res.Verdict.Agents, Model: p.deps.Model, Cost: res.Cost,
	}}
	if o.Ending == lifecycle.EndedSkipped {
		out.result.Status, out.result.Reason, out.result.Verdict = store.StatusSkipped, o.Reason, nil
		return out, nil
	}
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

// gate admits the run before any GitHub call (lifecycle.Admitting): a
// paused pull request and an installation over its daily budget are
// skipped. stop is set when the job ends there.
func (p *Pool) gate(ctx context.Context, j *job) (out outcome, stop bool, err error) {
	run := j.run
	adm, err := lifecycle.Admitting{Usage: p.deps.Store, Budgets: p.cfg.Budgets}.Admit(ctx, pullOf(run), run.InstallationID, run.Trigger == store.TriggerWebhook)
	if err != nil || adm.Skip == "" {
		return outcome{}, err != nil, err
	}
	out = skipped(adm.Skip)
	out.notice = adm.Notice
	return out, true, nil
}

// input is what a run's review reads and is asked with: its options,
// the default repository configuration, the per-review token budget and
// the event sink.
func (p *Pool) input(j *job, src review.Source) (lifecycle.ReviewInput, error) {
	var opts review.Options
	if len(j.run.Options) > 0 {
		if err := json.Unmarshal(j.run.Options, &opts); err != nil {
			return lifecycle.ReviewInput{}, fmt.Errorf("decode run options: %w", err)
		}
	}
	opts, err := opts.Normalize()
	if err != nil {
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
