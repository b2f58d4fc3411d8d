// Package mdscan follows markdown text line by line: the fenced code blocks
// and HTML comments a line is in. Comment commands (github/hook) skip
// what is inside them; rendered text (github) closes what a model left open.
package mdscan

import "strings"

// Lines follows, line by line, the fenced code block or HTML comment a
// comment's text is in.
type Lines struct {
	Fence     string // the open fence, "" outside code
	InComment bool   // inside an HTML comment that spans lines
}

// Next reads one line: it returns the line without its HTML comments
// (outside code) and whether the line opens or closes a fence.
func (m *Lines) Next(line string) (string, bool) {
	if m.Fence == "" {
		line, m.InComment = visible(line, m.InComment)
	}
	trimmed := strings.TrimSpace(line)
	f := Fence(trimmed)
	if f == "" {
		return line, false
	}
	switch {
	case m.Fence == "":
		m.Fence = f
	case strings.HasPrefix(f, m.Fence) && strings.TrimLeft(trimmed, f[:1]) == "":
		m.Fence = "" // a closing fence: at least as long, nothing after it
	}
	return line, true
}

// Fence returns the fence a line opens or closes (three or more
// backticks or tildes), or "".
func Fence(line string) string {
	for _, ch := range []string{"`", "~"} {
		n := len(line) - len(strings.TrimLeft(line, ch))
		if n >= 3 {
			return line[:n]
		}
	}
	return ""
}

// visible returns the part of line outside HTML comments, given whether
// the line starts inside one, and whether the next line does. Text after
// "-->" or before "<!--" on a line is kept.
func visible(line string, inComment bool) (string, bool) {
	if !inComment && !strings.Contains(line, "<!--") {
		return line, false
	}
	var kept strings.Builder
	for line != "" {
		if inComment {
			_, after, closed := strings.Cut(line, "-->")
			if !closed {
				return kept.String(), true
			}
			line, inComment = after, false
			continue
		}
		before, after, opened := strings.Cut(line, "<!--")
		kept.WriteString(before)
		if !opened {
			break
		}
		// The text kept before and after the comment stays apart.
		kept.WriteByte(' ')
		line, inComment = after, true
	}
	return kept.String(), inComment
}
