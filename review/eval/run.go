package eval

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/agent"
	"github.com/mergeguard/mergeguard/review/analyzer"
	"github.com/mergeguard/mergeguard/review/budget"
	"github.com/mergeguard/mergeguard/review/diff"
	"github.com/mergeguard/mergeguard/review/pipeline"
	"github.com/mergeguard/mergeguard/review/source/difftext"
	"github.com/mergeguard/mergeguard/review/source/localgit"
	"github.com/mergeguard/mergeguard/review/task"
)

// Options configure Run.
type Options struct {
	// Deps builds the review pipeline; Deps.LLM nil reviews with the
	// analyzers only.
	Deps pipeline.Deps
	// Repo is the review configuration of every case.
	Repo config.Repo
	// Tolerance is the line tolerance of location matching.
	Tolerance int
	// Judge, when not nil, decides the matches.
	Judge Judge
	// Parallel bounds the cases reviewed at once (at least 1).
	Parallel int
	// ContextOnly measures context recall instead of reviewing: the
	// pipeline runs with a model that records its first prompts and
	// reports nothing.
	ContextOnly bool
	// Done are results already scored (--resume), by case id: those cases
	// are not run again.
	Done map[string]CaseResult
	// OnResult is called with each new result, one call at a time, as the
	// cases finish; an error stops the run.
	OnResult func(CaseResult) error
	// TempDir is where Tree cases are laid out ("" for the system's).
	TempDir string
}

// Run reviews and scores the cases, at most opt.Parallel at once, and
// returns their results in the order of cases. A case that cannot be
// reviewed has its Error set; only a cancelled context or an OnResult error
// stops the run.
func Run(ctx context.Context, cases []Case, opt Options) ([]CaseResult, error) {
	if opt.Deps.Counter == nil {
		opt.Deps.Counter = budget.NewTokenizers().ForModel(opt.Deps.Config.Model)
	}
	if opt.Deps.Analyzers == nil {
		opt.Deps.Analyzers = analyzer.Builtin() // one secret scanner for every case: it is slow to build
	}
	opt.Deps.Config.Walkthrough, opt.Deps.Recheck = false, false
	results := make([]CaseResult, len(cases))
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var (
		mu  sync.Mutex
		wg  sync.WaitGroup
		sem = make(chan struct{}, max(opt.Parallel, 1))
	)
	for i, c := range cases {
		mu.Lock() // OnResult may record into Done while cases run
		r, ok := opt.Done[c.ID]
		mu.Unlock()
		if ok {
			results[i] = r
			continue
		}
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			wg.Wait()
			return results, context.Cause(ctx)
		}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			r := runCase(ctx, c, opt)
			mu.Lock()
			defer mu.Unlock()
			results[i] = r
			if opt.OnResult != nil && ctx.Err() == nil {
				if err := opt.OnResult(r); err != nil {
					cancel(err)
				}
			}
		}()
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		return results, err
	}
	return results, nil
}

// runCase reviews and scores one case.
func runCase(ctx context.Context, c Case, opt Options) CaseResult {
	fail := func(err error) CaseResult {
		return CaseResult{ID: c.ID, Language: c.Language, Kind: c.Kind, Clean: c.Clean, Error: err.Error()}
	}
	src, cleanup, err := OpenSource(ctx, c, opt.TempDir)
	if err != nil {
		return fail(err)
	}
	defer cleanup()
	deps := opt.Deps
	var rec *recorder
	if opt.ContextOnly {
		rec = &recorder{}
		deps.LLM = rec
	}
	start := time.Now()
	res, err := pipeline.New(deps).Run(ctx, task.Request{Source: src, Repo: opt.Repo})
	if err != nil {
		return fail(fmt.Errorf("review: %w", err))
	}
	wall := time.Since(start)
	findings := res.Verdict.Findings()
	pairs, judgeCost, err := Match(ctx, c, findings, opt.Tolerance, opt.Judge)
	if err != nil {
		return fail(err)
	}
	r := Score(c, findings, pairs)
	r.FalsePositives = len(res.Verdict.FalsePositives)
	r.InputTokens, r.OutputTokens, r.Cost = res.Cost.InputTokens, res.Cost.OutputTokens, res.Cost.TotalCost
	r.JudgeCost, r.WallMS, r.Notes = judgeCost.TotalCost, wall.Milliseconds(), res.Verdict.Notes
	if res.Skipped {
		r.Notes = append(r.Notes, "skipped: "+res.SkipReason)
	}
	if rec != nil {
		cr := contextOf(ctx, src, c.ContextLines, rec.prompts())
		for _, a := range res.Verdict.Agents {
			if a.ErrorType == agent.ErrorTypeContextOverflow {
				cr.Overflows++
			}
		}
		r.Context = &cr
	}
	return r
}

// contextOf checks the context lines of a case against the recorded
// prompts, reading the lines from src, or, when src cannot read the file
// (a bare diff), from the diff's hunks.
func contextOf(ctx context.Context, src review.Source, refs []LineRef, prompts []string) ContextResult {
	var d *diff.Diff
	if text, err := src.Diff(ctx); err == nil {
		d, _ = diff.ParseString(text)
	}
	lines := make([][]string, len(refs))
	for i, ref := range refs {
		rev := review.Head
		if ref.Side == "base" {
			rev = review.Base
		}
		b, err := src.ReadFile(ctx, ref.File, rev)
		switch {
		case err == nil:
			lines[i] = LinesOf(string(b), ref.StartLine, ref.EndLine)
		case d != nil:
			lines[i] = diffLines(d, ref, rev)
		}
		if len(lines[i]) != ref.EndLine-ref.StartLine+1 {
			reason := fmt.Sprintf("the lines of %s are not known", ref)
			if err != nil {
				reason += ": " + err.Error()
			}
			return ContextResult{Prompts: len(prompts), Reason: reason}
		}
	}
	return CheckContext(prompts, refs, lines)
}

// diffLines returns the lines of ref that d's hunks show, nil unless all
// of them are.
func diffLines(d *diff.Diff, ref LineRef, rev review.Revision) []string {
	byNum := map[int]string{}
	for _, f := range d.Files {
		if f.Path() != ref.File {
			continue
		}
		for _, h := range f.Hunks {
			for _, l := range h.Lines {
				switch {
				case rev == review.Head && l.Kind != diff.Delete:
					byNum[int(l.NewLine)] = l.Text
				case rev == review.Base && l.Kind != diff.Add:
					byNum[int(l.OldLine)] = l.Text
				}
			}
		}
	}
	var out []string
	for n := ref.StartLine; n <= ref.EndLine; n++ {
		t, ok := byNum[n]
		if !ok {
			return nil
		}
		out = append(out, t)
	}
	return out
}

// OpenSource opens the change of a case: its diff text, its local git
// repository, or its trees laid out under tempDir and diffed. The
// case's title and body, when set, replace those of the source. cleanup
// removes what was made.
func OpenSource(ctx context.Context, c Case, tempDir string) (review.Source, func(), error) {
	cleanup := func() {}
	var (
		src review.Source
		err error
	)
	switch {
	case c.Diff != "":
		src, err = difftext.New(c.Diff)
	case c.Repo != "":
		src, err = localgit.New(ctx, c.Repo, c.Base, c.Head)
	case c.Tree != "":
		src, cleanup, err = openTree(ctx, c, tempDir)
	default:
		err = errors.New("the case has no diff, repo or tree")
	}
	if err != nil {
		cleanup()
		return nil, func() {}, fmt.Errorf("open case %s: %w", c.ID, err)
	}
	return titled{Source: src, title: c.Title, body: c.Body}, cleanup, nil
}

// titled is a Source whose change has the case's title and body.
type titled struct {
	review.Source
	title, body string
}

// Change implements review.Source.
func (t titled) Change(ctx context.Context) (review.Change, error) {
	ch, err := t.Source.Change(ctx)
	if err != nil {
		return ch, err
	}
	if t.title != "" || t.body != "" {
		ch.Title, ch.Body = t.title, t.body
	}
	return ch, nil
}

// recorder is a chat model that records the prompt of each first turn
// (a request with no answers in it yet) and reports no finding.
type recorder struct {
	mu    sync.Mutex
	first []string
}

// Chat implements pipeline.ChatClient.
func (r *recorder) Chat(_ context.Context, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
	first := true
	var text string
	for _, m := range req.Messages {
		if m.Role == openai.ChatMessageRoleAssistant || m.Role == openai.ChatMessageRoleTool {
			first = false
		}
		text += m.Content + "\n"
	}
	if first {
		r.mu.Lock()
		r.first = append(r.first, text)
		r.mu.Unlock()
	}
	return openai.ChatCompletionResponse{Model: req.Model, Choices: []openai.ChatCompletionChoice{{
		Message:      openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: `{"findings":[],"positive_notes":[]}`},
		FinishReason: openai.FinishReasonStop,
	}}}, nil
}

func (r *recorder) prompts() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.first...)
}
