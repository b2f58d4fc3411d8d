// Package pipeline runs a MergeGuard review: plan, review, verify, report
// (docs/architecture.md). It is pure: it is handed a review.Source to read
// the change from, an LLM client (optional: without one, the built-in
// analyzers still review) and a review.Sink for progress events, and it
// returns the verdict with every finding.
//
// The stages:
//   - planner (deterministic): parse the diff, skip what is not worth a
//     model's time (binaries, lock files, generated and vendored code,
//     path_filters), and pack the rest, riskiest first, into chunks that fit
//     the context budget;
//   - reviewer: one LLM agent per chunk, in parallel, with tools; the
//     built-in analyzers run beside them as their own agents;
//   - verifier (deterministic, optionally followed by an LLM re-check):
//     check each finding against the diff and the head revision, merge
//     duplicates, apply the severity threshold and focus areas;
//   - reporter (deterministic): the verdict policy, summary and stats.
//
// A failed agent degrades the review (Verdict.Degraded) but never loses it.
package pipeline

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/agent"
	"github.com/mergeguard/mergeguard/review/analyzer"
	"github.com/mergeguard/mergeguard/review/budget"
	"github.com/mergeguard/mergeguard/review/diff"
	"github.com/mergeguard/mergeguard/review/gomod"
	"github.com/mergeguard/mergeguard/review/lint"
	"github.com/mergeguard/mergeguard/review/task"
)

// ChatClient sends one chat completion; *llm.Client implements it.
type ChatClient = agent.ChatClient

// Toolbox answers a model's tool calls; *tools.Toolbox implements it.
type Toolbox = agent.Toolbox

// Counter estimates the tokens of a text for the model in use.
type Counter = budget.Counter

// Deps is what a Pipeline is built from.
type Deps struct {
	// LLM is the chat client; nil means no LLM is configured and only the
	// built-in analyzers review.
	LLM ChatClient
	// Config is the LLM configuration as loaded (config.Load, which
	// applies the defaults once): the model, its context window and
	// output cap (no prompt exceeds ContextTokens - MaxOutputTokens), the
	// chunks' size and number, the agents' turns, timeout and concurrency,
	// the response format, the temperature, the prices and whether the
	// model writes a full review's walkthrough (one extra call; without
	// it, without an LLM, for an incremental review or when the call
	// fails, the walkthrough is built from the diff alone). The pipeline
	// takes it as it is; tests start from config.Default().LLM.
	Config config.LLM
	// Counter counts tokens; nil uses the model's tokenizer
	// (budget.Tokenizers.ForModel: tiktoken for OpenAI models, o200k_base
	// plus budget.UnknownModelPercent for others; cmd/mergeguard passes
	// budget.Corrected, the corrections learned from the server).
	Counter Counter
	// CounterFor counts tokens for the model of an experiment arm
	// (Config.Experiments); nil counts every arm with Counter.
	CounterFor func(model string) Counter
	// Tools builds the toolbox of one review; nil offers no tools.
	Tools func(src review.Source, d *diff.Diff) Toolbox
	// Analyzers are the deterministic agents; nil means analyzer.Builtin().
	Analyzers []analyzer.Analyzer
	// Linters check whole files of the kinds they know (workflows,
	// Dockerfiles, Go, shell) beside the analyzers; nil runs none
	// (lint.Default is the set `mergeguard` runs).
	Linters []lint.Linter
	// GoStd, when set, has the code context of Go changes resolved with
	// go/types (review/codectx, review/gomod): the standard library's
	// types, shared by every review; nil resolves Go by name.
	GoStd *gomod.Std
	// Recheck asks the LLM to confirm or refute each critical finding
	// before the verdict (one extra call per finding).
	Recheck bool
	// Now is the clock; nil is time.Now.
	Now func() time.Time
}

// Pipeline runs reviews. It is safe for concurrent use.
type Pipeline struct {
	d Deps
	// arm names the experiment arm this pipeline reviews as
	// (config.DefaultArm for Deps.Config as it is), prompt its reviewer
	// prompt, and arms every arm's pipeline by name, this one's included.
	arm    string
	prompt promptVariant
	arms   map[string]*Pipeline
}

// New returns a pipeline with deps.
func New(deps Deps) *Pipeline {
	if deps.Counter == nil {
		deps.Counter = budget.NewTokenizers().ForModel(deps.Config.Model)
	}
	if deps.Analyzers == nil {
		deps.Analyzers = analyzer.Builtin()
	}
	if deps.Now == nil {
		deps.Now = time.Now
	}
	def, _ := promptVariantOf("")
	p := &Pipeline{d: deps, arm: config.DefaultArm, prompt: def, arms: map[string]*Pipeline{}}
	p.arms[p.arm] = p
	for _, e := range deps.Config.Experiments {
		variant, ok := promptVariantOf(e.Prompt)
		if !ok { // config.Validate refuses it: the arm is left out, and its runs fail
			continue
		}
		d := deps
		d.Config.Model, d.Config.Experiments = e.Model, nil
		if deps.CounterFor != nil {
			d.Counter = deps.CounterFor(e.Model)
		}
		p.arms[e.Name] = &Pipeline{d: d, arm: e.Name, prompt: variant, arms: p.arms}
	}
	return p
}

// armed returns the pipeline of the experiment arm named name
// (llm.experiments; "" and config.DefaultArm are the default arm's), an
// error when no such arm is configured.
func (p *Pipeline) armed(name string) (*Pipeline, error) {
	if name == "" {
		name = config.DefaultArm
	}
	a, ok := p.arms[name]
	if !ok {
		return nil, fmt.Errorf("experiment arm %q is not configured (llm.experiments)", name)
	}
	return a, nil
}

// stamp records on res the arm that made it, its model ("" without an
// LLM) and its reviewer prompt's version.
func (p *Pipeline) stamp(res *task.Result) {
	if res == nil {
		return
	}
	res.Arm, res.PromptVersion = p.arm, p.prompt.version
	if p.d.LLM != nil {
		res.Model = p.d.Config.Model
	}
}

// Run reviews the change of req.Source. It returns an error when the
// change cannot be read or its diff cannot be parsed, when the
// repository's configuration is invalid (*task.RepoConfigError), and when
// every LLM reviewer failed for a passing reason (task.ErrLLMUnavailable),
// each after emitting pipeline.failed; other agent failures degrade the
// verdict instead. With task.ErrLLMUnavailable it also returns the review
// without the model: the built-in analyzers' and linters' findings and the
// verdict they imply, degraded and saying so (task.ModelUnavailableNote),
// for the caller to deliver while the model part waits for a retry. It reviews as the experiment arm
// req.Arm names (Config.Experiments: the arm's model and prompt variant),
// and fails at once for an arm that is not configured.
func (p *Pipeline) Run(ctx context.Context, req task.Request) (*task.Result, error) {
	p, err := p.armed(req.Arm)
	if err != nil {
		return nil, err
	}
	res, err := p.run(ctx, req)
	p.stamp(res)
	return res, err
}

// run reviews as the arm of p.
func (p *Pipeline) run(ctx context.Context, req task.Request) (*task.Result, error) {
	sink := req.Sink
	if sink == nil {
		sink = review.Discard{}
	}
	r := &run{p: p, req: req, sink: sink, start: p.d.Now(), counter: &memoCounter{c: p.d.Counter}, llm: p.d.LLM}
	if req.MaxTokens > 0 && r.llm != nil {
		r.budget = &tokenBudget{max: int64(req.MaxTokens)}
		r.llm = budgetedClient{next: r.llm, budget: r.budget}
	}
	r.emit(ctx, review.EventPipelineStarted, "", "", map[string]any{
		"automatic": req.Automatic, "llm": p.d.LLM != nil, "model": p.d.Config.Model, "concurrency": p.d.Config.Concurrency,
	})
	res, err := r.execute(ctx)
	if err != nil {
		r.emit(ctx, review.EventPipelineFailed, "", "", map[string]any{"error": err.Error()})
		return nil, err
	}
	if err := llmUnavailable(res.Verdict.Agents); err != nil {
		res.Verdict.Degraded = true
		res.Verdict.Notes = append(res.Verdict.Notes, task.ModelUnavailableNote)
		r.emit(ctx, review.EventPipelineFailed, "", "", map[string]any{"error": err.Error()})
		return res, err
	}
	r.overBudget(res)
	data := map[string]any{
		"skipped": res.Skipped, "verdict": res.Verdict.Verdict, "findings": res.Verdict.Stats.FindingsTotal,
		"false_positives": len(res.Verdict.FalsePositives), "degraded": res.Verdict.Degraded,
		"duration_ms": res.Verdict.ReviewDurationMS, "cost": res.Cost,
	}
	if res.Skipped {
		data["reason"] = res.SkipReason
	}
	r.emit(ctx, review.EventPipelineCompleted, "", "", data)
	return res, nil
}

// overBudget turns a review that ran out of its token budget into a skipped
// one that says so: its findings are partial and no verdict is given.
func (r *run) overBudget(res *task.Result) {
	used, over := r.budget.exceeded()
	if !over {
		return
	}
	reason := fmt.Sprintf("the review needed more than the per-review budget of %d tokens (%d used)", r.req.MaxTokens, used)
	res.Skipped, res.SkipReason = true, reason
	res.Notice = "MergeGuard did not finish reviewing this pull request: " + reason + "."
}

// run is the state of one review.
type run struct {
	p       *Pipeline
	req     task.Request
	sink    review.Sink
	start   time.Time
	counter Counter // the pipeline's, memoised for the run
	// llm is the pipeline's chat client, counted against the review's
	// token budget when it has one; nil without an LLM.
	llm    ChatClient
	budget *tokenBudget
	// modelSkipped says why the model does not review this run (modelGate);
	// "" when it does.
	modelSkipped string
	// known are the pull request's open findings on the files under
	// review, shown to the model so that it does not report them again.
	known map[string][]review.Finding
	// lintUnchecked counts the files a linter applied to but could not
	// read (or were too large): the summary says so.
	lintUnchecked atomic.Int64
	// analyzers are the pipeline's analyzers configured for the
	// repository (secretAnalyzers).
	analyzers []analyzer.Analyzer
}

// memoCounter remembers the count of every text it was asked about, and
// of its lines when asked for them: the planner counts each file with its
// lines, the cut of a file too large for a chunk reuses them, and the
// agents recount their whole prompt (system prompt, conventions, chunk)
// at every turn; a tokenizer is slow. It is safe for concurrent use and
// lives as long as one review.
type memoCounter struct {
	c Counter
	m sync.Map // string → memoCount
}

// memoCount is a remembered count; lines is nil until asked for.
type memoCount struct {
	n     int
	lines []int
}

// memoMin is the shortest text remembered: shorter ones cost less to
// count than to look up.
const memoMin = 64

// CountContext implements budget.ContextCounter: a long text's count stops
// when ctx ends (and is not remembered then).
func (m *memoCounter) CountContext(ctx context.Context, text string) (int, error) {
	if len(text) < memoMin {
		return m.c.Count(text), nil
	}
	if v, ok := m.m.Load(text); ok {
		return v.(memoCount).n, nil
	}
	n, err := budget.CountContext(ctx, m.c, text)
	if err != nil {
		return 0, err
	}
	m.m.Store(text, memoCount{n: n})
	return n, nil
}

// CountLines implements budget.LineCounter, remembering the lines too.
func (m *memoCounter) CountLines(ctx context.Context, text string) (int, []int, error) {
	if v, ok := m.m.Load(text); ok && v.(memoCount).lines != nil {
		mc := v.(memoCount)
		return mc.n, slices.Clone(mc.lines), nil
	}
	n, lines, err := budget.CountLines(ctx, m.c, text)
	if err != nil {
		return 0, nil, err
	}
	if len(text) >= memoMin {
		m.m.Store(text, memoCount{n: n, lines: slices.Clone(lines)})
	}
	return n, lines, nil
}

// Count implements Counter.
func (m *memoCounter) Count(text string) int {
	n, _ := m.CountContext(context.Background(), text)
	return n
}

// emit sends one event to the sink.
func (r *run) emit(ctx context.Context, t review.EventType, stage, agentName string, data map[string]any) {
	r.sink.Emit(ctx, review.Event{Type: t, Stage: stage, Agent: agentName, Time: r.p.d.Now(), Data: data})
}

// execute runs the stages.
func (r *run) execute(ctx context.Context) (*task.Result, error) {
	src := r.req.Source
	change, err := src.Change(ctx)
	if err != nil {
		return nil, fmt.Errorf("read change: %w", err)
	}
	repo, err := task.RepoConfig(ctx, r.req)
	if err != nil {
		return nil, err
	}
	r.req.Repo = repo
	// An explicit request is refused only when MergeGuard is disabled,
	// which Gate checks first.
	if skip, reason := Gate(change, repo); skip && (r.req.Automatic || !repo.Enabled) {
		return r.skipped(change, reason), nil
	}
	d, err := parsedDiff(ctx, src)
	if err != nil {
		return nil, err
	}
	if err := readBackBinaries(ctx, src, d); err != nil {
		return nil, fmt.Errorf("read back binary files: %w", err)
	}
	modelSkipped := r.modelGate(change, repo, d)
	var secretNotes []string
	r.analyzers, secretNotes = r.secretAnalyzers(ctx, repo, change.HeadSHA, d)
	idx := diff.NewIndex(d)
	sc, focus, since := scope(r.req.History, repo, d)
	r.known = knownFindings(r.req.History, focus)

	pl, prompts, notes := r.planStage(ctx, change, focus)
	notes = append(secretNotes, notes...)
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("plan: %w", err)
	}
	rv := r.reviewStage(ctx, change, focus, pl, prompts)
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("review: %w", err)
	}
	vf := r.verifyStage(ctx, d, idx, rv.findings)
	c := r.carry(ctx, r.req.History, change.HeadSHA, d, since, touchedFiles(focus, since), vf.reported)
	vf.reported, vf.notes = c.reported, append(vf.notes, c.notes...)
	res := r.report(ctx, change, focus, idx, pl, rv, vf, append(notes, rv.notes...), c.counted)
	res.Scope, res.Ledger, res.Config, res.ModelSkipped, res.Suppressed = sc, c.ledger, repo, modelSkipped, c.suppressed
	r.addWalkthrough(ctx, res, change, d, since == nil)
	return res, nil
}

// modelGate turns the model off for the run when what the change's author
// controls skips the model review (ModelGate for an automatic review;
// max_files for any), and says why; "" when the model reviews (or would,
// when none is configured: the reason is given all the same). The built-in analyzers and linters run all the same: no
// title, label or file count keeps them from deciding the check.
func (r *run) modelGate(change review.Change, repo config.Repo, d *diff.Diff) string {
	reason := ""
	if r.req.Automatic {
		reason = ModelGate(change, repo)
	}
	if reason == "" && repo.MaxFiles > 0 && len(d.Files) > repo.MaxFiles {
		reason = fmt.Sprintf("%d files changed, more than max_files (%d)", len(d.Files), repo.MaxFiles)
	}
	if reason == "" {
		return ""
	}
	r.llm = nil
	r.modelSkipped = reason
	return reason
}

// parsedSource is a Source that parsed its diff already (difftext,
// localgit): the review reads that parse instead of parsing the text again.
type parsedSource interface {
	ParsedDiff(ctx context.Context) (*diff.Diff, error)
}

// parsedDiff reads and parses the diff of src.
func parsedDiff(ctx context.Context, src review.Source) (*diff.Diff, error) {
	if ps, ok := src.(parsedSource); ok {
		d, err := ps.ParsedDiff(ctx)
		if err != nil {
			return nil, fmt.Errorf("read diff: %w", err)
		}
		return d, nil
	}
	text, err := src.Diff(ctx)
	if err != nil {
		return nil, fmt.Errorf("read diff: %w", err)
	}
	d, err := diff.ParseString(text)
	if err != nil {
		return nil, fmt.Errorf("parse diff: %w", err)
	}
	return d, nil
}

// touchedFiles are the files whose open findings a review checks: those the
// new commits changed (incremental) or every file of the pull request.
func touchedFiles(focus, since *diff.Diff) map[string]bool {
	d := focus
	if since != nil {
		d = since
	}
	out := make(map[string]bool, len(d.Files))
	for _, f := range d.Files {
		out[f.Path()] = true
	}
	return out
}

// skipped is the result of a review that did not run.
func (r *run) skipped(change review.Change, reason string) *task.Result {
	return &task.Result{
		Skipped:    true,
		SkipReason: reason,
		Change:     change,
		Verdict: review.Verdict{
			Verdict:          review.DecisionComment,
			Summary:          "Review skipped: " + reason + ".",
			Files:            []review.FileReview{},
			FalsePositives:   []review.Finding{},
			Recommendations:  []string{},
			ReviewDurationMS: r.p.d.Now().Sub(r.start).Milliseconds(),
			Notes:            []string{"Review skipped: " + reason},
		},
	}
}
