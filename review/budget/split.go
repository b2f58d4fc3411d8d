package budget

import "unicode"

// The encodings' split patterns, as in OpenAI's tiktoken (and tiktoken-go
// v0.1.8, whose backtracking engine, regexp2, took most of the counting
// time), are matched by hand below, alternative by alternative in the
// patterns' order and with their backtracking, on runes:
//
// o200k_base:
//
//	[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//	|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//	|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+
//
// cl100k_base:
//
//	(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//
// Every rune is matched by one alternative or another, so the pieces
// follow each other without gaps. TestSplitMatchesPattern compares the
// pieces with regexp2's matches of the patterns.

// o200kNext returns the end of the piece of o200k_base starting at rs[i].
func o200kNext(rs []rune, i int) int {
	if e := upperThenLower(rs, i); e > i {
		return e
	}
	if e := upperRun(rs, i); e > i {
		return e
	}
	return otherNext(rs, i, true)
}

// cl100kNext returns the end of the piece of cl100k_base starting at rs[i].
func cl100kNext(rs []rune, i int) int {
	if e := contraction(rs, i); e > i {
		return e
	}
	for _, p := range prefixed(rs, i) {
		if p < 0 {
			break
		}
		if e := p; e < len(rs) && unicode.IsLetter(rs[e]) {
			for e < len(rs) && unicode.IsLetter(rs[e]) {
				e++
			}
			return e
		}
	}
	return otherNext(rs, i, false)
}

// otherNext matches the alternatives after the letters': numbers,
// punctuation, white space. slash is o200k_base's [\r\n/]* after
// punctuation instead of [\r\n]*.
func otherNext(rs []rune, i int, slash bool) int {
	if unicode.IsNumber(rs[i]) {
		e := i + 1
		for e < len(rs) && e < i+3 && unicode.IsNumber(rs[e]) {
			e++
		}
		return e
	}
	p := i
	if rs[i] == ' ' && i+1 < len(rs) && isPunct(rs[i+1]) {
		p = i + 1
	}
	if isPunct(rs[p]) {
		e := p + 1
		for e < len(rs) && isPunct(rs[e]) {
			e++
		}
		for e < len(rs) && (rs[e] == '\r' || rs[e] == '\n' || slash && rs[e] == '/') {
			e++
		}
		return e
	}
	return spaceNext(rs, i)
}

// spaceNext matches \s*[\r\n]+|\s+(?!\S)|\s+ at rs[i], a space.
func spaceNext(rs []rune, i int) int {
	w := i
	for w < len(rs) && unicode.IsSpace(rs[w]) {
		w++
	}
	for s := w - 1; s >= i; s-- {
		if rs[s] == '\r' || rs[s] == '\n' {
			return s + 1 // \s* gave back the spaces after the last line break
		}
	}
	switch {
	case w == i:
		return i + 1 // unreachable: every rune is a letter, number, punctuation or space
	case w == len(rs) || w-1 == i:
		return w
	}
	return w - 1 // \s+(?!\S) leaves the last space to the next piece
}

// upperThenLower matches o200k_base's first alternative:
// [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+ and a contraction.
// It returns i when it does not match.
func upperThenLower(rs []rune, i int) int {
	for _, p := range prefixed(rs, i) {
		if p < 0 {
			break
		}
		q := p
		for q < len(rs) && isUpper(rs[q]) {
			q++
		}
		// The first split of the greedy upper run after which a lower
		// rune follows.
		for s := q; s >= p; s-- {
			if s < len(rs) && isLower(rs[s]) {
				e := s + 1
				for e < len(rs) && isLower(rs[e]) {
					e++
				}
				return max(contraction(rs, e), e)
			}
		}
	}
	return i
}

// upperRun matches o200k_base's second alternative:
// [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]* and a contraction.
// It returns i when it does not match.
func upperRun(rs []rune, i int) int {
	for _, p := range prefixed(rs, i) {
		if p < 0 {
			break
		}
		e := p
		for e < len(rs) && isUpper(rs[e]) {
			e++
		}
		if e == p {
			continue
		}
		for e < len(rs) && isLower(rs[e]) {
			e++
		}
		return max(contraction(rs, e), e)
	}
	return i
}

// prefixed returns where the letters may start after the optional
// [^\r\n\p{L}\p{N}] at rs[i]: after it first, at i second; -1 ends the
// list.
func prefixed(rs []rune, i int) [2]int {
	if r := rs[i]; r != '\r' && r != '\n' && !unicode.IsLetter(r) && !unicode.IsNumber(r) && i+1 < len(rs) {
		return [2]int{i + 1, i}
	}
	return [2]int{i, -1}
}

// contraction matches (?i:'s|'t|'re|'ve|'m|'ll|'d) at rs[i], returning its
// end, or i.
func contraction(rs []rune, i int) int {
	if i+1 >= len(rs) || rs[i] != '\'' {
		return i
	}
	switch unicode.ToLower(rs[i+1]) {
	case 's', 't', 'm', 'd':
		return i + 2
	case 'r', 'v':
		if i+2 < len(rs) && unicode.ToLower(rs[i+2]) == 'e' {
			return i + 3
		}
	case 'l':
		if i+2 < len(rs) && unicode.ToLower(rs[i+2]) == 'l' {
			return i + 3
		}
	}
	return i
}

// isUpper is [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}].
func isUpper(r rune) bool {
	if r < 0x80 {
		return 'A' <= r && r <= 'Z'
	}
	return unicode.In(r, unicode.Lu, unicode.Lt, unicode.Lm, unicode.Lo, unicode.M)
}

// isLower is [\p{Ll}\p{Lm}\p{Lo}\p{M}].
func isLower(r rune) bool {
	if r < 0x80 {
		return 'a' <= r && r <= 'z'
	}
	return unicode.In(r, unicode.Ll, unicode.Lm, unicode.Lo, unicode.M)
}

// isPunct is [^\s\p{L}\p{N}].
func isPunct(r rune) bool {
	return !unicode.IsSpace(r) && !unicode.IsLetter(r) && !unicode.IsNumber(r)
}
