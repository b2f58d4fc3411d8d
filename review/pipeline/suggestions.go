package pipeline

import (
	"context"
	"fmt"
	"strings"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/analyzer"
	"github.com/mergeguard/mergeguard/review/diff"
	"github.com/mergeguard/mergeguard/review/suggest"
	"github.com/mergeguard/mergeguard/review/task"
)

// checkSuggestion decides whether the suggestion of f, a finding as the
// verifier judged it, may be posted as a suggestion block, which a person
// applies with one click; claimed is the finding as it was reported. A
// suggestion that does not apply gets the reason as its SuggestionNote
// and is posted as a plain code block (docs/quality.md, Suggestions that
// apply). A suggestion on removed lines is never a suggestion block and is
// left alone.
func (r *run) checkSuggestion(ctx context.Context, v *verifier, claimed, f review.Finding) review.Finding {
	code := review.SuggestionCode(f.Suggestion)
	if code == "" || f.Side == review.SideLeft || f.VerificationStatus == review.FalsePositive {
		return f
	}
	f.SuggestionNote = r.suggestionNote(ctx, v, claimed, f, code)
	return f
}

// suggestionNote is why f's suggestion does not apply, "" when it does.
func (r *run) suggestionNote(ctx context.Context, v *verifier, claimed, f review.Finding, code string) string {
	if analyzer.IsAnalyzer(f) {
		return "the analyzer's suggestion is advice in words, not a replacement of the lines"
	}
	if f.LineStart < 1 {
		return "the finding cites no lines to replace"
	}
	if moved(claimed, f) {
		return fmt.Sprintf("the suggestion was written for lines %d-%d, and the finding is at lines %d-%d", claimed.LineStart, max(claimed.LineEnd, claimed.LineStart), f.LineStart, f.LineEnd)
	}
	lines, err := v.read(ctx, f.FilePath, review.Head)
	if err != nil {
		return "the file at the head could not be read to check it"
	}
	return suggest.Check(ctx, suggest.Input{
		Path: f.FilePath, Content: []byte(strings.Join(lines, "\n") + "\n"),
		Start: f.LineStart, End: f.LineEnd, Code: code,
		InDiff: func(start, end int) bool {
			return v.idx.CommentableRange(f.FilePath, review.SideRight, start, end)
		},
		Analyzers: r.builtins(),
	})
}

// moved reports whether the verifier moved a finding off the lines its
// suggestion was written for: a finding without cited code snapped to
// lines of the diff, or a finding re-anchored onto a span of another
// length. A finding re-anchored to where its cited code is, on as many
// lines, still replaces the code the suggestion was written for.
func moved(claimed, f review.Finding) bool {
	start, end := claimed.LineStart, max(claimed.LineEnd, claimed.LineStart)
	if start == f.LineStart && end == f.LineEnd {
		return false
	}
	return snippetLines(claimed.CodeSnippet) == nil || end-start != f.LineEnd-f.LineStart
}

// countSuggestions counts the reported findings' suggestions that apply
// and those that do not, and notes the latter in the review's body.
func countSuggestions(vf *verifiedSet) {
	for _, f := range vf.reported {
		switch {
		case f.SuggestionNote != "":
			vf.suggestionsRejected++
		case f.Side != review.SideLeft && review.SuggestionCode(f.Suggestion) != "":
			vf.suggestionsApplied++
		}
	}
	if vf.suggestionsRejected > 0 {
		vf.notes = append(vf.notes, fmt.Sprintf("%d suggestion(s) did not apply cleanly to the file at the head and are shown as plain code, each with the reason.", vf.suggestionsRejected))
	}
}

// answerSuggestion checks the suggestion block of an answer (its first
// "```suggestion" block, the one github/markdown posts to apply) against
// the lines of the thread: the finding's, else the question's line, and
// the pull request's diff d (nil: not read). One that does not apply is
// turned into a plain code block after a note saying why (docs/quality.md,
// Suggestions that apply).
func (r *run) answerSuggestion(ctx context.Context, req task.AnswerRequest, d *diff.Diff, text string) string {
	const open = "```suggestion\n"
	i := strings.Index(text, open)
	if i < 0 {
		return text
	}
	rest := text[i+len(open):]
	j := strings.Index(rest, "\n```")
	if j < 0 {
		return text
	}
	note := r.answerNote(ctx, req, d, review.SuggestionCode(rest[:j]))
	if note == "" {
		return text
	}
	return text[:i] + "Suggested change (not applied automatically: " + note + "):\n\n```\n" + rest
}

// answerNote is why an answer's suggestion does not apply to the thread's
// lines, "" when it does; d (nil: not read) bounds it to the diff's lines.
func (r *run) answerNote(ctx context.Context, req task.AnswerRequest, d *diff.Diff, code string) string {
	path, start, end := req.Question.Path, req.Question.Line, req.Question.Line
	if f := req.Finding; f != nil {
		path, start, end = f.Finding.FilePath, f.Finding.LineStart, max(f.Finding.LineEnd, f.Finding.LineStart)
	}
	if path == "" || start < 1 {
		return "the answer is not on lines of the code"
	}
	b, err := req.Source.ReadFile(ctx, path, review.Head)
	if err != nil {
		return "the file at the head could not be read to check it"
	}
	in := suggest.Input{Path: path, Content: b, Start: start, End: end, Code: code, Analyzers: r.builtins()}
	if d != nil {
		idx := diff.NewIndex(d)
		in.InDiff = func(s, e int) bool { return idx.CommentableRange(path, review.SideRight, s, e) }
	}
	return suggest.Check(ctx, in)
}
