package markdown

import (
	"net/url"
	"path"
	"strings"
	"unicode"

	"github.com/mergeguard/mergeguard/review/text"
)

// Policy renders text that a model or a pull request's author wrote
// (titles, descriptions, summaries, notes, recommendations) as markdown
// that shows the text and does nothing else on GitHub:
//
//   - no HTML: "<", ">" and "&" are escaped, so no tag, HTML comment (and so
//     no forged MergeGuard marker), entity or autolink in angle brackets
//     can form;
//   - no notifications: "@" before a name gets a zero-width joiner (U+200D),
//     which GitHub does not read as a mention of a user, team or @everyone;
//     "owner/repo#1" likewise, which would cross-reference another issue;
//   - no links or images, except markdown links and images into the pull
//     request's own repository: others show their text and the address in
//     code, and bare addresses are put in code, where GitHub links nothing;
//   - no block constructs that break the layout around the text: headings,
//     lists, block quotes, tables, fences, thematic breaks, math, link
//     reference definitions and indented code are escaped or unindented;
//   - code spans stay code spans when their content is plain; a code span
//     holding "<", ">", "@" or "|" is shown as text between backticks;
//   - control and bidirectional-override characters are dropped, and the
//     text is clipped to a length.
//
// The zero value keeps no link live.
type Policy struct {
	// repo is the repository's web address with a final "/", as
	// "https://github.com/acme/widgets/"; "" keeps no link live.
	repo *url.URL
}

// NewPolicy returns the policy of a pull request given its web URL
// (https://github.com/OWNER/REPO/pull/N). A URL that does not look like one
// keeps no link live.
func NewPolicy(pullURL string) Policy {
	u, err := url.Parse(pullURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil {
		return Policy{}
	}
	parts := strings.Split(strings.Trim(u.Path, "/"), "/")
	if len(parts) < 2 || parts[0] == "" || parts[1] == "" || parts[0] == ".." || parts[1] == ".." {
		return Policy{}
	}
	return Policy{repo: &url.URL{Scheme: strings.ToLower(u.Scheme), Host: strings.ToLower(u.Host), Path: "/" + parts[0] + "/" + parts[1] + "/"}}
}

const zwj = "\u200d"

// Block renders multi-line text, at most n characters of it. Paragraphs
// stay paragraphs; GitHub shows single line breaks in comments.
func (tp Policy) Block(s string, n int) string {
	s = text.Clip(cleanText(s), n)
	var b strings.Builder
	blank := 0
	for line := range strings.SplitSeq(s, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			blank++
			continue
		}
		if b.Len() > 0 {
			b.WriteString(strings.Repeat("\n", min(blank, 1)+1))
		}
		blank = 0
		tp.line(&b, line, false, true)
	}
	return b.String()
}

// Inline renders text as part of one line (a title, a list item), at most
// n characters of it; emphasis markers are escaped too, so the text cannot
// end the bold or italics it is set in.
func (tp Policy) Inline(s string, n int) string {
	var b strings.Builder
	tp.line(&b, text.Clip(text.OneLine(cleanText(s)), n), true, true)
	return b.String()
}

// cleanText drops invalid UTF-8, control characters other than tab and
// newline, and the characters that reorder text (Trojan Source).
func cleanText(s string) string {
	s = strings.ToValidUTF8(s, "�")
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n':
			return r
		case r == '\t':
			return ' '
		case unicode.IsControl(r), r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e, r == 0x200f, r == 0x061c:
			return -1
		}
		return r
	}, s)
}

var (
	// urlChars is what an address may hold to be shown or linked: no
	// space, quote, angle bracket, parenthesis, bracket, backslash,
	// backtick, "|" or "@".
	urlChars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~:/?#%!$&'*+,;="
)

// line renders one line of text (no newline) into b, as text that starts
// a markdown line. inline escapes emphasis too; links keeps markdown links
// into the repository.
func (tp Policy) line(b *strings.Builder, s string, inline, links bool) {
	tp.text(b, s[writeLineStart(b, s):], inline, links)
}

// text renders text inside a line; see line.
func (tp Policy) text(b *strings.Builder, s string, inline, links bool) {
	ends := schemeEnds(s)
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '`':
			i = tp.codeSpan(b, s, i, inline)
		case c == '[' || (c == '!' && strings.HasPrefix(s[i+1:], "[")):
			if links {
				if next, ok := tp.link(b, s, i); ok {
					i = next
					continue
				}
			}
			if c == '!' {
				b.WriteByte('!')
				i++
			}
			b.WriteString(`\[`)
			i++
		case isLetter(c) && (i == 0 || !isLetter(s[i-1])) && startsAddress(s, i, ends):
			end := i + len(strings.TrimRight(s[i:i+urlLen(s[i:])], ".,:;!?'*"))
			writeCode(b, s[i:end])
			i = end
		case c == '@' && i+1 < len(s) && isNameByte(s[i+1]):
			b.WriteString("@" + zwj)
			i++
		case c == '#' && i > 0 && i+1 < len(s) && isDigit(s[i+1]) && (isNameByte(s[i-1]) || s[i-1] == '/'):
			b.WriteString("#" + zwj)
			i++
		case c == '_' && i > 0 && i+1 < len(s) && isAlnum(s[i-1]) && isAlnum(s[i+1]):
			b.WriteByte(c) // inside a word: never emphasis (snake_case)
			i++
		default:
			writeEscaped(b, c, inline)
			i++
		}
	}
}

// schemeEnds returns, for each byte of s, where the run of scheme
// characters (letters, digits, "+", ".", "-") that starts there ends.
func schemeEnds(s string) []int {
	ends := make([]int, len(s)+1)
	ends[len(s)] = len(s)
	for i := len(s) - 1; i >= 0; i-- {
		c := s[i]
		if isLetter(c) || isDigit(c) || c == '+' || c == '.' || c == '-' {
			ends[i] = ends[i+1]
		} else {
			ends[i] = i
		}
	}
	return ends
}

// startsAddress reports whether an address GitHub would link starts at
// s[i], a letter: a scheme and "://", or "www.".
func startsAddress(s string, i int, ends []int) bool {
	return strings.HasPrefix(s[ends[i]:], "://") || (len(s) >= i+4 && strings.EqualFold(s[i:i+4], "www."))
}

// writeLineStart escapes what would open a block construct at the start of
// s ("#", "-", "+", "*", "=", "_", "~", "1." ...) and returns how many
// bytes of s it wrote.
func writeLineStart(b *strings.Builder, s string) int {
	if s == "" {
		return 0
	}
	switch s[0] {
	case '#', '-', '+', '*', '=', '_', '~':
		b.WriteString(`\` + s[:1])
		return 1
	}
	n := 0
	for n < len(s) && n < 10 && isDigit(s[n]) {
		n++
	}
	if n > 0 && n < len(s) && (s[n] == '.' || s[n] == ')') {
		b.WriteString(s[:n] + `\` + s[n:n+1])
		return n + 1
	}
	return 0
}

// writeEscaped writes one byte of text, escaped when markdown or HTML
// would read it.
func writeEscaped(b *strings.Builder, c byte, inline bool) {
	switch c {
	case '<':
		b.WriteString("&lt;")
	case '>':
		b.WriteString("&gt;")
	case '&':
		b.WriteString("&amp;")
	case '\\', ']', '|', '$', '`':
		b.WriteByte('\\')
		b.WriteByte(c)
	case '*', '_', '~':
		if inline {
			b.WriteByte('\\')
		}
		b.WriteByte(c)
	default:
		b.WriteByte(c)
	}
}

// codeSpan writes the code span that opens at s[i]: as a code span when it
// closes on the line and holds nothing GitHub would act on, as text
// between escaped backticks when it holds "<", ">", "@" or "|", and as
// escaped backticks when it does not close. It returns where to go on.
func (tp Policy) codeSpan(b *strings.Builder, s string, i int, inline bool) int {
	n := 0
	for i+n < len(s) && s[i+n] == '`' {
		n++
	}
	fence := s[i : i+n]
	for j := i + n; j < len(s); {
		if s[j] != '`' {
			j++
			continue
		}
		m := 0
		for j+m < len(s) && s[j+m] == '`' {
			m++
		}
		if m != n {
			j += m
			continue
		}
		content := s[i+n : j]
		if !strings.ContainsAny(content, "<>@|") {
			b.WriteString(fence + content + fence)
			return j + n
		}
		escaped := strings.Repeat("\\`", n)
		b.WriteString(escaped)
		tp.text(b, content, inline, false)
		b.WriteString(escaped)
		return j + n
	}
	b.WriteString(strings.Repeat("\\`", n))
	return i + n
}

// link handles a markdown link or image at s[i]: into the repository it is
// written as a link, elsewhere as its text and its address in code. ok is
// false when s[i] does not start a link "[text](address)" with plain text
// and an address of urlChars.
func (tp Policy) link(b *strings.Builder, s string, i int) (next int, ok bool) {
	image := s[i] == '!'
	open := i
	if image {
		open++
	}
	closeText := strings.IndexAny(s[open+1:], "[]")
	if closeText < 0 || s[open+1+closeText] != ']' {
		return 0, false
	}
	label := s[open+1 : open+1+closeText]
	rest := s[open+2+closeText:]
	if !strings.HasPrefix(rest, "(") {
		return 0, false
	}
	end := strings.IndexByte(rest, ')')
	if end < 2 {
		return 0, false
	}
	dest := rest[1:end]
	if urlLen(dest) != len(dest) {
		return 0, false
	}
	next = open + 2 + closeText + end + 1
	var t strings.Builder
	tp.line(&t, text.OneLine(label), true, false)
	if tp.allows(dest) {
		if image {
			b.WriteByte('!')
		}
		b.WriteString("[" + t.String() + "](" + strings.ReplaceAll(dest, "&", "&amp;") + ")")
		return next, true
	}
	if t.Len() > 0 {
		b.WriteString(t.String() + " (")
		writeCode(b, dest)
		b.WriteString(")")
	} else {
		writeCode(b, dest)
	}
	return next, true
}

// LinkAllowed reports whether text that a model or a pull request's
// author wrote may link to dest where the pull request at pullURL is
// shown: only addresses into the pull request's own repository, as in the
// comments MergeGuard posts (see Policy).
func LinkAllowed(pullURL, dest string) bool { return NewPolicy(pullURL).allows(dest) }

// allows reports whether an address points into the repository.
func (tp Policy) allows(dest string) bool {
	if tp.repo == nil {
		return false
	}
	u, err := url.Parse(dest)
	if err != nil || u.User != nil || !strings.EqualFold(u.Scheme, tp.repo.Scheme) || !strings.EqualFold(u.Host, tp.repo.Host) {
		return false
	}
	raw := strings.ToLower(u.EscapedPath())
	if strings.Contains(raw, "..") || strings.Contains(raw, "%2e") || strings.Contains(raw, "%2f") || strings.Contains(raw, "%5c") {
		return false
	}
	p := path.Clean(u.Path) + "/"
	return strings.HasPrefix(strings.ToLower(p), strings.ToLower(tp.repo.Path))
}

// urlLen returns how many bytes at the start of s are urlChars.
func urlLen(s string) int {
	for i := 0; i < len(s); i++ {
		if !strings.ContainsRune(urlChars, rune(s[i])) {
			return i
		}
	}
	return len(s)
}

// writeCode writes s, which holds no backtick, as a code span.
func writeCode(b *strings.Builder, s string) {
	b.WriteString("`" + s + "`")
}

// codeText renders s (a path, an agent's name) as a code span on one line.
func codeText(s string) string {
	s = text.OneLine(cleanText(s))
	if s == "" {
		return "` `"
	}
	fence := strings.Repeat("`", longestRun(s)+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return fence + s + fence
}

// longestRun returns the longest run of backticks in s.
func longestRun(s string) int {
	longest, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == '`' {
			run++
			longest = max(longest, run)
			continue
		}
		run = 0
	}
	return longest
}

func isLetter(c byte) bool   { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isDigit(c byte) bool    { return c >= '0' && c <= '9' }
func isAlnum(c byte) bool    { return isLetter(c) || isDigit(c) }
func isNameByte(c byte) bool { return isLetter(c) || isDigit(c) || c == '-' || c == '_' }
