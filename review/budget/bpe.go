package budget

import (
	"context"
	"math"
	"unicode/utf8"
)

// maxMergeBytes bounds the pieces (the pre-tokens the split pattern cuts a
// text into) handed whole to the byte-pair merge, whose time grows with
// the square of a piece's length. Real text has no longer pieces: the
// longest in this repository and the fixtures' diffs is a 285-byte rule of
// a markdown table (TestCountMatchesTiktoken). A longer piece is merged in
// parts of partBytes, cut between runes, in linear time (a 1 MB piece in
// 0.1 to 0.2 s); as no token spans two parts, its count is a little high:
// from the exact count to a token per part more on every long piece tried
// (TestCountLongPieces).
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
		n     int
		piece []byte
		parts [][2]int
	)
	for i, k := 0, 0; i < len(runes); k++ {
		if k%checkEvery == 0 {
			if err := ctx.Err(); err != nil {
				return n, err
			}
		}
		end := e.next(runes, i)
		piece = piece[:0]
		for _, r := range runes[i:end] {
			piece = utf8.AppendRune(piece, r)
		}
		n += e.countPiece(piece, &parts)
		i = end
	}
	return n, nil
}

// countPiece counts the tokens of one piece; parts is scratch space.
func (e *encoding) countPiece(piece []byte, parts *[][2]int) int {
	if len(piece) <= maxMergeBytes {
		if _, ok := e.ranks[string(piece)]; ok {
			return 1
		}
		return mergeCount(piece, e.ranks, &e.pairs, parts)
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
			n += mergeCount(piece[:k], e.ranks, &e.pairs, parts)
		}
		piece = piece[k:]
	}
	return n
}

// mergeCount returns how many tokens the byte-pair merge of piece gives:
// tiktoken's algorithm (tiktoken-go v0.1.8's bytePairMerge), counting
// only. Each step merges the adjacent pair of lowest rank, the leftmost
// on ties, until no pair is a token. pairs holds the ranks of the two-byte
// tokens (the first merges, looked up without the map); parts is scratch
// space.
func mergeCount(piece []byte, ranks map[string]int, pairs *[1 << 16]int32, buf *[][2]int) int {
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
	for i := 0; i+1 < len(piece); i++ {
		if r := pairs[int(piece[i])<<8|int(piece[i+1])]; r >= 0 {
			parts[i][1] = int(r)
		}
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
