package budget

import (
	"bytes"
	"context"
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
	sp, err := e.count(ctx, text, nil)
	return sp.Total(), err
}

// CountSplit implements SplitCounter.
func (e *encoding) CountSplit(ctx context.Context, text string) (Split, error) {
	return e.count(ctx, text, nil)
}

// CountLines implements LineCounter: one pass over text, each piece's
// tokens going to the line the piece starts on.
func (e *encoding) CountLines(ctx context.Context, text string) (int, []int, error) {
	sp, lines, err := e.CountSplitLines(ctx, text)
	return sp.Total(), totals(lines), err
}

// CountSplitLines implements SplitCounter: CountLines, split.
func (e *encoding) CountSplitLines(ctx context.Context, text string) (Split, []Split, error) {
	lines := make([]Split, lineCount(text))
	sp, err := e.count(ctx, text, lines)
	return sp, lines, err
}

// count counts the tokens of text, adding each piece's to lines (indexed
// as splitLines numbers the lines) unless lines is nil. A piece is ASCII
// when its runes are: then it has as many bytes as runes.
func (e *encoding) count(ctx context.Context, text string, lines []Split) (Split, error) {
	e.once.Do(e.load)
	if e.err != nil {
		return byteSplit(text, lines), ctx.Err()
	}
	// As in tiktoken-go, each invalid UTF-8 byte becomes U+FFFD (so does
	// the JSON of a request).
	runes := []rune(text)
	var (
		n     Split
		line  int
		piece []byte
		s     scratch
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
		t := pieceSplit(e.countPiece(piece, &s), len(piece), end-i)
		n = n.Add(t)
		if lines != nil {
			l := &lines[min(line, len(lines)-1)]
			*l = l.Add(t)
			line += bytes.Count(piece, newline)
		}
		i = end
	}
	return n, nil
}

// pieceSplit is the Split of one piece of tokens tokens, bytes bytes and
// runes runes.
func pieceSplit(tokens, bytes, runes int) Split {
	if bytes == runes {
		return Split{ASCII: tokens}
	}
	return Split{Other: tokens, OtherBytes: bytes}
}

// byteSplit counts a token per byte, a sure upper bound, adding a line's
// bytes and its newline to lines unless lines is nil: the count of an
// encoding whose vocabulary failed to load.
func byteSplit(text string, lines []Split) Split {
	if lines != nil {
		for i, l := range splitLines(text) {
			lines[i] = Split{ASCII: len(l) + 1}
		}
	}
	return Split{ASCII: len(text)}
}

var newline = []byte{'\n'}

// countPiece counts the tokens of one piece; s is scratch space.
func (e *encoding) countPiece(piece []byte, s *scratch) int {
	if len(piece) <= maxMergeBytes {
		if e.v.rank(piece) != noRank {
			return 1
		}
		return mergeCount(piece, e.v, s)
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
		if e.v.rank(piece[:k]) != noRank {
			n++
		} else {
			n += mergeCount(piece[:k], e.v, s)
		}
		piece = piece[k:]
	}
	return n
}

// mergeCount returns how many tokens the byte-pair merge of piece gives:
// tiktoken's algorithm (tiktoken-go v0.1.8's bytePairMerge), counting
// only. Each step merges the adjacent pair of lowest rank, the leftmost
// on ties, until no pair is a token. Instead of scanning every pair at
// each step (quadratic), the candidate pairs wait in a min-heap ordered by
// rank then position, and a pair whose parts changed since it was pushed
// is skipped when popped: a pair's rank names its bytes, so a pair still
// starting where it did with the same rank is the same pair. s is
// scratch space.
func mergeCount(piece []byte, v *vocab, s *scratch) int {
	n := len(piece)
	if n < 2 {
		return n
	}
	s.reset(n)
	// next[i] is where the part starting at i ends (-1 once it is merged
	// into the part before); rank[i] the rank of merging it with the next.
	next, rank := s.next, s.rank
	for i := range n {
		next[i], rank[i] = int32(i+1), noRank //nolint:gosec // i < maxMergeBytes
		if i+1 < n {
			rank[i] = v.pairs[int(piece[i])<<8|int(piece[i+1])]
			s.push(i, rank[i])
		}
	}
	count := n
	for len(s.heap) > 0 {
		i, r := s.pop()
		if next[i] < 0 || rank[i] != r {
			continue // stale: that pair is gone
		}
		j := int(next[i])
		next[i], next[j] = next[j], -1
		count--
		if e := int(next[i]); e < n {
			rank[i] = v.rank(piece[i:next[e]])
			s.push(i, rank[i])
		} else {
			rank[i] = noRank
		}
		if p := s.prev(i); p >= 0 {
			rank[p] = v.rank(piece[p:next[i]])
			s.push(p, rank[p])
		}
	}
	return count
}

// scratch is the reusable memory of mergeCount.
type scratch struct {
	next, rank []int32
	heap       []uint64 // rank<<32 | position, a min-heap
}

func (s *scratch) reset(n int) {
	if cap(s.next) < n {
		s.next, s.rank = make([]int32, n), make([]int32, n)
	}
	s.next, s.rank, s.heap = s.next[:n], s.rank[:n], s.heap[:0]
}

// prev returns the start of the part before the one starting at i, or -1.
// Merged parts are skipped backwards; parts are short, so this is cheap.
func (s *scratch) prev(i int) int {
	for p := i - 1; p >= 0; p-- {
		if s.next[p] >= 0 {
			return p
		}
	}
	return -1
}

// push adds the pair at position i of rank r, unless it is not a token.
func (s *scratch) push(i int, r int32) {
	if r == noRank {
		return
	}
	h := append(s.heap, uint64(r)<<32|uint64(i)) //nolint:gosec // both are non-negative
	for k := len(h) - 1; k > 0; {
		up := (k - 1) / 2
		if h[up] <= h[k] {
			break
		}
		h[up], h[k] = h[k], h[up]
		k = up
	}
	s.heap = h
}

// pop removes the pair of lowest rank, the leftmost on ties.
func (s *scratch) pop() (int, int32) {
	h := s.heap
	top := h[0]
	last := len(h) - 1
	h[0] = h[last]
	h = h[:last]
	for k := 0; ; {
		c := 2*k + 1
		if c >= len(h) {
			break
		}
		if c+1 < len(h) && h[c+1] < h[c] {
			c++
		}
		if h[k] <= h[c] {
			break
		}
		h[k], h[c] = h[c], h[k]
		k = c
	}
	s.heap = h
	return int(top & 0xffffffff), int32(top >> 32) //nolint:gosec // as pushed
}
