package web

import (
	"regexp"
	"strings"

	"github.com/mergeguard/mergeguard/github/markdown"
)

// Span is a run of a paragraph: text, and the address it links to when the
// text is an address that may be linked.
type Span struct {
	Text, Href string
}

// prose splits text that a model or an author wrote into paragraphs (at
// blank lines) of spans. An address becomes a link only when the
// untrusted-text policy of MergeGuard's GitHub comments allows it: into
// the pull request's own repository (pullURL; "" allows none). The
// template escapes every span.
func prose(text, pullURL string) [][]Span {
	address := regexp.MustCompile(`https?://[^\s<>"'` + "`" + `]+`) // trailing punctuation: trimAddress
	var out [][]Span
	for _, para := range regexp.MustCompile(`\n[ \t]*\n`).Split(strings.TrimSpace(text), -1) {
		if para = strings.TrimSpace(para); para == "" {
			continue
		}
		var spans []Span
		last := 0
		for _, m := range address.FindAllStringIndex(para, -1) {
			addr := trimAddress(para[m[0]:m[1]])
			end := m[0] + len(addr)
			if pullURL == "" || !markdown.LinkAllowed(pullURL, addr) {
				continue // stays text
			}
			if m[0] > last {
				spans = append(spans, Span{Text: para[last:m[0]]})
			}
			spans = append(spans, Span{Text: addr, Href: addr})
			last = end
		}
		if last < len(para) {
			spans = append(spans, Span{Text: para[last:]})
		}
		out = append(out, spans)
	}
	return out
}

// trimAddress cuts the punctuation that ends a sentence or a parenthesis
// from an address found in prose.
func trimAddress(s string) string {
	return strings.TrimRight(s, ".,;:!?)]}")
}
