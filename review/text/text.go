// Package text holds the small text helpers every layer shares, one of
// each: review/, review/lifecycle, github/ and server/ import it (it is
// under review/ because review/lifecycle may import nothing else).
package text

import "strings"

// OneLine joins the words of s with single spaces: newlines, tabs and runs
// of spaces become one space, and the ends are trimmed.
func OneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// Clip cuts s to at most n runes, the last of them "…" when it cut; n
// below 1 is taken as 1.
func Clip(s string, n int) string {
	n = max(n, 1)
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// ShortSHA is a commit's abbreviated SHA as GitHub shows it: its first 7
// characters.
func ShortSHA(sha string) string { return sha[:min(len(sha), 7)] }
