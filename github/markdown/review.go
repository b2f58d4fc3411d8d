package markdown

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/text"
)

// Hidden markers. MergeGuard ends every body it posts with ONE line of
// markers, an HTML comment such as "<!-- mergeguard:run=RUN -->" (a
// review: the run that posted it, which makes posting idempotent per run)
// or "<!-- mergeguard:fp=FP -->" (an inline comment: the finding's
// fingerprint, which keeps a finding from being commented on twice across
// runs). Only that last line of a body is read, and only on bodies whose
// author is the App's bot: text a model or a pull request's author wrote
// is rendered by Policy, which never lets "<!--" through, and text
// someone else posted is never read as ours.
const (
	MarkerRun = "run"
	MarkerFP  = "fp"
)

// MaxBodyLength is the longest body GitHub accepts for a review or a
// comment (REVIEW_RULES.md §3), in characters.
const MaxBodyLength = 65536

// bodyBudget is what the review body may use, leaving room for the parts
// written after the budget is spent.
const bodyBudget = 60000

var (
	// markerLineRE is the whole marker line: one or more key=value pairs.
	markerLineRE = regexp.MustCompile(`^<!-- mergeguard:([a-z]+=[A-Za-z0-9_.:-]+(?: [a-z]+=[A-Za-z0-9_.:-]+)*) -->$`)
	// markerValueRE is what a marker may hold: no "--" or ">" can end the
	// HTML comment early.
	markerValueRE = regexp.MustCompile(`^[A-Za-z0-9_.:]+(-[A-Za-z0-9_.:]+)*$`)
)

// ValidMarkerValue reports whether s may be a marker's value (a run id,
// a fingerprint): letters, digits, ".", "_", ":" and single "-".
func ValidMarkerValue(s string) bool { return markerValueRE.MatchString(s) }

// markerLine returns the marker line of key=value pairs (alternating
// arguments, each value valid under markerValueRE).
func markerLine(pairs ...string) string {
	var b strings.Builder
	b.WriteString("<!-- mergeguard:")
	for i := 0; i+1 < len(pairs); i += 2 {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(pairs[i] + "=" + pairs[i+1])
	}
	b.WriteString(" -->")
	return b.String()
}

// RunMarker is the marker line of a review posted by run runID.
func RunMarker(runID string) string { return markerLine(MarkerRun, runID) }

// ReadMarkers returns the markers of a body's last line, nil when that
// line is not a marker line. A key given twice voids the line.
func ReadMarkers(body string) map[string]string {
	body = strings.TrimRight(body, " \t\r\n")
	last := strings.TrimSpace(body[strings.LastIndexByte(body, '\n')+1:])
	m := markerLineRE.FindStringSubmatch(last)
	if m == nil {
		return nil
	}
	out := map[string]string{}
	for pair := range strings.SplitSeq(m[1], " ") {
		k, v, _ := strings.Cut(pair, "=")
		if _, dup := out[k]; dup || !markerValueRE.MatchString(v) {
			return nil
		}
		out[k] = v
	}
	return out
}

var severityBadges = map[review.Severity]string{
	review.SeverityCritical: "🔴 **Critical**",
	review.SeverityWarning:  "🟠 **Warning**",
	review.SeverityInfo:     "🔵 **Info**",
	review.SeverityStyle:    "⚪ **Style**",
}

func badge(s review.Severity) string {
	if b, ok := severityBadges[s]; ok {
		return b
	}
	return "**" + string(s) + "**"
}

// Lengths of what the model wrote, in characters: a comment stays under
// GitHub's body limit.
const (
	maxTitle       = 300
	maxDescription = 8000
	maxSummary     = 4000
	maxNote        = 500
	// maxSuggestion bounds a suggestion block.
	maxSuggestion = 40000
)

// commentBody renders an inline comment: severity badge, category and
// verification, title, description, the suggestion — a GitHub suggestion
// block when it replaces exactly the commented lines — and the marker line
// with the fingerprint.
func commentBody(tp Policy, f review.Finding, fp string, suggest bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s · %s", badge(f.Severity), tp.Inline(string(f.Category), 40))
	if f.VerificationStatus != "" {
		fmt.Fprintf(&b, " · %s", tp.Inline(strings.ReplaceAll(string(f.VerificationStatus), "_", " "), 40))
	}
	fmt.Fprintf(&b, "\n\n**%s**\n", title(tp, f))
	if d := tp.Block(f.Description, maxDescription); d != "" {
		b.WriteString("\n" + d + "\n")
	}
	if s := review.SuggestionCode(f.Suggestion); s != "" {
		switch {
		case len(s) > maxSuggestion:
			b.WriteString("\n_The suggested fix is too long to show here._\n")
		case suggest && f.SuggestionNote == "":
			fence := fenceFor(s)
			fmt.Fprintf(&b, "\n%ssuggestion\n%s\n%s\n", fence, s, fence)
		case f.SuggestionNote != "":
			fence := fenceFor(s)
			fmt.Fprintf(&b, "\n**Suggested change** (%s, not applied automatically: %s):\n\n%s\n%s\n%s\n", lineRange(f), tp.Inline(f.SuggestionNote, maxNote), fence, s, fence)
		default:
			fence := fenceFor(s)
			fmt.Fprintf(&b, "\n**Suggested fix** (%s):\n\n%s\n%s\n%s\n", lineRange(f), fence, s, fence)
		}
	}
	b.WriteString("\n" + markerLine(MarkerFP, fp))
	return b.String()
}

// title renders a finding's title; an empty one would leave "****", a
// thematic break.
func title(tp Policy, f review.Finding) string {
	if t := tp.Inline(f.Title, maxTitle); t != "" {
		return t
	}
	return "Untitled finding"
}

// fenceFor returns a backtick fence longer than any run of backticks in s.
func fenceFor(s string) string {
	longest, run := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
			continue
		}
		run = 0
	}
	return strings.Repeat("`", max(3, longest+1))
}

func lineRange(f review.Finding) string {
	switch {
	case f.LineStart <= 0:
		return "whole file"
	case f.LineEnd <= f.LineStart:
		return fmt.Sprintf("line %d", f.LineStart)
	}
	return fmt.Sprintf("lines %d–%d", f.LineStart, f.LineEnd)
}

// Caps of the review body's lists.
const (
	maxBodyDescription = 400
	maxBodySuggestion  = 2000
	maxSkippedListed   = 20
	// maxListed caps the notes and recommendations listed.
	maxListed = 20
)

// writeRecommendations lists the verdict's recommendations.
func writeRecommendations(b *strings.Builder, tp Policy, recs []string) {
	var lines []string
	for _, r := range recs[:min(len(recs), maxListed)] {
		if l := tp.Inline(r, maxNote); l != "" {
			lines = append(lines, "- "+l+"\n")
		}
	}
	if len(lines) > 0 {
		b.WriteString("\n**Recommendations**\n\n" + strings.Join(lines, ""))
	}
}

// Body renders the body of the planned review: the verdict and summary, a table of
// findings by severity, the findings that are not inline (by file), what
// was reviewed, skipped or cut, token usage and cost, and the run marker.
// It stays under GitHub's body limit by shortening the list of findings.
func (pl *Plan) Body() string {
	post := pl.post
	v := post.Verdict
	var b strings.Builder
	switch pl.Event {
	case EventApprove:
		b.WriteString("## ✅ MergeGuard approves these changes\n")
	case EventRequestChanges:
		b.WriteString("## 🛑 MergeGuard requests changes\n")
	default:
		b.WriteString("## 💬 MergeGuard review\n")
	}
	if s := pl.text.Block(v.Summary, maxSummary); s != "" {
		b.WriteString("\n" + s + "\n")
	}
	writeFollowUp(&b, pl)
	writeFindingTable(&b, pl)
	writeRecommendations(&b, pl.text, v.Recommendations)
	if pl.capped > 0 {
		fmt.Fprintf(&b, "\n%d more findings are listed below instead of inline: a review carries at most %d inline comments, to stay clear of GitHub's secondary rate limits.\n", pl.capped, pl.maxInline)
	}
	var tail strings.Builder
	writeWalkthrough(&tail, pl.text, v.Walkthrough)
	writeReviewed(&tail, pl.text, v)
	writeUsage(&tail, v)
	if post.DetailsURL != "" {
		fmt.Fprintf(&tail, "\n[Open this review in MergeGuard](%s)\n", post.DetailsURL)
	}
	tail.WriteString("\n" + RunMarker(post.RunID))
	writeBodyFindings(&b, pl, bodyBudget-tail.Len())
	body := b.String() + tail.String()
	if len([]rune(body)) > MaxBodyLength { // only a huge footer or summary gets here
		body = text.Clip(b.String(), MaxBodyLength-len([]rune(tail.String()))-10) + tail.String()
	}
	return body
}

func writeFindingTable(b *strings.Builder, pl *Plan) {
	if len(pl.Items) == 0 {
		b.WriteString("\nNo findings.\n")
		return
	}
	type row struct{ total, inline, body, dup int }
	rows := map[review.Severity]*row{}
	for _, it := range pl.Items {
		r := rows[it.Finding.Severity]
		if r == nil {
			r = &row{}
			rows[it.Finding.Severity] = r
		}
		r.total++
		switch it.Where {
		case review.PlacedInline:
			r.inline++
		case review.PlacedBody:
			r.body++
		case review.PlacedDuplicate:
			r.dup++
		}
	}
	b.WriteString("\n| Severity | Findings | Inline | In this summary | Already commented |\n|---|---:|---:|---:|---:|\n")
	for _, s := range review.Severities {
		if r := rows[s]; r != nil {
			fmt.Fprintf(b, "| %s | %d | %d | %d | %d |\n", badge(s), r.total, r.inline, r.body, r.dup)
		}
	}
	for s, r := range rows {
		if s.Rank() == 0 {
			fmt.Fprintf(b, "| %s | %d | %d | %d | %d |\n", badge(s), r.total, r.inline, r.body, r.dup)
		}
	}
}

// writeBodyFindings lists the findings placed in the body, by file and
// line, within budget characters.
func writeBodyFindings(b *strings.Builder, pl *Plan, budget int) {
	var items []*Item
	for _, it := range pl.Items {
		if it.Where == review.PlacedBody {
			items = append(items, it)
		}
	}
	if len(items) == 0 {
		return
	}
	slices.SortStableFunc(items, func(x, y *Item) int {
		return cmp.Or(strings.Compare(x.Finding.FilePath, y.Finding.FilePath), cmp.Compare(x.Finding.LineStart, y.Finding.LineStart))
	})
	b.WriteString("\n### Findings not commented inline\n")
	file := "\x00"
	for i, it := range items {
		var e strings.Builder
		f := it.Finding
		if f.FilePath != file {
			file = f.FilePath
			name := file
			if name == "" {
				name = "(no file)"
			}
			fmt.Fprintf(&e, "\n**%s**\n\n", codeText(name))
		}
		fmt.Fprintf(&e, "- %s · %s — **%s** (%s", badge(f.Severity), pl.text.Inline(string(f.Category), 40), title(pl.text, f), lineRange(f))
		if it.Reason == ReasonRejected {
			e.WriteString("; " + ReasonRejected)
		}
		e.WriteString(")")
		if d := pl.text.Inline(f.Description, maxBodyDescription); d != "" {
			e.WriteString("<br>" + d)
		}
		e.WriteString("\n")
		if s := review.SuggestionCode(f.Suggestion); s != "" && len(s) <= maxBodySuggestion {
			// The code lines are indented as the fence: the list item
			// holds them, and none can end the block early.
			fence := fenceFor(s)
			code := "  " + strings.ReplaceAll(s, "\n", "\n  ")
			fmt.Fprintf(&e, "  <details><summary>Suggested fix</summary>\n\n  %s\n%s\n  %s\n\n  </details>\n", fence, code, fence)
		}
		if b.Len()+e.Len() > budget {
			fmt.Fprintf(b, "\n…and %d more findings (see the full review in MergeGuard).\n", len(items)-i)
			return
		}
		b.WriteString(e.String())
	}
}

// Limits of the walkthrough in a review body.
const (
	maxWalkthroughSummary = 1200
	maxWalkthroughFiles   = 60
	maxWalkthroughLine    = 200
	maxWalkthroughGroup   = 60
)

// writeWalkthrough writes the walkthrough collapsed: its summary and each
// group's files, a line each. A model may have written it: every word goes
// through the untrusted text policy and every path is code.
func writeWalkthrough(b *strings.Builder, tp Policy, w *review.Walkthrough) {
	if w == nil || len(w.Groups) == 0 {
		return
	}
	b.WriteString("\n<details>\n<summary>Walkthrough</summary>\n\n")
	writeWalkthroughBody(b, tp, w)
	b.WriteString("</details>\n")
}

// writeWalkthroughBody writes a walkthrough's summary and each group's
// files, a line each, every word through the untrusted text policy and
// every path as code.
func writeWalkthroughBody(b *strings.Builder, tp Policy, w *review.Walkthrough) {
	if w == nil {
		return
	}
	if s := tp.Block(w.Summary, maxWalkthroughSummary); s != "" {
		b.WriteString(s + "\n\n")
	}
	listed, total := 0, 0
	for _, g := range w.Groups {
		total += len(g.Files)
		if listed >= maxWalkthroughFiles {
			continue
		}
		fmt.Fprintf(b, "**%s**\n\n", cmp.Or(tp.Inline(g.Name, maxWalkthroughGroup), "other"))
		for _, f := range g.Files[:min(len(g.Files), maxWalkthroughFiles-listed)] {
			b.WriteString("- " + pathText(tp, f.FilePath))
			if l := tp.Inline(f.Line, maxWalkthroughLine); l != "" {
				b.WriteString(" — " + l)
			}
			b.WriteString("\n")
			listed++
		}
		b.WriteString("\n")
	}
	if total > listed {
		fmt.Fprintf(b, "And %d more files.\n\n", total-listed)
	}
}

// pathText shows a path as code, unless it holds a "<" (a forged marker or
// HTML would stand verbatim in the body's source): then as escaped text.
func pathText(tp Policy, p string) string {
	if strings.Contains(p, "<") {
		return tp.Inline(p, maxNote)
	}
	return codeText(p)
}

// writeReviewed says what was reviewed, skipped and cut.
func writeReviewed(b *strings.Builder, tp Policy, v review.Verdict) {
	st := v.Stats
	var lines []string
	if st.FilesChanged > 0 {
		lines = append(lines, fmt.Sprintf("%d files changed (+%d −%d), %d reviewed in %d chunks, %d skipped",
			st.FilesChanged, st.Additions, st.Deletions, st.FilesReviewed, st.Chunks, st.FilesSkipped))
	}
	if len(v.Skipped) > 0 {
		var parts []string
		for _, s := range v.Skipped[:min(len(v.Skipped), maxSkippedListed)] {
			parts = append(parts, fmt.Sprintf("%s (%s)", codeText(s.FilePath), tp.Inline(s.Reason, maxNote)))
		}
		line := "Skipped: " + strings.Join(parts, ", ")
		if n := len(v.Skipped) - maxSkippedListed; n > 0 {
			line += fmt.Sprintf(" and %d more", n)
		}
		lines = append(lines, line)
	}
	if t := v.Truncation; t != nil && t.Truncated {
		line := fmt.Sprintf("Context cut to fit the model: %d of %d lines kept", t.KeptLines, t.OriginalLines)
		if len(t.SectionsAffected) > 0 {
			line += " (" + tp.Inline(strings.Join(t.SectionsAffected, ", "), maxNote) + ")"
		}
		lines = append(lines, line)
	}
	if v.Degraded {
		var failed []string
		for _, a := range v.Agents {
			switch a.Status {
			case review.AgentError:
				failed = append(failed, fmt.Sprintf("%s failed (%s)", codeText(a.Agent), tp.Inline(a.Error, 120)))
			case review.AgentTimeout:
				failed = append(failed, fmt.Sprintf("%s timed out after %.0f s", codeText(a.Agent), a.TimeoutSeconds))
			case review.AgentTruncated:
				failed = append(failed, fmt.Sprintf("%s stopped at its turn limit", codeText(a.Agent)))
			}
		}
		line := "⚠️ Partial review"
		if len(failed) > 0 {
			line += ": " + strings.Join(failed, "; ")
		}
		lines = append(lines, line)
	}
	for _, n := range v.Notes[:min(len(v.Notes), maxListed)] {
		lines = append(lines, tp.Inline(n, maxNote))
	}
	if len(lines) == 0 {
		return
	}
	b.WriteString("\n<details>\n<summary>What was reviewed</summary>\n\n")
	for _, l := range lines {
		b.WriteString("- " + l + "\n")
	}
	b.WriteString("\n</details>\n")
}

// writeUsage reports token usage, cost and effort.
func writeUsage(b *strings.Builder, v review.Verdict) {
	st := v.Stats
	if st.InputTokens == 0 && st.OutputTokens == 0 && st.LLMCalls == 0 {
		return
	}
	fmt.Fprintf(b, "\n<sub>Tokens: %d in, %d out · cost $%.4f · %d LLM calls, %d tool calls · %.1f s</sub>\n",
		st.InputTokens, st.OutputTokens, st.TotalCost, st.LLMCalls, st.ToolCalls, float64(v.ReviewDurationMS)/1000)
}

// suppressed returns the fingerprints a follow-up forbids posting, with
// their earlier comment (0 when they were not posted inline).
func suppressed(fu *review.FollowUp) map[string]int64 {
	if fu == nil {
		return nil
	}
	out := map[string]int64{}
	for _, list := range [][]review.LedgerEntry{fu.StillOpen, fu.Dismissed, fu.Exposed} {
		for _, e := range list {
			if e.Finding.Fingerprint != "" {
				out[e.Finding.Fingerprint] = e.CommentID
			}
		}
	}
	return out
}

// writeFollowUp writes what the review covered, the findings fixed since
// the last review and those still open.
func writeFollowUp(b *strings.Builder, pl *Plan) {
	fu := pl.post.FollowUp
	if fu == nil {
		return
	}
	b.WriteString("\n")
	sc := fu.Scope
	switch sc.Kind {
	case review.ScopeIncremental:
		fmt.Fprintf(b, "**Incremental review** of %s since %s, %s.\n", plural(sc.Commits, "commit"), codeText(text.ShortSHA(sc.SinceSHA)), plural(sc.Files, "file"))
	default:
		b.WriteString("**Full review**")
		if r := pl.text.Inline(sc.Reason, maxNote); r != "" {
			b.WriteString(": " + r)
		}
		b.WriteString(".\n")
	}
	fresh := 0
	for _, it := range pl.Items {
		if it.Where != review.PlacedDuplicate {
			fresh++
		}
	}
	fmt.Fprintf(b, "\nNew findings: %d · fixed since last time: %d · still open: %d", fresh, len(fu.Fixed), len(fu.StillOpen))
	if len(fu.Exposed) > 0 {
		fmt.Fprintf(b, " · exposed secrets: %d", len(fu.Exposed))
	}
	b.WriteString("\n")
	if fu.BlockingCleared && pl.Event != EventRequestChanges {
		b.WriteString("\n✅ The last blocking finding is gone: MergeGuard no longer requests changes on this pull request.\n")
	}
	writeEntryList(b, pl.text, "Fixed since last time", fu.Fixed, pl.pullURL, entryFixedLine)
	writeEntryList(b, pl.text, "Still open", fu.StillOpen, pl.pullURL, entryOpenLine)
	writeEntryList(b, pl.text, "Exposed secrets: pushed, so rotate them", fu.Exposed, pl.pullURL, entryExposedLine)
}

// writeEntryList writes a titled list of ledger entries, at most
// maxListed of them, each rendered by line.
func writeEntryList(b *strings.Builder, tp Policy, heading string, entries []review.LedgerEntry, pullURL string, line func(Policy, review.LedgerEntry, string) string) {
	if len(entries) == 0 {
		return
	}
	fmt.Fprintf(b, "\n**%s**\n\n", heading)
	for _, e := range sortedEntries(entries)[:min(len(entries), maxListed)] {
		b.WriteString("- " + line(tp, e, pullURL) + "\n")
	}
	if n := len(entries) - maxListed; n > 0 {
		fmt.Fprintf(b, "- …and %d more\n", n)
	}
}

// sortedEntries orders entries as sortedFindings orders findings.
func sortedEntries(entries []review.LedgerEntry) []review.LedgerEntry {
	out := slices.Clone(entries)
	slices.SortStableFunc(out, func(a, b review.LedgerEntry) int { return findingOrder(a.Finding, b.Finding) })
	return out
}

// entryHead renders an entry's severity, title and place.
func entryHead(tp Policy, e review.LedgerEntry) string {
	f := e.Finding
	where := "(no file)"
	if f.FilePath != "" {
		where = codeText(f.FilePath) + " " + lineRange(f)
	}
	return fmt.Sprintf("%s — **%s** (%s)", badge(f.Severity), title(tp, f), where)
}

// commentLink is the address of a review comment of the pull request.
func commentLink(pullURL string, id int64) string {
	if pullURL == "" || id <= 0 {
		return ""
	}
	return fmt.Sprintf("%s#discussion_r%d", pullURL, id)
}

func entryOpenLine(tp Policy, e review.LedgerEntry, pullURL string) string {
	s := entryHead(tp, e)
	if link := commentLink(pullURL, e.CommentID); link != "" {
		s += " · [thread](" + link + ")"
	}
	return s
}

func entryExposedLine(tp Policy, e review.LedgerEntry, pullURL string) string {
	s := entryHead(tp, e) + " — pushed in " + codeText(text.ShortSHA(e.FirstSeenSHA))
	if e.StateHow == review.ExposedWarning {
		s += ", not blocking (`secrets.removed: warn`)"
	}
	if link := commentLink(pullURL, e.CommentID); link != "" {
		s += " · [thread](" + link + ")"
	}
	return s
}

func entryFixedLine(tp Policy, e review.LedgerEntry, pullURL string) string {
	s := entryHead(tp, e)
	if e.FixedSHA != "" {
		s += " — fixed in " + codeText(text.ShortSHA(e.FixedSHA))
	}
	if link := commentLink(pullURL, e.CommentID); link != "" {
		s += " · [thread](" + link + ")"
	}
	return s
}

// Reply renders a reply, within max characters: untrusted text, and its first ```suggestion
// block (as a model writes one) as a suggestion whose fence its code cannot
// close.
func (tp Policy) Reply(body string, maxReply int) string {
	const open = "```suggestion\n"
	i := strings.Index(body, open)
	if i < 0 {
		return tp.Block(body, maxReply)
	}
	rest := body[i+len(open):]
	j := strings.Index(rest, "\n```")
	if j < 0 {
		return tp.Block(body, maxReply)
	}
	code := review.SuggestionCode(rest[:j])
	after := strings.TrimPrefix(rest[j+len("\n```"):], "\n")
	fence := fenceFor(code)
	var b strings.Builder
	if before := strings.TrimSpace(body[:i]); before != "" {
		b.WriteString(tp.Block(before, maxReply/2) + "\n\n")
	}
	b.WriteString(fence + "suggestion\n" + code + "\n" + fence + "\n")
	if after = strings.TrimSpace(after); after != "" {
		b.WriteString("\n" + tp.Block(after, maxReply/4))
	}
	return b.String()
}
