package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/github"
	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/llm"
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
}

// outcome is how a job ended without error.
type outcome struct {
	// result is what FinishRun records, the posted review included.
	result store.Result
	// notice is a comment for the pull request explaining a skip.
	notice string
}

func skipped(reason string) outcome {
	return outcome{result: store.Result{Status: store.StatusSkipped, Reason: reason}}
}

func superseded(reason string) outcome {
	return outcome{result: store.Result{Status: store.StatusSuperseded, Reason: reason}}
}

// userError is a failure the pull request's author can fix, such as a broken
// .mergeguard.yml; its text goes into the failure comment as is.
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
	}
	return outcome{}, fmt.Errorf("run mode %q is not worked on by workers", j.run.Mode)
}

// reviewDiff reviews the diff text of an API run; nothing is posted.
func (p *Pool) reviewDiff(ctx context.Context, j *job) (outcome, error) {
	if j.run.DiffText == nil {
		return outcome{}, errors.New("diff run without diff text")
	}
	opts, err := runOptions(j.run)
	if err != nil {
		return outcome{}, err
	}
	src, err := difftext.New(*j.run.DiffText)
	if err != nil {
		return outcome{}, userError{err}
	}
	_, out, err := p.runPipeline(ctx, j, pipeline.Request{Source: src, Repo: p.deps.DefaultRepo, Options: opts})
	return out, err
}

// reviewPR reviews a pull request and posts the review once.
func (p *Pool) reviewPR(ctx context.Context, j *job) (outcome, error) {
	run := j.run
	if p.deps.GitHub == nil {
		return outcome{}, errors.New("no GitHub App is configured")
	}
	owner, name, ok := strings.Cut(run.Repository, "/")
	if !ok {
		return outcome{}, fmt.Errorf("repository %q is not owner/name", run.Repository)
	}
	// The checks that need only the database come before any GitHub call.
	automatic := run.Trigger == store.TriggerWebhook
	if automatic {
		paused, err := p.deps.Store.Paused(ctx, run.Repository, run.PRNumber)
		if err != nil {
			return outcome{}, err
		}
		if paused {
			return skipped("automatic reviews are paused on this pull request (/mergeguard resume restarts them)"), nil
		}
	}
	if reason, err := p.overDailyBudget(ctx, run.InstallationID); err != nil || reason != "" {
		if err != nil {
			return outcome{}, err
		}
		out := skipped(reason)
		out.notice = "MergeGuard did not review this pull request: " + reason + "."
		return out, nil
	}
	client, err := p.deps.GitHub.NewInstallationClient(run.InstallationID)
	if err != nil {
		return outcome{}, fmt.Errorf("installation client: %w", err)
	}
	v4, err := p.deps.GitHub.NewInstallationV4Client(run.InstallationID)
	if err != nil {
		return outcome{}, fmt.Errorf("installation graphql client: %w", err)
	}
	src := github.NewSource(client, v4, owner, name, run.PRNumber, github.SourceOptions{})

	change, err := src.Change(ctx)
	if err != nil {
		return outcome{}, fmt.Errorf("read pull request: %w", err)
	}
	if run.HeadSHA != "" && change.HeadSHA != run.HeadSHA {
		return superseded(fmt.Sprintf("the head moved from %s to %s before the review started", short(run.HeadSHA), short(change.HeadSHA))), nil
	}
	if err := p.recordHead(ctx, j, change); err != nil {
		return outcome{}, err
	}
	repo, err := p.repoConfig(ctx, src)
	if err != nil {
		return outcome{}, err
	}
	opts, err := runOptions(run)
	if err != nil {
		return outcome{}, err
	}
	res, out, err := p.runPipeline(ctx, j, pipeline.Request{Source: src, Repo: repo, Options: opts, Automatic: automatic})
	if err != nil || out.result.Status != store.StatusSucceeded {
		return out, err
	}

	head, err := github.PullHead(ctx, client, owner, name, run.PRNumber)
	if err != nil {
		return outcome{}, fmt.Errorf("re-read head before posting: %w", err)
	}
	if head.SHA != res.Change.HeadSHA {
		return superseded(fmt.Sprintf("the head moved from %s to %s during the review", short(res.Change.HeadSHA), short(head.SHA))), nil
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
	post := github.Post{
		Owner:    owner,
		Repo:     name,
		Number:   run.PRNumber,
		HeadSHA:  res.Change.HeadSHA,
		RunID:    run.ID,
		Verdict:  res.Verdict,
		Findings: res.Verdict.Findings(), // false positives are stored, not posted
		Index:    res.Index,
	}
	if p.deps.PublicURL != "" {
		post.DetailsURL = strings.TrimRight(p.deps.PublicURL, "/") + "/reviews/" + run.ID
	}
	posted, err := p.deps.Publisher.Publish(pctx, client, post)
	switch {
	case errors.Is(err, github.ErrDismiss):
		j.log.Warn().Err(err).Msg("review posted; an earlier review could not be dismissed")
	case err != nil:
		p.deps.Metrics.PostFailure(failureReason(err))
		return outcome{}, err
	}
	out.result.Posted = &store.Posting{ReviewID: posted.ReviewID, Placements: placements(j, post.Findings, posted)}
	return out, nil
}

// recordHead records on the run the revision the review reads (head, base
// and branch as GitHub gives them when the review starts) unless the run
// already names exactly that: a run queued without a head learns it only
// now, and the base a webhook payload gave may have moved since.
func (p *Pool) recordHead(ctx context.Context, j *job, change review.Change) error {
	head := store.Head{HeadSHA: change.HeadSHA, BaseSHA: change.BaseSHA, Branch: change.HeadRef}
	run := j.run
	if head == (store.Head{HeadSHA: run.HeadSHA, BaseSHA: run.BaseSHA, Branch: run.Branch}) {
		return nil
	}
	if err := p.deps.Store.SetRunHead(ctx, run.ID, j.workerID, head); err != nil {
		return err
	}
	run.HeadSHA, run.BaseSHA, run.Branch = head.HeadSHA, head.BaseSHA, head.Branch
	return nil
}

// placements converts where Publish put each finding for the store. A
// placement of a fingerprint the run does not store is logged and dropped:
// it must not keep the run from being recorded.
func placements(j *job, findings []review.Finding, posted github.Posted) map[string]store.Placement {
	stored := make(map[string]bool, len(findings))
	for _, f := range findings {
		stored[f.Fingerprint] = true
	}
	out := make(map[string]store.Placement, len(posted.Placements))
	for fp, pl := range posted.Placements {
		if !stored[fp] {
			j.log.Warn().Str("fingerprint", fp).Str("where", pl.Where).Msg("placement of an unknown finding dropped")
			continue
		}
		out[fp] = store.Placement{Where: pl.Where, CommentID: pl.CommentID}
	}
	return out
}

// repoConfig reads .mergeguard.yml from the base branch over the default
// configuration. A file that does not parse fails the run with a userError
// naming the key and line: a broken file is never silently replaced by
// defaults.
func (p *Pool) repoConfig(ctx context.Context, src review.Source) (config.Repo, error) {
	data, err := src.ReadFile(ctx, config.RepoFileName, review.Base)
	if errors.Is(err, review.ErrNotFound) {
		return p.deps.DefaultRepo, nil
	}
	if err != nil {
		return config.Repo{}, fmt.Errorf("read %s from the base branch: %w", config.RepoFileName, err)
	}
	repo, err := config.ParseRepoOver(p.deps.DefaultRepo, data)
	if err != nil {
		return config.Repo{}, userError{fmt.Errorf("%s on the base branch is invalid:\n%w", config.RepoFileName, err)}
	}
	return repo, nil
}

// runPipeline runs the review with the run's event sink and token budget,
// and returns the result and the outcome it makes for the run.
func (p *Pool) runPipeline(ctx context.Context, j *job, req pipeline.Request) (*pipeline.Result, outcome, error) {
	req.Sink = p.sink(j)
	ctx = withTokenBudget(ctx, p.cfg.Budgets.ReviewMaxTokens)
	res, err := p.deps.Reviewer.Run(ctx, req)
	if err != nil {
		return nil, outcome{}, err
	}
	if used, over := tokenBudgetExceeded(ctx); over {
		reason := fmt.Sprintf("the review needed more than the per-review budget of %d tokens (%d used)", p.cfg.Budgets.ReviewMaxTokens, used)
		out := skipped(reason)
		out.result.Agents, out.result.Model, out.result.Cost = res.Verdict.Agents, p.deps.Model, res.Cost
		out.notice = "MergeGuard did not finish reviewing this pull request: " + reason + "."
		return res, out, nil
	}
	if err := llmUnavailable(res); err != nil {
		return nil, outcome{}, err
	}
	result := store.Result{
		Status:  store.StatusSucceeded,
		Verdict: &res.Verdict,
		Agents:  res.Verdict.Agents,
		Model:   p.deps.Model,
		Cost:    res.Cost,
	}
	if res.Skipped {
		result.Status, result.Reason, result.Verdict = store.StatusSkipped, res.SkipReason, nil
	}
	return res, outcome{result: result}, nil
}

// errLLMUnavailable marks a review whose every model call failed for a
// passing reason; the run is retried later instead of posting a review made
// of the built-in analyzers' findings alone.
var errLLMUnavailable = errors.New("the LLM was unavailable")

// llmUnavailable returns errLLMUnavailable when every LLM reviewer agent of
// a review failed with a rate limit, a server error, a timeout or a network
// failure.
func llmUnavailable(res *pipeline.Result) error {
	var agents, failed int
	var last string
	for _, a := range res.Verdict.Agents {
		if a.Stage != review.StageReviewer || strings.HasPrefix(a.Agent, "analyzer:") {
			continue
		}
		agents++
		switch {
		case a.Status == review.AgentTimeout:
			failed++
			last = fmt.Sprintf("%s timed out", a.Agent)
		case a.Status == review.AgentError && slices.Contains(transientLLMErrors, a.ErrorType):
			failed++
			last = a.Error
		}
	}
	if agents == 0 || failed < agents {
		return nil
	}
	return fmt.Errorf("%w: %d of %d reviewer agents failed; last: %s", errLLMUnavailable, failed, agents, last)
}

// transientLLMErrors are the agent error types that pass with time.
var transientLLMErrors = []string{llm.TypeRateLimited, llm.TypeServer, llm.TypeTimeout, llm.TypeTransport}

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

// runOptions decodes the review options stored with a run, the options
// object of POST /api/review; names are accepted in any case.
func runOptions(run *store.Run) (pipeline.Options, error) {
	var o store.Options
	if len(run.Options) > 0 {
		if err := json.Unmarshal(run.Options, &o); err != nil {
			return pipeline.Options{}, fmt.Errorf("decode run options: %w", err)
		}
	}
	o, err := o.Normalize()
	if err != nil {
		return pipeline.Options{}, userError{fmt.Errorf("run options: %w", err)}
	}
	return pipeline.Options{FocusAreas: o.FocusAreas, SeverityThreshold: o.SeverityThreshold, IncludeStyle: o.IncludeStyle}, nil
}

// short abbreviates a commit SHA.
func short(sha string) string {
	if len(sha) > 7 {
		return sha[:7]
	}
	return sha
}
