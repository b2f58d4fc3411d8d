package markdown

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/mergeguard/mergeguard/internal/mdscan"
	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/text"
)

// MergeGuard's section of a pull request's description (/mergeguard
// describe) lies between two marker lines:
//
//	<!-- mergeguard:describe-start -->
//	...the walkthrough...
//	<!-- mergeguard:describe-end mac=HEX -->
//
// The description is the author's: anyone who may edit it can write these
// lines, so a marker is not trusted for what it says. The end marker
// carries an HMAC-SHA256, under a key only MergeGuard holds, of the
// repository, the pull request's number and the exact text between the
// lines (line endings normalised to "\n": GitHub's web editor stores
// "\r\n"). A section is MergeGuard's only when that MAC matches: a forged
// marker, a start marker without an end, a section copied from another
// pull request, or one whose text someone edited is the author's text and
// is never replaced. The section's text is rendered by Policy, so it
// can hold no "<!--" and so no marker of its own.
const (
	describeStart    = "<!-- mergeguard:describe-start -->"
	describeEndFmt   = "<!-- mergeguard:describe-end mac=%s -->"
	describeMACLabel = "mergeguard describe v1"
)

// describeEndRE is the end marker line.
var describeEndRE = regexp.MustCompile(`^<!-- mergeguard:describe-end mac=([0-9a-f]{64}) -->$`)

// DescriptionKey derives the key that signs the markers of MergeGuard's
// section of pull request descriptions from a secret MergeGuard keeps,
// such as the App's webhook secret. A new secret makes earlier sections
// the author's text: the next describe adds a new section below them.
func DescriptionKey(secret string) []byte {
	if secret == "" {
		return nil
	}
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(describeMACLabel))
	return m.Sum(nil)
}

// Section finds and writes MergeGuard's section in the descriptions of
// one pull request.
type Section struct {
	// Key signs the markers (DescriptionKey).
	Key []byte
	// Repo ("owner/name") and Number name the pull request.
	Repo   string
	Number int
}

// mac is the hex HMAC of a section's text, bound to the pull request.
func (d Section) mac(text string) string {
	m := hmac.New(sha256.New, d.Key)
	m.Write([]byte(describeMACLabel + "\x00" + strings.ToLower(d.Repo) + "\x00" + strconv.Itoa(d.Number) + "\x00" + text))
	return hex.EncodeToString(m.Sum(nil))
}

// section is the marked section holding text.
func (d Section) section(text string) string {
	return describeStart + "\n" + text + "\n" + fmt.Sprintf(describeEndFmt, d.mac(text))
}

// Splice returns body with MergeGuard's section holding text: the first
// section of body whose MAC matches is replaced, line for line, and
// nothing else changes; without one, the section is added after the
// author's text and a blank line, after closing a code fence or an HTML
// comment the author left open (so that the section is not shown as their
// code, or hidden in their comment).
func (d Section) Splice(body, text string) string {
	lines := strings.SplitAfter(body, "\n")
	start := -1
	for i, raw := range lines {
		line := strings.TrimRight(raw, " \t\r\n")
		if line == describeStart {
			start = i
			continue
		}
		m := describeEndRE.FindStringSubmatch(line)
		if m == nil || start < 0 {
			continue
		}
		if hmac.Equal([]byte(m[1]), []byte(d.mac(sectionText(lines[start+1:i])))) {
			ending := raw[len(strings.TrimRight(raw, "\r\n")):]
			return strings.Join(lines[:start], "") + d.section(text) + ending + strings.Join(lines[i+1:], "")
		}
	}
	author := strings.TrimRight(body, "\r\n")
	if author == "" {
		return d.section(text)
	}
	return author + "\n" + openConstruct(author) + "\n" + d.section(text)
}

// sectionText is the text between two marker lines, "\r\n" read as "\n"
// and without the last line's ending.
func sectionText(lines []string) string {
	var b strings.Builder
	for i, l := range lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(strings.TrimRight(l, "\r\n"))
	}
	return b.String()
}

// openConstruct returns the line that closes what text leaves open at its
// end, with its newline — a fenced code block or an HTML comment — or "".
func openConstruct(text string) string {
	var md mdscan.Lines
	for line := range strings.Lines(text) {
		md.Next(line)
	}
	switch {
	case md.Fence != "":
		return md.Fence + "\n"
	case md.InComment:
		return "-->\n"
	}
	return ""
}

// DescriptionText renders the section's text: a heading, where it comes
// from, and the walkthrough, every word of which a model may have written.
func DescriptionText(pullURL string, desc review.Description) string {
	tp := NewPolicy(pullURL)
	var b strings.Builder
	b.WriteString("### Walkthrough\n\n<sub>Written by MergeGuard")
	if desc.HeadSHA != "" {
		b.WriteString(" from its review of " + codeText(text.ShortSHA(desc.HeadSHA)))
	}
	if desc.DetailsURL != "" && urlLen(desc.DetailsURL) == len(desc.DetailsURL) {
		b.WriteString(" ([details](" + desc.DetailsURL + "))")
	}
	b.WriteString("; `/mergeguard describe` updates it. Text outside this section is left as written.</sub>\n\n")
	writeWalkthroughBody(&b, tp, desc.Walkthrough)
	return strings.TrimRight(b.String(), "\n")
}
