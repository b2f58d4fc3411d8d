// Package markdowntest checks what MergeGuard renders from untrusted text
// (github/markdown) for anything GitHub would act on; tests of the
// packages that render it share it.
package markdowntest

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/mergeguard/mergeguard/internal/mdscan"
)

// HasLiveMention reports whether s holds an @-mention GitHub would act on.
func HasLiveMention(s string) bool { return liveMention.MatchString(s) }

// nextIndex is the index of c in s after index after, -1 when none.
func nextIndex(s string, c byte, after int) int {
	j := strings.IndexByte(s[after+1:], c)
	if j < 0 {
		return -1
	}
	return after + 1 + j
}

var (
	// liveMention is an @-mention GitHub would act on.
	liveMention = regexp.MustCompile(`@[A-Za-z0-9_-]`)
	// ourTags are the HTML tags MergeGuard writes itself.
	ourTagRE = regexp.MustCompile(`^</?(details|summary|br|sub)>`)
	// ourMarkerRE is a marker line as MergeGuard writes it.
	ourMarkerRE = regexp.MustCompile(`^<!-- mergeguard:[a-z]+=[A-Za-z0-9_.:-]+ -->$`)
)

// Forgeries lists what, in a body MergeGuard renders, GitHub would act on
// beyond MergeGuard's own markup: HTML other than MergeGuard's tags, an
// HTML comment other than the marker line, a mention, an image or link to
// another site, a heading or table from the model, a <details> left open
// or closed twice. Suggestion blocks are code: they are skipped.
func Forgeries(body string) []string {
	var bad []string
	lines := strings.Split(body, "\n")
	if last := lines[len(lines)-1]; !ourMarkerRE.MatchString(last) {
		bad = append(bad, "last line is not a marker line: "+last)
	}
	fence, open, closed := "", 0, 0
	for _, line := range lines[:len(lines)-1] {
		trimmed := strings.TrimSpace(line)
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) && strings.Trim(trimmed, "`") == "" {
				fence = ""
			}
			continue
		}
		if f := mdscan.Fence(trimmed); strings.HasPrefix(f, "```") {
			fence = f
			continue
		}
		bad = append(bad, LiveInLine(line)...)
		open += strings.Count(line, "<details>")
		closed += strings.Count(line, "</details>")
	}
	if open != closed {
		bad = append(bad, fmt.Sprintf("%d <details> and %d </details>", open, closed))
	}
	return bad
}

// LiveInLine lists what GitHub would act on in one line of a rendered
// body outside code: HTML other than MergeGuard's tags, a mention, a link
// or image to another site, a heading or a table.
func LiveInLine(line string) []string {
	var bad []string
	for i := strings.IndexByte(line, '<'); i >= 0; i = nextIndex(line, '<', i) {
		if !ourTagRE.MatchString(line[i:]) {
			bad = append(bad, "HTML "+line[i:min(len(line), i+20)])
		}
	}
	if liveMention.MatchString(line) {
		bad = append(bad, "mention "+liveMention.FindString(line))
	}
	if strings.Contains(line, "](https://evil") || strings.Contains(line, "evil.example") && !strings.Contains(line, "`https://evil.example") {
		bad = append(bad, "link or image to evil.example: "+line)
	}
	if strings.HasPrefix(line, "# ") || strings.Contains(line, "| a | b |") {
		bad = append(bad, "heading or table: "+line)
	}
	return bad
}
