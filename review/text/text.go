// Package text holds the small text helpers every layer shares, one of
// each: review/, review/lifecycle, github/ and server/ import it (it is
// under review/ because review/lifecycle may import nothing else).
package text

import (
	"strings"
	"unicode/utf8"
)

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

// PrefixBytes is at most the first n bytes of s, never splitting a rune:
// for limits counted in bytes.
func PrefixBytes(s string, n int) string {
	if n >= len(s) {
		return s
	}
	n = max(n, 0)
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// ClipBytes cuts s to at most n bytes (PrefixBytes), then "…" when it cut.
func ClipBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return PrefixBytes(s, n) + "…"
}
