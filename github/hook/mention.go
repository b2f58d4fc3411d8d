package hook

import (
	"strings"
)

// Mentions reports whether a comment mentions the account login (a
// bot's "<slug>[bot]" is mentioned as "@<slug>", or "@<slug>[bot]"), in
// any case, in its author's own prose: a mention in a code span or block,
// a quoted line or an HTML comment does not count (as for ParseCommand),
// nor does one that is part of an e-mail address, a longer login or a
// team ("@org/team").
func Mentions(body, login string) bool {
	name := strings.ToLower(strings.TrimSuffix(login, "[bot]"))
	if name == "" {
		return false
	}
	for line := range proseLines(body) {
		if mentionedIn(strings.ToLower(withoutCodeSpans(line)), "@"+name) {
			return true
		}
	}
	return false
}

// mentionedIn reports whether at ("@name", lower case) stands as a
// mention in line (lower case).
func mentionedIn(line, at string) bool {
	for i := 0; ; {
		j := strings.Index(line[i:], at)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(at)
		before := start == 0 || !loginByte(line[start-1]) && !strings.ContainsRune("_@./`", rune(line[start-1]))
		after := end == len(line) || !loginByte(line[end]) && line[end] != '/'
		if before && after {
			return true
		}
		i = start + 1
	}
}

// loginByte reports whether c may be part of a GitHub login.
func loginByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-'
}

// withoutCodeSpans returns line without its code spans: text between a
// run of backticks and the next run of the same length. An unclosed run
// is kept as text.
func withoutCodeSpans(line string) string {
	var kept strings.Builder
	for {
		open := strings.IndexByte(line, '`')
		if open < 0 {
			kept.WriteString(line)
			return kept.String()
		}
		n := len(line[open:]) - len(strings.TrimLeft(line[open:], "`"))
		end := closingRun(line[open+n:], n)
		if end < 0 {
			kept.WriteString(line[:open+n])
			line = line[open+n:]
			continue
		}
		kept.WriteString(line[:open])
		kept.WriteByte(' ')
		line = line[open+n+end+n:]
	}
}

// closingRun returns where the first run of exactly n backticks starts in
// s, -1 if none.
func closingRun(s string, n int) int {
	for i := 0; i < len(s); {
		if s[i] != '`' {
			i++
			continue
		}
		run := len(s[i:]) - len(strings.TrimLeft(s[i:], "`"))
		if run == n {
			return i
		}
		i += run
	}
	return -1
}
