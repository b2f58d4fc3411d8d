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
	"github.com/mergeguard/mergeguard/review/pipeline"
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

// userError is a failure the pull request's author can fix, such as bad
// run options; its text goes into the failure comment as is.
type userError struct{ err error }

func (e userError) Error() string { return e.err.Error() }
func (e userError) Unwrap() error { return e.err }

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
		return outcome{}, userError{err}
	}
	req, err := p.request(j, src)
	if err != nil {
		return outcome{}, err
	}
	_, out, err := p.runPipeline(ctx, req)
	return out, err
}

// reviewPR is the job of a pull request run: gate, review, publish. The
// pipeline decides everything about the review; this only moves it between
// the store and GitHub.
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
	src := headSource{Source: repo.Source(j.run.PRNumber), pool: p, job: j}
	req, err := p.request(j, src)
	if err != nil {
		return outcome{}, err
	}
	p.startCheck(ctx, j, repo)
	h, err := p.prepare(ctx, j, repo, req.Options)
	if err != nil {
		return outcome{}, err
	}
	if req.Learnings, err = p.deps.Store.Learnings(ctx, j.run.Repository, review.LearningActive); err != nil {
		return outcome{}, err
	}
	req.ReadRepoFile, req.Automatic, req.History = true, j.run.Trigger == store.TriggerWebhook, h.History
	res, out, err := p.runPipeline(ctx, req)
	var moved headMovedError
	if errors.As(err, &moved) {
		return superseded(moved.Error()), nil
	}
	if errors.Is(err, pipeline.ErrLLMUnavailable) {
		return p.publishWithoutModel(ctx, j, repo, res, out, h, err)
	}
	if err == nil && describe && out.result.Status == store.StatusSkipped {
		out.notice = lifecycle.JoinNotice(out.notice, lifecycle.NoReviewToDescribe)
	}
	if err != nil || out.result.Status != store.StatusSucceeded {
		return out, err
	}
	out.result.Scope = res.Scope
	return p.publish(ctx, j, repo, res, out, h)
}

// publishWithoutModel delivers a review whose model was unavailable:
// degraded, not empty. While the run has attempts left, the model's error
// is returned and the job is tried again later (a run posts one review).
// On its last attempt, when the built-in analyzers and linters found
// something, their review is published (the check counts it, its notes
// say the model could not be reached) and the run still ends failed,
// telling the pull request (analyzersPosted): the next review of the pull
// request is then a full one, which the model reviews.
func (p *Pool) publishWithoutModel(ctx context.Context, j *job, repo Repo, res *pipeline.Result, out outcome, h lifecycle.Prepared, modelErr error) (outcome, error) {
	if res == nil || len(res.Verdict.Findings()) == 0 || j.run.Attempts < j.run.MaxAttempts {
		return outcome{}, modelErr
	}
	out.result.Scope = res.Scope
	if _, err := p.publish(ctx, j, repo, res, out, h); err != nil {
		return outcome{}, fmt.Errorf("publish the review without the model: %w", err)
	}
	return outcome{}, analyzersPosted{modelErr}
}

// analyzersPosted is the error of a run whose model was unavailable after
// the analyzers' review was posted; it unwraps to the model's error.
type analyzersPosted struct{ error }

func (e analyzersPosted) Unwrap() error { return e.error }

// repo opens the repository of a pull request run.
func (p *Pool) repo(j *job) (Repo, error) {
	if p.deps.GitHub == nil {
		return nil, errors.New("no GitHub App is configured")
	}
	return p.deps.GitHub.Repo(j.run.InstallationID, j.run.Repository)
}

// gate makes the checks that need only the database, before any GitHub
// call: a paused pull request and an installation over its daily budget are
// skipped. stop is set when the job ends there.
func (p *Pool) gate(ctx context.Context, j *job) (out outcome, stop bool, err error) {
	if j.run.Trigger == store.TriggerWebhook {
		paused, err := p.deps.Store.Paused(ctx, j.run.Repository, j.run.PRNumber)
		if err != nil || paused {
			return skipped("automatic reviews are paused on this pull request (/mergeguard resume restarts them)"), true, err
		}
	}
	reason, err := p.overDailyBudget(ctx, j.run.InstallationID)
	if err != nil || reason == "" {
		return outcome{}, err != nil, err
	}
	out = skipped(reason)
	out.notice = "MergeGuard did not review this pull request: " + reason + "."
	return out, true, nil
}

// headMovedError: the pull request's head is no longer the one the run
// was queued for.
type headMovedError struct{ from, to string }

func (e headMovedError) Error() string {
	return fmt.Sprintf("the head moved from %s to %s before the review started", lifecycle.ShortSHA(e.from), lifecycle.ShortSHA(e.to))
}

// headSource is the Source of a pull request run: when the pipeline first
// reads the change, the run learns (and records) the head it reviews, or
// stops when a newer head was pushed after it was queued.
type headSource struct {
	review.Source
	pool *Pool
	job  *job
}

// Preload fetches the whole head at once when the Source can (GitHub's
// archive: one call instead of one per file); the embedded interface
// alone would hide it from the pipeline.
func (s headSource) Preload(ctx context.Context) error {
	if p, ok := s.Source.(interface{ Preload(context.Context) error }); ok {
		return p.Preload(ctx)
	}
	return nil
}

func (s headSource) Change(ctx context.Context) (review.Change, error) {
	change, err := s.Source.Change(ctx)
	if err != nil {
		return review.Change{}, fmt.Errorf("read pull request: %w", err)
	}
	run := s.job.run
	if run.HeadSHA != "" && change.HeadSHA != run.HeadSHA {
		return review.Change{}, headMovedError{from: run.HeadSHA, to: change.HeadSHA}
	}
	return change, s.pool.recordHead(ctx, s.job, change.PullHead())
}

// publish posts the review once, unless the head moved during the review.
func (p *Pool) publish(ctx context.Context, j *job, repo Repo, res *pipeline.Result, out outcome, h lifecycle.Prepared) (outcome, error) {
	run := j.run
	head, err := repo.Head(ctx, run.PRNumber)
	if err != nil {
		return outcome{}, fmt.Errorf("re-read head before posting: %w", err)
	}
	if head.SHA != res.Change.HeadSHA {
		return superseded(fmt.Sprintf("the head moved from %s to %s during the review", lifecycle.ShortSHA(res.Change.HeadSHA), lifecycle.ShortSHA(head.SHA))), nil
	}
	var alreadyStarted bool
	err = withDB(ctx, func() (err error) {
		alreadyStarted, err = p.deps.Store.ClaimPost(ctx, run.ID, j.workerID)
		return err
	})
	switch {
	case errors.Is(err, store.ErrCancelled):
		return superseded("a newer head was pushed before the review was posted"), nil
	case err != nil:
		return outcome{}, err
	}
	if alreadyStarted {
		j.log.Info().Msg("an earlier attempt started posting; Publish finds its review by the run's marker")
	}
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), postTimeout)
	defer cancel()
	post := github.Post{Number: run.PRNumber, HeadSHA: res.Change.HeadSHA, RunID: run.ID, Verdict: res.Verdict,
		Findings: res.Verdict.Findings(), Index: res.Index, DetailsURL: p.detailsURL(run.ID)} // false positives are stored, not posted
	if h.FollowUp {
		post.FollowUp = followUp(res)
	}
	posted, err := repo.Publish(pctx, post)
	switch {
	case errors.Is(err, github.ErrDismiss):
		j.log.Warn().Err(err).Msg("review posted; an earlier review could not be dismissed")
	case err != nil:
		p.deps.Metrics.PostFailure(github.FailureReason(err))
		return outcome{}, err
	}
	out.result.Posted = &store.Posting{ReviewID: posted.ReviewID, Placements: placements(j, post.Findings, posted)}
	out.result.Ledger = lifecycle.WithPlacements(res.Ledger.Changed, posted.Placements)
	p.followUpPosted(pctx, j, repo, res, h)
	check := p.checking(repo).Reviewed(res, repo.PullURL(run.PRNumber))
	out.check = &check
	if describeAsked(run) {
		p.describeAfterReview(pctx, j, repo, res.Verdict.Walkthrough, &out)
	}
	return out, nil
}

// recordHead records on the run the revision the review reads (head, base
// and branch as GitHub gives them when the review starts) unless the run
// already names exactly that: a run queued without a head learns it only
// now, and the base a webhook payload gave may have moved since.
func (p *Pool) recordHead(ctx context.Context, j *job, head review.PullHead) error {
	run := j.run
	if head == (review.PullHead{SHA: run.HeadSHA, BaseSHA: run.BaseSHA, Branch: run.Branch}) {
		return nil
	}
	if err := p.deps.Store.SetRunHead(ctx, run.ID, j.workerID, head); err != nil {
		return err
	}
	run.HeadSHA, run.BaseSHA, run.Branch = head.SHA, head.BaseSHA, head.Branch
	return nil
}

// placements converts where Publish put each finding for the store. A
// placement of a fingerprint the run does not store is logged and dropped:
// it must not keep the run from being recorded.
func placements(j *job, findings []review.Finding, posted github.Posted) map[string]review.Placement {
	stored := make(map[string]bool, len(findings))
	for _, f := range findings {
		stored[f.Fingerprint] = true
	}
	out := make(map[string]review.Placement, len(posted.Placements))
	for fp, pl := range posted.Placements {
		if !stored[fp] {
			j.log.Warn().Str("fingerprint", fp).Str("where", pl.Where).Msg("placement of an unknown finding dropped")
			continue
		}
		out[fp] = pl
	}
	return out
}

// request is the pipeline request of a run: its options, the default
// repository configuration, the per-review token budget and the event sink.
func (p *Pool) request(j *job, src review.Source) (pipeline.Request, error) {
	var opts review.Options
	if len(j.run.Options) > 0 {
		if err := json.Unmarshal(j.run.Options, &opts); err != nil {
			return pipeline.Request{}, fmt.Errorf("decode run options: %w", err)
		}
	}
	opts, err := opts.Normalize()
	if err != nil {
		return pipeline.Request{}, userError{fmt.Errorf("run options: %w", err)}
	}
	return pipeline.Request{Source: src, Repo: p.cfg.DefaultRepo, Options: opts,
		MaxTokens: p.cfg.Budgets.ReviewMaxTokens, Sink: p.sink(j)}, nil
}

// runPipeline runs the review and returns the result and the outcome it
// makes for the run. With pipeline.ErrLLMUnavailable it returns the
// review without the model too, when the pipeline gave one.
func (p *Pool) runPipeline(ctx context.Context, req pipeline.Request) (*pipeline.Result, outcome, error) {
	res, err := p.deps.Reviewer.Run(ctx, req)
	if err != nil && (res == nil || !errors.Is(err, pipeline.ErrLLMUnavailable)) {
		return nil, outcome{}, err
	}
	out := outcome{notice: res.Notice, result: store.Result{
		Status: store.StatusSucceeded, Verdict: &res.Verdict, Agents: res.Verdict.Agents, Model: p.deps.Model, Cost: res.Cost,
	}}
	if res.Skipped {
		out.result.Status, out.result.Reason, out.result.Verdict = store.StatusSkipped, res.SkipReason, nil
	}
	return res, out, err
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

// overDailyBudget says why an installation may not spend more today, "" when
// it may.
func (p *Pool) overDailyBudget(ctx context.Context, installationID int64) (string, error) {
	b := p.cfg.Budgets
	if b.InstallationDailyMaxTokens <= 0 && b.InstallationDailyMaxCost <= 0 {
		return "", nil
	}
	day := time.Now().UTC().Truncate(24 * time.Hour)
	tokens, cost, err := p.deps.Store.InstallationUsageSince(ctx, installationID, day)
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
