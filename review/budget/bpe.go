package budget

import (
	"context"
	"math"
	"unicode/utf8"
)

// maxMergeBytes bounds the pre-tokens (the pieces the split pattern cuts a
// text into) handed whole to the byte-pair merge, whose time grows with
// the square of a piece's length: a longer piece is merged in parts of at
// most maxMergeBytes bytes, cut between runes. A part ends the tokens it
// holds (no token spans two parts), so the count of a long piece is at
// least its exact count on every text we tried (TestCountLongPieces) and
// at most a token per part higher. 512 bytes keeps the merge under ~0.2 µs
// a byte (a 1 MB piece in about 100 ms) and is far above the pieces of real
// text: the longest in this repository and its fixtures is 128 bytes.
const maxMergeBytes = 512

// partBytes is the size of the parts a longer piece is merged in.
const partBytes = 128

// checkEvery is how many pieces CountContext counts between looks at ctx.
const checkEvery = 1024

// Count returns the number of tokens of text, counting special tokens such
// as <|endoftext|> as ordinary text. The count is tiktoken's unless a
// piece is longer than maxMergeBytes; it is then a little higher. Should
// the embedded vocabulary fail to load, which only a broken build can
// cause, it counts a token per byte, a sure upper bound.
func (e *encoding) Count(text string) int {
	n, _ := e.CountContext(context.Background(), text)
	return n
}

// CountContext is Count, stopping with ctx's error when ctx is done.
func (e *encoding) CountContext(ctx context.Context, text string) (int, error) {
	e.once.Do(e.load)
	if e.err != nil {
		return len(text), ctx.Err()
	}
	// As in tiktoken-go, each invalid UTF-8 byte becomes U+FFFD (so does
	// the JSON of a request).
	runes := []rune(text)
	var (
		n, end int
		piece  []byte
		parts  [][2]int
	)
	m, err := e.split.FindRunesMatch(runes)
	for i := 0; m != nil; i++ {
		if i%checkEvery == 0 {
			if err := ctx.Err(); err != nil {
				return n, err
			}
		}
		piece = piece[:0]
		for _, r := range runes[m.Index : m.Index+m.Length] {
			piece = utf8.AppendRune(piece, r)
		}
		n += e.countPiece(piece, &parts)
		end = m.Index + m.Length
		m, err = e.split.FindNextMatch(m)
	}
	if err != nil {
		// Only a match timeout fails a match, and none is set: count the
		// rest as a token per byte all the same.
		n += len(string(runes[end:]))
	}
	return n, nil
}

// countPiece counts the tokens of one piece; parts is scratch space.
func (e *encoding) countPiece(piece []byte, parts *[][2]int) int {
	if len(piece) <= maxMergeBytes {
		if _, ok := e.ranks[string(piece)]; ok {
			return 1
		}
		return mergeCount(piece, e.ranks, parts)
	}
	n := 0
	for len(piece) > 0 {
		k := len(piece)
		if k > partBytes {
			k = partBytes
			for k > 1 && !utf8.RuneStart(piece[k]) {
				k--
			}
		}
		if _, ok := e.ranks[string(piece[:k])]; ok {
			n++
		} else {
			n += mergeCount(piece[:k], e.ranks, parts)
		}
		piece = piece[k:]
	}
	return n
}

// mergeCount returns how many tokens the byte-pair merge of piece gives:
// tiktoken's algorithm (tiktoken-go v0.1.8's bytePairMerge), counting
// only. Each step merges the adjacent pair of lowest rank, the leftmost
// on ties, until no pair is a token. parts is scratch space.
func mergeCount(piece []byte, ranks map[string]int, buf *[][2]int) int {
	// parts[i] is the start of part i and the rank of merging it with part
	// i+1; the last entry marks the end of the piece.
	parts := (*buf)[:0]
	for i := 0; i <= len(piece); i++ {
		parts = append(parts, [2]int{i, math.MaxInt})
	}
	rank := func(i, skip int) int {
		if i+skip+2 < len(parts) {
			if r, ok := ranks[string(piece[parts[i][0]:parts[i+skip+2][0]])]; ok {
				return r
			}
		}
		return math.MaxInt
	}
	for i := 0; i < len(parts)-2; i++ {
		parts[i][1] = rank(i, 0)
	}
	for len(parts) > 1 {
		low, at := math.MaxInt, -1
		for i := 0; i < len(parts)-1; i++ {
			if parts[i][1] < low {
				low, at = parts[i][1], i
			}
		}
		if at < 0 {
			break
		}
		parts[at][1] = rank(at, 1)
		if at > 0 {
			parts[at-1][1] = rank(at-1, 1)
		}
		parts = append(parts[:at+1], parts[at+2:]...)
	}
	*buf = parts
	return len(parts) - 1
}
