package pipeline

import (
	"context"
	"fmt"
	"strings"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/analyzer"
	"github.com/mergeguard/mergeguard/review/suggest"
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
