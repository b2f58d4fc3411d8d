package eval

import (
	"strings"
	"unicode"
)

// ContextResult says whether a review's first prompts held the lines
// needed to see a case's defect.
type ContextResult struct {
	// Known is false when the case records no context lines or they could
	// not be read; such a case is left out of context recall.
	Known bool `json:"known"`
	// Seen is true when one first prompt holds every context line.
	Seen bool `json:"seen"`
	// Prompts counts the first prompts (one per model reviewer).
	Prompts int `json:"prompts"`
	// Overflows counts the model reviewers whose prompt did not fit the
	// model's context (an agent error of type context_overflow).
	Overflows int `json:"overflows,omitempty"`
	// Missing lists the ranges the best prompt lacks.
	Missing []string `json:"missing,omitempty"`
	Reason  string   `json:"reason,omitempty"`
}

// CheckContext checks whether one of prompts, the first prompts of a
// review's model reviewers, holds every significant line of refs; lines[i]
// are the text lines of refs[i]. A line is significant when it has at
// least three letters or digits (a lone brace or "else:" proves nothing);
// it is held when its text, without the indentation, is in the prompt,
// whatever line numbers or markers the prompt puts before it. The prompt
// holding the most ranges is the one reported.
func CheckContext(prompts []string, refs []LineRef, lines [][]string) ContextResult {
	r := ContextResult{Known: len(refs) > 0, Prompts: len(prompts)}
	if !r.Known {
		r.Reason = "no context lines recorded"
		return r
	}
	var best []string
	for i, p := range prompts {
		var missing []string
		for k, ref := range refs {
			if !holds(p, lines[k]) {
				missing = append(missing, ref.String())
			}
		}
		if i == 0 || len(missing) < len(best) {
			best = missing
		}
	}
	if len(prompts) == 0 {
		for _, ref := range refs {
			best = append(best, ref.String())
		}
		r.Reason = "no model prompt was built"
	}
	r.Missing = best
	r.Seen = len(prompts) > 0 && len(best) == 0
	return r
}

// holds reports whether prompt contains every significant line of lines.
func holds(prompt string, lines []string) bool {
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if significant(t) && !strings.Contains(prompt, t) {
			return false
		}
	}
	return true
}

// significant reports whether a line has at least three letters or
// digits.
func significant(t string) bool {
	n := 0
	for _, r := range t {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			n++
		}
	}
	return n >= 3
}

// LinesOf returns lines start..end (1-based, inclusive) of text, fewer
// when the text is shorter.
func LinesOf(text string, start, end int) []string {
	all := strings.Split(text, "\n")
	if start < 1 || start > len(all) {
		return nil
	}
	return all[start-1 : min(end, len(all))]
}
