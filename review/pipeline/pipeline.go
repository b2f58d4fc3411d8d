// Package pipeline runs a MergeGuard review: plan, review, verify, report
// (DESIGN.md section 1). It is pure: it is handed a review.Source to read
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
	"sync"
	"time"

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/agent"
	"github.com/mergeguard/mergeguard/review/analyzer"
	"github.com/mergeguard/mergeguard/review/budget"
	"github.com/mergeguard/mergeguard/review/diff"
)

// ChatClient sends one chat completion; *llm.Client implements it.
type ChatClient = agent.ChatClient

// Toolbox answers a model's tool calls; *tools.Toolbox implements it.
type Toolbox = agent.Toolbox

// Counter estimates the tokens of a text for the model in use.
type Counter = budget.Counter

// Defaults of Deps.
const (
	DefaultContextTokens   = 128_000
	DefaultMaxOutputTokens = 4096
	DefaultMaxChunkTokens  = 12_000
	DefaultConcurrency     = 4
	DefaultMaxTurns        = 8
	DefaultAgentTimeout    = 5 * time.Minute
)

// Deps is what a Pipeline is built from. Zero values take the defaults.
type Deps struct {
	// LLM is the chat client; nil means no LLM is configured and only the
	// built-in analyzers review.
	LLM   ChatClient
	Model string
	// ContextTokens is the model's context window; no prompt exceeds
	// ContextTokens - MaxOutputTokens.
	ContextTokens   int
	MaxOutputTokens int
	// MaxChunkTokens caps the diff text of one chunk, below what the
	// context allows: smaller chunks review better and in parallel.
	MaxChunkTokens int
	// Concurrency bounds the chunk agents running at once.
	Concurrency int
	// MaxTurns bounds the chat calls of one agent.
	MaxTurns int
	// AgentTimeout bounds one agent run.
	AgentTimeout time.Duration
	// ResponseFormat is how the final JSON is requested (default
	// json_schema; json_object or text for servers without structured
	// outputs).
	ResponseFormat agent.ResponseFormat
	// Temperature is the sampling temperature; zero is the server's
	// default.
	Temperature float32
	// Prices prices tokens by model (US dollars per million).
	Prices map[string]config.Price
	// Counter counts tokens; nil uses the model's tokenizer
	// (budget.Tokenizers: tiktoken for OpenAI models, an estimate for
	// others).
	Counter Counter
	// Tools builds the toolbox of one review; nil offers no tools.
	Tools func(src review.Source, d *diff.Diff) Toolbox
	// Analyzers are the deterministic agents; nil means analyzer.Builtin().
	Analyzers []analyzer.Analyzer
	// Recheck asks the LLM to confirm or refute each critical finding
	// before the verdict (one extra call per finding).
	Recheck bool
	// Now is the clock; nil is time.Now.
	Now func() time.Time
}

// Pipeline runs reviews. It is safe for concurrent use.
type Pipeline struct {
	d Deps
}

// New returns a pipeline with deps, defaults filled in.
func New(deps Deps) *Pipeline {
	if deps.ContextTokens <= 0 {
		deps.ContextTokens = DefaultContextTokens
	}
	if deps.MaxOutputTokens <= 0 {
		deps.MaxOutputTokens = DefaultMaxOutputTokens
	}
	if deps.MaxChunkTokens <= 0 {
		deps.MaxChunkTokens = DefaultMaxChunkTokens
	}
	if deps.Concurrency <= 0 {
		deps.Concurrency = DefaultConcurrency
	}
	if deps.MaxTurns <= 0 {
		deps.MaxTurns = DefaultMaxTurns
	}
	if deps.AgentTimeout <= 0 {
		deps.AgentTimeout = DefaultAgentTimeout
	}
	if deps.ResponseFormat == "" {
		deps.ResponseFormat = agent.FormatJSONSchema
	}
	if deps.Counter == nil {
		deps.Counter = budget.NewTokenizers().ForModel(deps.Model)
	}
	if deps.Analyzers == nil {
		deps.Analyzers = analyzer.Builtin()
	}
	if deps.Now == nil {
		deps.Now = time.Now
	}
	return &Pipeline{d: deps}
}

// Options are a request's review settings; empty values fall back to the
// repository's configuration.
type Options struct {
	FocusAreas        []review.Category
	SeverityThreshold review.Severity
	IncludeStyle      bool
}

// Request is one review to run.
type Request struct {
	Source review.Source
	// Repo is the repository's configuration, read from the base branch.
	Repo    config.Repo
	Options Options
	// Sink receives progress events; nil discards them.
	Sink review.Sink
	// Automatic applies the auto_review gates (an explicit request is only
	// refused when the repository disabled MergeGuard).
	Automatic bool
}

// Result is a finished (or skipped) review.
type Result struct {
	Verdict review.Verdict
	// Findings holds every finding that survived the filters, reported or
	// judged false positive, each with its verification status, reason and
	// fingerprint, ordered by file and line.
	Findings   []review.Finding
	Skipped    bool
	SkipReason string
	Index      *diff.Index
	Change     review.Change
	Cost       review.CostInfo
}

// Run reviews the change of req.Source. It returns an error only when the
// change cannot be read or its diff cannot be parsed (after emitting
// pipeline.failed); agent failures degrade the verdict instead.
func (p *Pipeline) Run(ctx context.Context, req Request) (*Result, error) {
	sink := req.Sink
	if sink == nil {
		sink = review.Discard{}
	}
	r := &run{p: p, req: req, sink: sink, start: p.d.Now(), counter: &memoCounter{c: p.d.Counter}}
	r.emit(ctx, review.EventPipelineStarted, "", "", map[string]any{
		"automatic": req.Automatic, "llm": p.d.LLM != nil, "model": p.d.Model, "concurrency": p.d.Concurrency,
	})
	res, err := r.execute(ctx)
	if err != nil {
		r.emit(ctx, review.EventPipelineFailed, "", "", map[string]any{"error": err.Error()})
		return nil, err
	}
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

// run is the state of one review.
type run struct {
	p       *Pipeline
	req     Request
	sink    review.Sink
	start   time.Time
	counter Counter // the pipeline's, memoised for the run
}

// memoCounter remembers the count of every text it was asked about: the
// agents recount their whole prompt (system prompt, conventions, chunk) at
// every turn, and a tokenizer is slow. It is safe for concurrent use and
// lives as long as one review.
type memoCounter struct {
	c Counter
	m sync.Map // string → int
}

// Count implements Counter.
func (m *memoCounter) Count(text string) int {
	if len(text) < 64 {
		return m.c.Count(text) // cheaper than the map
	}
	if n, ok := m.m.Load(text); ok {
		return n.(int)
	}
	n := m.c.Count(text)
	m.m.Store(text, n)
	return n
}

// emit sends one event to the sink.
func (r *run) emit(ctx context.Context, t review.EventType, stage, agentName string, data map[string]any) {
	r.sink.Emit(ctx, review.Event{Type: t, Stage: stage, Agent: agentName, Time: r.p.d.Now(), Data: data})
}

// execute runs the stages.
func (r *run) execute(ctx context.Context) (*Result, error) {
	src := r.req.Source
	change, err := src.Change(ctx)
	if err != nil {
		return nil, fmt.Errorf("read change: %w", err)
	}
	repo := r.req.Repo
	// An explicit request is refused only when MergeGuard is disabled,
	// which Gate checks first.
	if skip, reason := Gate(change, repo); skip && (r.req.Automatic || !repo.Enabled) {
		return r.skipped(change, reason), nil
	}
	text, err := src.Diff(ctx)
	if err != nil {
		return nil, fmt.Errorf("read diff: %w", err)
	}
	d, err := diff.ParseString(text)
	if err != nil {
		return nil, fmt.Errorf("parse diff: %w", err)
	}
	if r.req.Automatic && repo.MaxFiles > 0 && len(d.Files) > repo.MaxFiles {
		return r.skipped(change, fmt.Sprintf("%d files changed, more than max_files (%d)", len(d.Files), repo.MaxFiles)), nil
	}
	idx := diff.NewIndex(d)

	pl, prompts, notes := r.planStage(ctx, change, d)
	rv := r.reviewStage(ctx, change, d, pl, prompts)
	vf := r.verifyStage(ctx, d, idx, rv.findings)
	res := r.report(ctx, change, d, idx, pl, rv, vf, notes)
	return res, nil
}

// skipped is the result of a review that did not run.
func (r *run) skipped(change review.Change, reason string) *Result {
	return &Result{
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
