// Package memory is MergeGuard's memory of dismissals (docs/quality.md):
// before a review is posted, each of its new findings is compared with the
// findings writers dismissed in the same repository, and one similar to
// enough of them is not posted but recorded as suppressed, with the
// dismissals it matched. The similarity is deterministic: the normalised
// words of a finding's title, description and cited code, shingled, and
// compared by Jaccard. It is pure: the store reads the dismissals, the
// lifecycle hands them here.
package memory

import (
	"hash/fnv"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mergeguard/mergeguard/review"
)

// Threshold is the similarity at or above which two findings are the
// same pattern. It was chosen by measurement (TestStream, docs/quality.md):
// rewordings of one nit with other identifiers and line numbers score
// above it, distinct findings below.
const Threshold = 0.18

// maxFieldBytes bounds what is read of each field of a finding: the model
// writes them, so they are untrusted and unbounded.
const maxFieldBytes = 4 << 10

// codeWeight is the share of the cited code in the similarity of two
// findings that both cite code; the title and description carry the rest.
const codeWeight = 0.2

// Signature is what a finding is compared by: its category and the
// shingles of its normalised text and code, sorted and without repeats.
type Signature struct {
	category review.Category
	// rule is the check of an analyzer or linter that reported it.
	rule string
	text []uint64
	code []uint64
}

// Sign computes the signature of f.
func Sign(f review.Finding) Signature {
	words := append(Words(f.Title), Words(f.Description)...)
	return Signature{category: f.Category, rule: f.Rule, text: shingles(words), code: shingles(Words(f.CodeSnippet))}
}

// Similarity is how alike two signatures are, from 0 to 1: 0 for findings
// of different categories or of two different rules of a tool, else the
// Jaccard index of their text shingles, with their code's weighing
// codeWeight when both cite code.
func Similarity(a, b Signature) float64 {
	if a.category != b.category || (a.rule != "" && b.rule != "" && a.rule != b.rule) {
		return 0
	}
	text := jaccard(a.text, b.text)
	if len(a.code) == 0 || len(b.code) == 0 {
		return text
	}
	return (1-codeWeight)*text + codeWeight*jaccard(a.code, b.code)
}

// stopWord reports whether w is too common in findings to tell two apart.
func stopWord(w string) bool {
	switch w {
	case "a", "an", "the", "is", "are", "be", "of", "to", "in", "on", "at", "for", "and", "or", "it",
		"its", "this", "that", "with", "as", "by", "which", "can", "could", "should", "may", "here",
		"there", "was", "were":
		return true
	}
	return false
}

// placeholder stands for an identifier-like word: names vary between
// occurrences of one pattern, the pattern does not.
const placeholder = "_id"

// Words are the normalised words of s: runs of letters, digits and
// underscores, lowercased; numbers dropped; identifiers (a word with an
// underscore, a digit or an upper-case letter after a lower-case one)
// replaced by one placeholder; stop words dropped; a plural's s trimmed.
func Words(s string) []string {
	if len(s) > maxFieldBytes {
		s = s[:maxFieldBytes]
	}
	s = strings.ToValidUTF8(s, " ")
	var out []string
	for w := range strings.FieldsFuncSeq(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' }) {
		switch {
		case strings.IndexFunc(w, unicode.IsLetter) < 0:
			continue // a number, a line number
		case identifierLike(w):
			out = append(out, placeholder)
			continue
		}
		w = strings.ToLower(w)
		if stopWord(w) {
			continue
		}
		if len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") {
			w = w[:len(w)-1]
		}
		out = append(out, w)
	}
	return out
}

// identifierLike reports whether w looks like a name in code rather than a
// word: snake_case, camelCase, or with a digit.
func identifierLike(w string) bool {
	if strings.ContainsAny(w, "_0123456789") {
		return true
	}
	prevLower := false
	for _, r := range w {
		if unicode.IsUpper(r) && prevLower {
			return true
		}
		prevLower = unicode.IsLower(r)
	}
	return false
}

// shingles are the hashes of the words' unigrams and bigrams and of the
// character trigrams of each word, sorted and without repeats: unigrams
// and trigrams see the same idea in other words or forms, bigrams its
// phrasing.
func shingles(words []string) []uint64 {
	var out []uint64
	for i, w := range words {
		out = append(out, hash("w", w))
		if i > 0 {
			out = append(out, hash("b", words[i-1]+" "+w))
		}
		if w == placeholder || utf8.RuneCountInString(w) < 4 {
			continue
		}
		r := []rune(w)
		for j := 0; j+3 <= len(r); j++ {
			out = append(out, hash("c", string(r[j:j+3])))
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// hash is the 64-bit FNV-1a hash of a shingle of one kind.
func hash(kind, s string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(kind + "\x00" + s)) // a hash.Hash's Write never returns an error
	return h.Sum64()
}

// jaccard is |a ∩ b| / |a ∪ b| of two sorted sets; 0 when both are empty.
func jaccard(a, b []uint64) float64 {
	if len(a) == 0 && len(b) == 0 {
		return 0
	}
	common, i, j := 0, 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] == b[j]:
			common++
			i++
			j++
		case a[i] < b[j]:
			i++
		default:
			j++
		}
	}
	return float64(common) / float64(len(a)+len(b)-common)
}
