package pipeline

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"

	openai "github.com/sashabaranov/go-openai"
	"golang.org/x/sync/errgroup"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/agent"
	"github.com/mergeguard/mergeguard/review/analyzer"
	"github.com/mergeguard/mergeguard/review/codectx"
	"github.com/mergeguard/mergeguard/review/diff"
	"github.com/mergeguard/mergeguard/review/llm"
)

// minChunkTokens is the smallest diff budget worth an LLM call; below it
// the context is too small and only the analyzers run.
const minChunkTokens = 256

// prompts is what every chunk agent of a review shares.
type prompts struct {
	llm         bool
	conventions string
	tools       Toolbox
	// learnings are the repository's learnings that apply to each chunk,
	// by chunk number.
	learnings map[int]string
	// code is the code context of each chunk, by chunk number, and
	// codeTokens the allowance each chunk's prompt keeps for it.
	code       map[int]string
	codeTokens int
}

// planStage runs the planner: budget, conventions, skip rules and chunks.
func (r *run) planStage(ctx context.Context, change review.Change, d *diff.Diff) (plan, prompts, []string) {
	const name = "planner"
	r.emit(ctx, review.EventAgentStarted, review.StagePlanner, name, map[string]any{"files": len(d.Files)})
	deps := r.p.d
	pr := prompts{llm: r.llm != nil}
	var notes []string
	var snippets map[string][]codectx.Snippet
	var code codeFound
	chunkTokens := deps.Config.MaxChunkTokens
	if pr.llm {
		if deps.Tools != nil {
			pr.tools = deps.Tools(r.req.Source, d)
		}
		input := deps.Config.ContextTokens - deps.Config.MaxOutputTokens
		conv, cut, err := conventions(ctx, r.req.Source, r.req.Repo, r.counter, min(input/conventionsShare, maxConventionTokens))
		switch {
		case err != nil:
			notes = append(notes, "Repository conventions could not be read: "+err.Error())
		case cut:
			notes = append(notes, "Repository conventions were cut to fit the context budget.")
		}
		pr.conventions = conv
		code = r.codeContext(ctx, d)
		snippets, pr.codeTokens = code.snippets, code.tokens
		notes = append(notes, code.notes...)
		// The code context never takes more than half of what the diff
		// would have without it.
		pr.codeTokens = min(pr.codeTokens, (input-r.overhead(change, prompts{conventions: pr.conventions, tools: pr.tools}))/2)
		if pr.codeTokens <= 0 {
			pr.codeTokens, snippets = 0, nil
		}
		chunkTokens = min(chunkTokens, input-r.overhead(change, pr))
		if chunkTokens < minChunkTokens {
			notes = append(notes, fmt.Sprintf("The model's context (%d tokens, %d for output) is too small for a review: built-in analyzers only.",
				deps.Config.ContextTokens, deps.Config.MaxOutputTokens))
			pr.llm = false
		}
	}
	pl, err := planChunks(ctx, d, r.req.Repo, r.counter, chunkTokens, pr.llm)
	if err != nil {
		// Only a canceled review fails planning: review nothing.
		notes = append(notes, "Planning stopped: "+err.Error())
		pr.llm = false
	}
	if over := len(pl.chunks) - deps.Config.MaxChunks; over > 0 {
		pl.chunks = pl.chunks[:deps.Config.MaxChunks] // riskiest first: the least risky go
		notes = append(notes, fmt.Sprintf("The change needed %d chunks, more than llm.max_chunks (%d): the %d least risky were reviewed by the built-in analyzers only.",
			deps.Config.MaxChunks+over, deps.Config.MaxChunks, over))
	}
	if pl.truncation != nil {
		notes = append(notes, fmt.Sprintf("Diffs too large for one prompt were cut (%s); the model was told how to read the rest.",
			strings.Join(pl.truncation.SectionsAffected, ", ")))
	}
	if pr.llm {
		var cut []string
		pr.learnings, cut = r.chunkLearnings(pl)
		notes = append(notes, cut...)
		pr.code, cut = r.chunkCodes(ctx, pl, snippets, pr.codeTokens)
		notes = append(notes, cut...)
	}
	chunks := make([]map[string]any, len(pl.chunks))
	for i, c := range pl.chunks {
		chunks[i] = map[string]any{"chunk": c.n, "files": c.paths(), "tokens": c.tokens, "risk": c.risk}
	}
	r.emit(ctx, review.EventAgentHandoff, review.StagePlanner, name, map[string]any{
		"from": review.StagePlanner, "to": review.StageReviewer,
		"files_changed": len(d.Files), "files_reviewed": len(pl.reviewed), "files_skipped": len(pl.skipped),
		"skipped": nonNil(pl.skipped), "chunks": chunks, "chunk_tokens": chunkTokens, "truncated": pl.truncation != nil,
		"code_context": code.stats,
	})
	return pl, pr, notes
}

// overhead is the most tokens a chunk agent's prompt carries besides the
// chunk's diff: system prompt and conventions, path instructions, tool
// definitions, response schema, the pull request's title and description,
// message framing, and room for tool answers and one parse retry.
func (r *run) overhead(change review.Change, pr prompts) int {
	deps := r.p.d
	c := r.counter
	input := deps.Config.ContextTokens - deps.Config.MaxOutputTokens
	n := c.Count(systemMessage(r.p.prompt.system, pr.conventions, "", r.req.Repo.Language, len(r.req.Learnings) > 0)) + maxPathInstrTokens
	n += c.Count(userMessage(change, chunk{n: 999}, 999, c, chunkContext{}))
	if len(r.known) > 0 {
		n += maxKnownTokens + 40 // the list and its framing
	}
	n += maxEvidenceTokens + 40 // the analyzers' findings, when there are some
	if len(r.req.Learnings) > 0 {
		n += r.learningsBudget() + 40 // the list and its framing
	}
	if pr.codeTokens > 0 {
		n += pr.codeTokens + c.Count(codeHeader) + codeFramingTokens
	}
	n += messageOverheadTokens + retryReserve + input/50 // 2% for tokenizer drift
	if agent.ResponseFormat(deps.Config.ResponseFormat) == agent.FormatJSONSchema {
		n += c.Count(agent.OutputSchema)
	}
	if pr.tools != nil {
		b, err := json.Marshal(pr.tools.Definitions())
		if err == nil {
			n += c.Count(string(b))
		}
		// Room for the answers of tool calls.
		n += max(input/4, 1500)
	}
	return n
}

// reviewed is what the reviewer stage produced.
type reviewed struct {
	findings      []review.Finding
	agents        []review.AgentResult
	positiveNotes map[string][]string
	notes         []string // the linters': what they could not check
	llmAgents     int
	llmSucceeded  float64 // successes count 1, truncated runs 0.5
	llmCalls      int
	toolCalls     int
	cost          review.CostInfo
}

// reviewStage runs the analyzers and linters, then the chunk agents (at
// most Concurrency at once) with the analyzers' findings on their files as
// evidence, and collects every agent's findings.
func (r *run) reviewStage(ctx context.Context, change review.Change, d *diff.Diff, pl plan, pr prompts) reviewed {
	deps := r.p.d
	scan, secretsOnly := scanSets(d, pl)
	det, notes := r.deterministic(ctx, scan, secretsOnly)
	evidence := map[string][]review.Finding{}
	for _, a := range det {
		for _, f := range a.findings {
			evidence[f.FilePath] = append(evidence[f.FilePath], f)
		}
	}
	llmResults := make([]agent.Result, len(pl.chunks))
	var g errgroup.Group
	g.SetLimit(deps.Config.Concurrency)
	for i, c := range pl.chunks {
		g.Go(func() error {
			llmResults[i] = r.runChunk(ctx, change, c, len(pl.chunks), pr, evidence)
			return nil
		})
	}
	_ = g.Wait() // chunk agents never return errors: they end in a status

	out := reviewed{positiveNotes: map[string][]string{}, notes: notes}
	for _, res := range llmResults {
		out.agents = append(out.agents, res.AgentResult)
		out.findings = append(out.findings, res.Output.Findings...)
		for _, n := range res.Output.PositiveNotes {
			out.positiveNotes[n.FilePath] = append(out.positiveNotes[n.FilePath], n.Note)
		}
		out.llmAgents++
		switch res.Status {
		case review.AgentSuccess:
			out.llmSucceeded++
		case review.AgentTruncated:
			out.llmSucceeded += 0.5
		}
		out.llmCalls += res.LLMCalls
		out.toolCalls += res.ToolCalls
		out.cost = out.cost.Add(res.Cost)
	}
	for _, a := range det {
		out.agents = append(out.agents, a.result)
		out.findings = append(out.findings, a.findings...)
	}
	r.emit(ctx, review.EventAgentHandoff, review.StageReviewer, "", map[string]any{
		"from": review.StageReviewer, "to": review.StageVerifier,
		"agents": len(out.agents), "findings": len(out.findings), "llm_calls": out.llmCalls, "tool_calls": out.toolCalls,
	})
	return out
}

// scanSets are the files the deterministic checks read. Every analyzer
// and linter reads the text files of the diff except those the model is
// kept from by name (lock files, path_filters); generated and vendored
// files are in (a secret there is leaked all the same). The secret
// detectors alone also read the rest: lock files, files excluded by
// path_filters and binary files (the lines a --text diff printed, handed
// over as text). No file name, filter or byte keeps a secret from the scan.
func scanSets(d *diff.Diff, pl plan) (all, secretsOnly []*diff.File) {
	byName := map[string]bool{}
	for _, s := range pl.skipped {
		if s.Reason == skipLockfile || s.Reason == skipFiltered {
			byName[s.FilePath] = true
		}
	}
	for _, f := range d.Files {
		switch {
		case f.Binary:
			text := *f
			text.Binary = false
			secretsOnly = append(secretsOnly, &text)
		case byName[f.Path()]:
			secretsOnly = append(secretsOnly, f)
		default:
			all = append(all, f)
		}
	}
	return all, secretsOnly
}

// runChunk runs the LLM agent of one chunk.
func (r *run) runChunk(ctx context.Context, change review.Change, c chunk, total int, pr prompts, evidence map[string][]review.Finding) agent.Result {
	deps := r.p.d
	name := fmt.Sprintf("reviewer:chunk-%d", c.n)
	r.emit(ctx, review.EventAgentStarted, review.StageReviewer, name, map[string]any{
		"chunk": c.n, "files": c.paths(), "tokens": c.tokens, "risk": c.risk,
	})
	cfg := agent.Config{
		Client: r.llm, Model: deps.Config.Model, ContextTokens: deps.Config.ContextTokens, MaxOutputTokens: deps.Config.MaxOutputTokens,
		MaxTurns: deps.Config.MaxTurns, Timeout: deps.Config.AgentTimeout, ResponseFormat: agent.ResponseFormat(deps.Config.ResponseFormat), Counter: r.counter,
		Temperature: float32(deps.Config.Temperature), Cost: r.cost,
	}
	spec := agent.Task{
		Name:   name,
		Stage:  review.StageReviewer,
		System: systemMessage(r.p.prompt.system, pr.conventions, pathInstructions(r.req.Repo, c.paths(), r.counter), r.req.Repo.Language, len(r.req.Learnings) > 0),
		User:   userMessage(change, c, total, r.counter, chunkContext{known: r.known, evidence: evidence, learnings: pr.learnings[c.n], code: pr.code[c.n]}),
		Tools:  pr.tools,
		Emit: func(t review.EventType, data map[string]any) {
			data["chunk"] = c.n
			r.emit(ctx, t, review.StageReviewer, name, data)
		},
	}
	res := agent.Run(ctx, cfg, spec)
	for i := range res.Output.Findings {
		res.Output.Findings[i].Agent = name
		r.emitFinding(ctx, review.EventFindingDetected, review.StageReviewer, name, res.Output.Findings[i])
	}
	r.emitAgentDone(ctx, res.AgentResult)
	return res
}

// cost prices one LLM call.
func (r *run) cost(model string, u openai.Usage) review.CostInfo {
	return llm.Cost(r.p.d.Config.Prices, model, u)
}

// analyzed is the outcome of one analyzer.
type analyzed struct {
	result   review.AgentResult
	findings []review.Finding
}

// deterministic runs the built-in analyzers (one pass over the files) and
// the linters side by side on the files to scan, and the secret detectors
// alone on secretsOnly (scanSets), and returns their outcomes (linters that
// had nothing to check left out) and the linters' notes.
func (r *run) deterministic(ctx context.Context, scan, secretsOnly []*diff.File) ([]analyzed, []string) {
	deps := r.p.d
	var analyzers []analyzed
	linted := make([]analyzed, len(deps.Linters))
	notes := make([][]string, len(deps.Linters))
	var wg sync.WaitGroup
	wg.Go(func() { analyzers = r.runAnalyzers(ctx, r.builtins(), scan, secretsOnly) })
	for i, l := range deps.Linters {
		wg.Go(func() { linted[i], notes[i] = r.runLinter(ctx, l, scan) })
	}
	wg.Wait()
	out := analyzers
	for _, a := range linted {
		if a.result.Agent != "" {
			out = append(out, a)
		}
	}
	var all []string
	for _, n := range notes {
		all = append(all, n...)
	}
	return out, all
}

// runAnalyzers runs the built-in analyzers as agents, in one pass over
// the files (analyzer.Run), and the secret detectors over secretsOnly too.
func (r *run) runAnalyzers(ctx context.Context, analyzers []analyzer.Analyzer, files, secretsOnly []*diff.File) []analyzed {
	for _, a := range analyzers {
		n := len(files)
		if isSecretAgent(a.Name()) {
			n += len(secretsOnly)
		}
		r.emit(ctx, review.EventAgentStarted, review.StageReviewer, a.Name(), map[string]any{"files": n})
	}
	out := make([]analyzed, len(analyzers))
	for i, got := range withSecretScan(ctx, analyzers, files, secretsOnly) {
		name := analyzers[i].Name()
		res := review.AgentResult{Agent: name, Stage: review.StageReviewer, Status: review.AgentSuccess,
			Issues: len(got.Findings), ElapsedMS: got.Elapsed.Milliseconds()}
		if got.Err != nil {
			res.Status, res.Error, res.ErrorType = review.AgentError, got.Err.Error(), "analyzer"
		}
		for j := range got.Findings {
			got.Findings[j].Agent = name
			r.emitFinding(ctx, review.EventFindingDetected, review.StageReviewer, name, got.Findings[j])
		}
		r.emitAgentDone(ctx, res)
		out[i] = analyzed{result: res, findings: got.Findings}
	}
	return out
}

// emitAgentDone reports the end of an agent as its handoff to the verifier.
func (r *run) emitAgentDone(ctx context.Context, res review.AgentResult) {
	r.emit(ctx, review.EventAgentHandoff, res.Stage, res.Agent, map[string]any{
		"from": res.Agent, "to": review.StageVerifier, "result": res,
	})
}

// emitFinding sends a finding event.
func (r *run) emitFinding(ctx context.Context, t review.EventType, stage, agentName string, f review.Finding) {
	r.emit(ctx, t, stage, agentName, map[string]any{"finding": f})
}

// verifiedSet is what the verifier stage produced.
type verifiedSet struct {
	reported       []review.Finding // not false positives, after filters
	falsePositives []review.Finding
	dropped        int // below the threshold or outside the focus areas
	merged         int // duplicates merged into another finding
	// llmCost and llmCalls are the verifier's own LLM calls: the
	// learnings check and the critical re-checks.
	llmCost  review.CostInfo
	llmCalls int
	notes    []string
	// suggestionsApplied and suggestionsRejected count the reported
	// findings' suggestions that apply to the file at the head and those
	// that do not (checkSuggestion).
	suggestionsApplied, suggestionsRejected int
}

// verifyStage verifies every finding, merges duplicates, applies the
// filters and, when configured, has the LLM re-check critical findings.
func (r *run) verifyStage(ctx context.Context, d *diff.Diff, idx *diff.Index, findings []review.Finding) verifiedSet {
	const name = "verifier"
	r.emit(ctx, review.EventAgentStarted, review.StageVerifier, name, map[string]any{"findings": len(findings)})
	v := newVerifier(r.req.Source, d, idx)
	var out verifiedSet
	var candidates []review.Finding
	for _, claimed := range findings {
		f := r.checkSuggestion(ctx, v, claimed, v.verify(ctx, claimed))
		if f.VerificationStatus == review.FalsePositive {
			out.falsePositives = append(out.falsePositives, f)
			continue
		}
		candidates = append(candidates, f)
	}
	candidates, out.merged = dedupe(candidates)
	flt := r.filter()
	for _, f := range candidates {
		if !flt.keep(f) {
			out.dropped++
			continue
		}
		out.reported = append(out.reported, f)
	}
	if len(r.req.Learnings) > 0 && r.llm != nil {
		r.applyLearnings(ctx, &out)
	}
	if r.p.d.Recheck && r.llm != nil {
		r.recheckAll(ctx, v, &out)
	}
	countSuggestions(&out)
	sortFindings(out.reported)
	sortFindings(out.falsePositives)
	for _, f := range out.reported {
		r.emitFinding(ctx, review.EventFindingVerified, review.StageVerifier, name, f)
	}
	for _, f := range out.falsePositives {
		r.emitFinding(ctx, review.EventFindingVerified, review.StageVerifier, name, f)
	}
	if out.dropped > 0 {
		out.notes = append(out.notes, fmt.Sprintf("%d finding(s) below the severity threshold or outside the focus areas were not reported.", out.dropped))
	}
	r.emit(ctx, review.EventAgentHandoff, review.StageVerifier, name, map[string]any{
		"from": review.StageVerifier, "to": review.StageReporter,
		"reported": len(out.reported), "false_positives": len(out.falsePositives), "dropped": out.dropped, "merged": out.merged,
	})
	return out
}

// better reports whether a is the finding to keep over its duplicate b: a
// finding about a secret over one that is not, then the better verified,
// the more severe, a built-in analyzer's, the more confident.
func better(a, b review.Finding) bool {
	if x, y := isSecret(a), isSecret(b); x != y {
		return x
	}
	if x, y := a.VerificationStatus.Rank(), b.VerificationStatus.Rank(); x != y {
		return x > y
	}
	if x, y := a.Severity.Rank(), b.Severity.Rank(); x != y {
		return x > y
	}
	// A built-in analyzer's finding is deterministic and never repeats a
	// secret; it wins over a model's equal one.
	if x, y := analyzer.IsAnalyzer(a), analyzer.IsAnalyzer(b); x != y {
		return x
	}
	return a.Confidence > b.Confidence
}

// isSecret reports whether f is a secret detector's finding.
func isSecret(f review.Finding) bool { return isSecretAgent(f.Agent) }

// isSecretAgent reports whether an agent name is a secret detector's.
func isSecretAgent(name string) bool { return review.IsSecretDetector(name) }

// withSecretScan runs analyzers over files and the secret detectors among
// them over secretsOnly as well, and returns each analyzer's result with
// both runs' findings. In a lock file only an exact detector's finding is
// kept: its integrity hashes trip the heuristic rules.
func withSecretScan(ctx context.Context, analyzers []analyzer.Analyzer, files, secretsOnly []*diff.File) []analyzer.Result {
	results := analyzer.Run(ctx, analyzers, files)
	var secrets []analyzer.Analyzer
	var slots []int
	for i, a := range analyzers {
		if isSecretAgent(a.Name()) {
			secrets, slots = append(secrets, a), append(slots, i)
		}
	}
	if len(secrets) == 0 || len(secretsOnly) == 0 {
		return results
	}
	for j, got := range analyzer.Run(ctx, secrets, secretsOnly) {
		res := &results[slots[j]]
		for _, f := range got.Findings {
			f.Agent = secrets[j].Name()
			if isLockfile(path.Base(f.FilePath)) && !analyzer.Exact(f) {
				continue
			}
			res.Findings = append(res.Findings, f)
		}
		res.Elapsed += got.Elapsed
		if res.Err == nil {
			res.Err = got.Err
		}
	}
	return results
}

// mergeable reports whether two findings may be one problem reported
// twice. A built-in analyzer never reports one problem twice, and two
// analyzers report different problems — except the two secret detectors,
// which both see a PEM private key — so two analyzer findings merge only
// across the secret detectors: a committed .env keeps both its own warning
// and each secret in it, and two secrets on one line stay two.
func mergeable(a, b review.Finding) bool {
	if !analyzer.IsAnalyzer(a) || !analyzer.IsAnalyzer(b) {
		return true
	}
	return a.Agent != b.Agent && isSecret(a) && isSecret(b)
}

// dedupe merges findings on the same file, side and category whose line
// ranges overlap (or that share a fingerprint), when mergeable, keeping the
// better one with the highest severity of the two, and returns how many
// were merged away.
func dedupe(fs []review.Finding) ([]review.Finding, int) {
	var kept []review.Finding
	merged := 0
	for _, f := range fs {
		dup := -1
		for i, k := range kept {
			same := k.Fingerprint == f.Fingerprint ||
				(k.FilePath == f.FilePath && k.Side == f.Side && k.Category == f.Category &&
					f.LineStart > 0 && k.LineStart > 0 && f.LineStart <= k.LineEnd && k.LineStart <= f.LineEnd)
			if same && mergeable(k, f) {
				dup = i
				break
			}
		}
		if dup < 0 {
			kept = append(kept, f)
			continue
		}
		merged++
		other := kept[dup]
		if better(f, other) {
			f, other = other, f
			kept[dup] = other
		}
		// kept[dup] is the better finding; it carries the higher severity
		// and notes where its twin came from.
		if f.Severity.Rank() > kept[dup].Severity.Rank() {
			kept[dup].Severity = f.Severity
		}
		if f.Agent != "" && f.Agent != kept[dup].Agent && !strings.Contains(kept[dup].Reason, f.Agent) {
			kept[dup].Reason = strings.TrimPrefix(kept[dup].Reason+"; also reported by "+f.Agent, "; ")
		}
	}
	return kept, merged
}

// findingFilter is the request's and repository's severity threshold,
// style switch and focus areas.
type findingFilter struct {
	threshold review.Severity
	style     bool
	focus     []review.Category
}

// filter resolves the filter of the run: request options first, then the
// repository's configuration.
func (r *run) filter() findingFilter {
	opts, repo := r.req.Options, r.req.Repo
	f := findingFilter{threshold: opts.SeverityThreshold, style: opts.IncludeStyle || repo.IncludeStyle, focus: opts.FocusAreas}
	if f.threshold == "" {
		f.threshold, _ = review.ParseSeverity(repo.SeverityThreshold)
	}
	if f.threshold == "" {
		f.threshold = review.SeverityInfo
	}
	if len(f.focus) == 0 {
		for _, a := range repo.FocusAreas {
			if c, err := review.ParseCategory(a); err == nil {
				f.focus = append(f.focus, c)
			}
		}
	}
	return f
}

// keep reports whether a finding passes the filter. Style findings are kept
// when style is included, whatever the threshold. Critical findings of the
// built-in analyzers (secrets, conflicts) pass any focus area.
func (flt findingFilter) keep(f review.Finding) bool {
	if f.Severity == review.SeverityStyle {
		if !flt.style {
			return false
		}
	} else if !f.Severity.AtLeast(flt.threshold) {
		return false
	}
	if len(flt.focus) == 0 || slices.Contains(flt.focus, f.Category) {
		return true
	}
	return f.Severity == review.SeverityCritical && strings.HasPrefix(f.Agent, "analyzer:")
}

// sortFindings orders findings by file, line, then severity.
func sortFindings(fs []review.Finding) {
	slices.SortStableFunc(fs, func(a, b review.Finding) int {
		return cmp.Or(
			cmp.Compare(a.FilePath, b.FilePath),
			cmp.Compare(a.LineStart, b.LineStart),
			cmp.Compare(b.Severity.Rank(), a.Severity.Rank()),
			cmp.Compare(a.Category, b.Category),
		)
	})
}

// nonNil makes an empty list marshal as [] rather than null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
