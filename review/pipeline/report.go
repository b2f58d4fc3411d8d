package pipeline

import (
	"context"
	"fmt"
	"strings"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/diff"
	"github.com/mergeguard/mergeguard/review/lang"
	"github.com/mergeguard/mergeguard/review/task"
)

// report runs the reporter: the deterministic verdict policy, the per-file
// view, stats, summary, recommendations and notes.
//
// counted are the findings the verdict counts: vf.reported and, for a pull
// request reviewed before, its earlier findings still open.
func (r *run) report(ctx context.Context, change review.Change, d *diff.Diff, idx *diff.Index, pl plan, rv reviewed, vf verifiedSet, notes []string, counted []review.Finding) *task.Result {
	const name = "reporter"
	r.emit(ctx, review.EventAgentStarted, review.StageReporter, name, map[string]any{"findings": len(vf.reported)})
	deps := r.p.d
	v := review.Verdict{
		Files:           fileReviews(d, vf.reported, rv.positiveNotes),
		FalsePositives:  append([]review.Finding{}, vf.falsePositives...),
		Recommendations: []string{},
		Skipped:         pl.skipped,
		Truncation:      pl.truncation,
		Agents:          rv.agents,
	}
	cost := rv.cost.Add(vf.llmCost)
	v.Stats = review.Stats{
		FilesChanged: len(d.Files), FilesReviewed: len(pl.reviewed), FilesSkipped: len(pl.skipped),
		Chunks: len(pl.chunks), FindingsTotal: len(vf.reported),
		LLMCalls: rv.llmCalls + vf.llmCalls, ToolCalls: rv.toolCalls,
		InputTokens: cost.InputTokens, OutputTokens: cost.OutputTokens, TotalCost: cost.TotalCost,
		SuggestionsApplied: vf.suggestionsApplied, SuggestionsRejected: vf.suggestionsRejected,
	}
	for _, f := range d.Files {
		v.Stats.Additions += f.Additions
		v.Stats.Deletions += f.Deletions
	}
	for _, f := range vf.reported {
		switch f.Severity {
		case review.SeverityCritical:
			v.Stats.Critical++
		case review.SeverityWarning:
			v.Stats.Warning++
		case review.SeverityInfo:
			v.Stats.Info++
		case review.SeverityStyle:
			v.Stats.Style++
		}
	}

	var failed []string
	for _, a := range rv.agents {
		switch a.Status {
		case review.AgentError:
			failed = append(failed, fmt.Sprintf("%s (%s: %s)", a.Agent, a.ErrorType, a.Error))
		case review.AgentTimeout:
			failed = append(failed, fmt.Sprintf("%s (timed out after %gs)", a.Agent, a.TimeoutSeconds))
		case review.AgentTruncated:
			notes = append(notes, fmt.Sprintf("%s reached its turn limit; its findings may be incomplete.", a.Agent))
		}
	}
	if len(failed) > 0 {
		v.Degraded = true
		notes = append(notes, "Some agents failed and the review is partial: "+strings.Join(failed, "; "))
	}
	llmReviewed := deps.LLM != nil && rv.llmAgents > 0
	switch {
	case r.modelSkipped != "":
		notes = append(notes, task.ModelSkippedNote+r.modelSkipped+". The built-in analyzers and linters reviewed every changed file and decide the check.")
	case deps.LLM == nil:
		notes = append(notes, "No LLM configured: built-in analyzers only.")
	}
	notes = append(notes, vf.notes...)
	unreadNote, unread := unreviewedNote(pl.skipped)
	if unread > 0 {
		notes = append([]string{unreadNote}, notes...)
	}

	v.Verdict, v.Summary = decide(r.req.Repo.AllowApprove, task.BlockingSeverity(r.req.Repo), counted, v.Degraded, llmReviewed, len(pl.reviewed), unread)
	v.Summary = summary(v, len(pl.reviewed), int(r.lintUnchecked.Load())) + " " + v.Summary
	v.Confidence = confidence(deps.LLM != nil, rv)
	v.Recommendations = recommendations(vf.reported, pl, v.Degraded, deps.LLM == nil)
	v.Notes = notes
	v.ReviewDurationMS = deps.Now().Sub(r.start).Milliseconds()

	all := append(append([]review.Finding{}, vf.reported...), vf.falsePositives...)
	sortFindings(all)
	r.emit(ctx, review.EventAgentHandoff, review.StageReporter, name, map[string]any{
		"from": review.StageReporter, "to": "done", "verdict": v.Verdict, "confidence": v.Confidence,
	})
	return &task.Result{
		Verdict: v, Findings: all, Index: idx, Change: change, Cost: cost,
	}
}

// decide is the verdict policy:
//   - request_changes when a verified finding at or above the blocking
//     severity remains (a likely one — its code not checked at its lines —
//     is reported but does not block);
//   - approve only when the repository allows it, an LLM reviewed every
//     chunk without failure, every changed file was read (unreviewed
//     counts those that could not be: binary and unreadable), and nothing
//     at warning or above remains;
//   - comment otherwise.
//
// The model has no say: its findings count only through verification.
func decide(allowApprove bool, blocking review.Severity, reported []review.Finding, degraded, llmReviewed bool, filesReviewed, unreviewed int) (review.Decision, string) {
	for _, f := range reported {
		if f.Severity.AtLeast(blocking) && f.VerificationStatus == review.Verified {
			return review.DecisionRequestChanges, fmt.Sprintf("Changes requested: %s (%s:%d).", f.Title, f.FilePath, f.LineStart)
		}
	}
	for _, f := range reported {
		if f.Severity.AtLeast(review.SeverityWarning) {
			return review.DecisionComment, "Some findings deserve a look before merging."
		}
	}
	switch {
	case !allowApprove:
		return review.DecisionComment, "No blocking problem found."
	case !llmReviewed || degraded || filesReviewed == 0 || unreviewed > 0:
		return review.DecisionComment, "No blocking problem found, but the review was not complete enough to approve."
	}
	return review.DecisionApprove, "No problem found that blocks merging."
}

// summary states what was reviewed and found, and how many files a
// linter that applies to them could not check.
func summary(v review.Verdict, reviewed, unchecked int) string {
	s := v.Stats
	var b strings.Builder
	fmt.Fprintf(&b, "Reviewed %d of %d changed files", reviewed, s.FilesChanged)
	if s.FilesSkipped > 0 {
		fmt.Fprintf(&b, " (%d skipped)", s.FilesSkipped)
	}
	if s.Chunks > 0 {
		fmt.Fprintf(&b, " in %d part(s)", s.Chunks)
	}
	if s.FindingsTotal == 0 {
		b.WriteString(": no findings.")
	} else {
		fmt.Fprintf(&b, ": %d finding(s) — %d critical, %d warning, %d info, %d style.", s.FindingsTotal, s.Critical, s.Warning, s.Info, s.Style)
	}
	switch {
	case unchecked == 1:
		b.WriteString(" 1 file was not checked by its linter (see the notes).")
	case unchecked > 1:
		fmt.Fprintf(&b, " %d files were not checked by their linters (see the notes).", unchecked)
	}
	if v.Degraded {
		b.WriteString(" The review is partial: some agents failed.")
	}
	return b.String()
}

// confidence is how much the verdict can be trusted: 0.5 for analyzers
// alone (they do not read the logic), otherwise 0.9 scaled by the share of
// LLM agents that finished (a truncated one counts half).
func confidence(llmConfigured bool, rv reviewed) float64 {
	if !llmConfigured || rv.llmAgents == 0 {
		return 0.5
	}
	return 0.9 * rv.llmSucceeded / float64(rv.llmAgents)
}

// recommendations are the next steps the findings call for.
func recommendations(reported []review.Finding, pl plan, degraded, noLLM bool) []string {
	out := []string{}
	var secrets, conflicts, blocking, unverified int
	for _, f := range reported {
		switch f.Agent {
		case "analyzer:secrets", "analyzer:private-keys":
			secrets++
		case "analyzer:conflict-markers":
			conflicts++
		}
		if f.Severity == review.SeverityCritical {
			blocking++
		}
		if f.VerificationStatus == review.Unverified {
			unverified++
		}
	}
	if secrets > 0 {
		out = append(out, "Rotate every credential or key found in this change: removing it in a later commit does not un-leak it.")
	}
	if conflicts > 0 {
		out = append(out, "Resolve the merge conflicts left in the change.")
	}
	if blocking > 0 {
		out = append(out, fmt.Sprintf("Fix the %d critical finding(s) before merging.", blocking))
	}
	if unverified > 0 {
		out = append(out, fmt.Sprintf("Check the %d finding(s) that could not be verified against the diff.", unverified))
	}
	if pl.truncation != nil {
		out = append(out, "Review by hand the parts of large diffs that were cut: "+strings.Join(pl.truncation.SectionsAffected, ", ")+".")
	}
	if degraded {
		out = append(out, "Rerun the review: some agents failed.")
	}
	if noLLM {
		out = append(out, "Configure an LLM (OPENAI_API_KEY, MERGEGUARD_MODEL) for a full review.")
	}
	return out
}

// fileReviews lists every changed file with its reported findings and the
// model's positive notes, in diff order.
func fileReviews(d *diff.Diff, reported []review.Finding, notes map[string][]string) []review.FileReview {
	byFile := map[string][]review.Finding{}
	for _, f := range reported {
		byFile[f.FilePath] = append(byFile[f.FilePath], f)
	}
	out := make([]review.FileReview, 0, len(d.Files))
	for _, f := range d.Files {
		p := f.Path()
		fr := review.FileReview{
			FilePath:      p,
			Language:      lang.Detect(p),
			ChangeType:    string(f.Status),
			Findings:      append([]review.Finding{}, byFile[p]...),
			PositiveNotes: append([]string{}, notes[p]...),
		}
		out = append(out, fr)
	}
	return out
}
