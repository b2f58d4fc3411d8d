package budget

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/mergeguard/mergeguard/review"
)

// Radius is how many lines around a line of interest a cut keeps at most.
const Radius = 10

// Marker replaces the lines a cut removed.
const Marker = "..."

// Section is one part of a prompt, such as a file, a diff chunk or the
// repository's conventions.
type Section struct {
	// Name identifies the section in the truncation metadata.
	Name string
	// Text is the content. When it may be cut and line numbers matter,
	// number the lines before fitting: cuts keep each line whole.
	Text string
	// Priority orders sections: higher priorities are served first, equal
	// priorities share what is left.
	Priority int
	// Min is the fewest tokens worth keeping: a section that cannot get Min
	// tokens is dropped whole. A Min at least the section's size makes it
	// all or nothing (instructions, a hunk that must not be split).
	Min int
	// Interest lists the 1-based lines of Text to keep, with up to Radius
	// lines around each, when the section is cut. Without lines of
	// interest a cut keeps the section's head.
	Interest []int
}

// Fit cuts sections so that the sum of their token counts is at most
// budget. When everything fits, sections are returned unchanged. Otherwise
// each section first gets its Min (highest priority first; a section whose
// Min does not fit gets nothing), then priority by priority the rest is
// shared: sections needing no more than an equal share keep everything,
// larger ones share what remains in proportion to their size. A section
// given less than it needs is cut around its lines of interest (windows of
// lines around them, narrowed until it fits) or to its head.
// Dropped sections are left out of the result, which keeps the input order.
//
// Each text is counted once: with a LineCounter (the counters of
// Tokenizers) whole and line by line in the same pass, otherwise whole,
// then line by line when it must be cut. The candidate cuts are sized
// from the line counts and only texts about the size of the budget are
// counted again, so the time is linear in the size of the sections. Fit stops with ctx's error when ctx is done.
//
// The truncation metadata counts lines over all sections; a section is
// affected when it was cut or dropped.
func Fit(ctx context.Context, sections []Section, budget int, c Counter) ([]Section, review.Truncation, error) {
	need := make([]int, len(sections))
	lineToks := make([][]int, len(sections)) // nil until counted
	_, byLine := c.(LineCounter)
	total := 0
	tr := review.Truncation{SectionsAffected: []string{}}
	for i, s := range sections {
		var (
			n   int
			err error
		)
		if byLine {
			n, lineToks[i], err = CountLines(ctx, c, s.Text)
		} else {
			n, err = CountContext(ctx, c, s.Text)
		}
		if err != nil {
			return nil, review.Truncation{}, fmt.Errorf("count section %s: %w", s.Name, err)
		}
		need[i] = n
		total += n
		tr.OriginalLines += lineCount(s.Text)
	}
	if total <= budget {
		tr.KeptLines = tr.OriginalLines
		return slices.Clone(sections), tr, nil
	}

	alloc := allocate(sections, need, budget)
	out := make([]Section, 0, len(sections))
	for i, s := range sections {
		lines := splitLines(s.Text)
		if alloc[i] >= need[i] {
			out = append(out, s)
			tr.KeptLines += len(lines)
			continue
		}
		tr.Truncated = true
		tr.SectionsAffected = append(tr.SectionsAffected, s.Name)
		if alloc[i] <= 0 {
			continue
		}
		text, kept, err := cut(ctx, lines, lineToks[i], s.Interest, alloc[i], c)
		if err != nil {
			return nil, review.Truncation{}, fmt.Errorf("cut section %s: %w", s.Name, err)
		}
		if text == "" {
			continue
		}
		s.Text = text
		out = append(out, s)
		tr.KeptLines += kept
	}
	return out, tr, nil
}

// allocate shares budget between sections needing need tokens each.
func allocate(sections []Section, need []int, budget int) []int {
	order := make([]int, len(sections))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(sections[b].Priority, sections[a].Priority) })

	alloc := make([]int, len(sections))
	eligible := make([]bool, len(sections))
	left := max(budget, 0)
	for _, i := range order {
		if r := min(max(sections[i].Min, 0), need[i]); r <= left {
			alloc[i], eligible[i] = r, true
			left -= r
		}
	}
	for start := 0; start < len(order); {
		end := start
		for end < len(order) && sections[order[end]].Priority == sections[order[start]].Priority {
			end++
		}
		var tier []int
		for _, i := range order[start:end] {
			if eligible[i] && need[i] > alloc[i] {
				tier = append(tier, i)
			}
		}
		left -= share(tier, need, alloc, left)
		start = end
	}
	return alloc
}

// share gives the sections of a tier up to avail more tokens: those wanting
// no more than an equal share get all they want, the others share the rest
// in proportion to what they want. It returns how much it gave.
func share(tier []int, need, alloc []int, avail int) int {
	want := func(i int) int { return need[i] - alloc[i] }
	slices.SortStableFunc(tier, func(a, b int) int { return cmp.Compare(want(a), want(b)) })
	given := 0
	for len(tier) > 0 && want(tier[0]) <= (avail-given)/len(tier) {
		given += want(tier[0])
		alloc[tier[0]] = need[tier[0]]
		tier = tier[1:]
	}
	sum := 0
	for _, i := range tier {
		sum += want(i)
	}
	rest := avail - given
	for _, i := range tier {
		add := rest * want(i) / sum
		alloc[i] += add
		given += add
	}
	return given
}

// cut returns the longest text it finds of at most limit tokens made of
// lines: windows around interest, narrowed as needed, then the head of the
// narrowest, or the start of one line. It returns "" when nothing fits.
// toks are the lines' counts, or nil to count them here.
//
// Each line is counted once; a candidate's size is estimated as the sum of
// its lines' counts and a token per newline, and only candidates estimated
// at no more than four times the limit (plus a little) are counted for
// real: the estimate exceeds the real count, by up to four times when a
// counter rounds up per line, but not by more.
func cut(ctx context.Context, lines []string, toks, interest []int, limit int, c Counter) (string, int, error) {
	if toks == nil {
		var err error
		if toks, err = countLines(ctx, lines, c); err != nil {
			return "", 0, err
		}
	}
	f := fitter{ctx: ctx, c: c, limit: limit}
	markTok := c.Count(Marker)
	var ps []piece
	if len(interest) > 0 {
		// Windows narrower and narrower, then the head of the narrowest.
		for _, r := range []int{Radius, 5, 2, 0} {
			ps = windows(lines, toks, markTok, interest, r)
			ok, err := f.fits(join(ps), estimate(ps))
			if err != nil || ok {
				return join(ps), kept(ps), err
			}
		}
	} else {
		ps = make([]piece, len(lines))
		for i, l := range lines {
			ps[i] = piece{text: l, tokens: toks[i]}
		}
	}
	// The longest head of ps that fits with a closing marker.
	head := func(k int) []piece {
		h := slices.Clone(ps[:k])
		if k < len(ps) && (k == 0 || !h[k-1].marker) {
			h = append(h, piece{text: Marker, tokens: markTok, marker: true})
		}
		return h
	}
	// est[k] estimates head(k) with prefix sums of the pieces' counts.
	est := make([]int, len(ps)+1)
	for k := 1; k <= len(ps); k++ {
		est[k] = est[k-1] + ps[k-1].tokens + 1
	}
	guess, _ := slices.BinarySearch(est, limit-markTok+1)
	k, err := longest(len(ps), guess-1, 1, func(k int) (bool, error) {
		h := head(k)
		return f.fits(join(h), estimate(h))
	})
	if err != nil {
		return "", 0, err
	}
	if h := head(k); k > 0 && kept(h) > 0 {
		return join(h), kept(h), nil
	}
	// Not one whole line fits: keep the start of the first kept line.
	first := 0
	for first < len(ps) && ps[first].marker {
		first++
	}
	if first < len(ps) {
		part, err := f.prefix(ps[first].text, ps[first].tokens)
		if part != "" || err != nil {
			return part, 1, err
		}
	}
	return "", 0, nil
}

// countLines counts each line.
func countLines(ctx context.Context, lines []string, c Counter) ([]int, error) {
	toks := make([]int, len(lines))
	for i, l := range lines {
		n, err := CountContext(ctx, c, l)
		if err != nil {
			return nil, err
		}
		toks[i] = n
	}
	return toks, nil
}

// fitter checks candidate texts against a limit.
type fitter struct {
	ctx   context.Context
	c     Counter
	limit int
}

// fits reports whether text, estimated at est tokens, is at most f.limit
// tokens. A text estimated at more than four times the limit is not
// counted, so that no text much larger than the budget is counted again.
func (f fitter) fits(text string, est int) (bool, error) {
	if est > 4*f.limit+16 {
		return false, nil
	}
	n, err := CountContext(f.ctx, f.c, text)
	return n <= f.limit, err
}

// prefix returns the longest prefix of line, of toks tokens, that fits in
// the limit together with a trailing marker, cut on a rune boundary, or "".
func (f fitter) prefix(line string, toks int) (string, error) {
	with := func(n int) string { return line[:n] + " " + Marker }
	fits := func(n int) (bool, error) {
		for n > 0 && !isRuneStart(line, n) {
			n--
		}
		return f.fits(with(n), 0)
	}
	// Guess from the line's density of tokens; start from steps of 1/64th.
	guess := len(line) * f.limit / max(toks, 1)
	n, err := longest(len(line), guess, max(guess/64, 1), fits)
	for n > 0 && !isRuneStart(line, n) {
		n--
	}
	if n == 0 || err != nil {
		return "", err
	}
	return with(n), nil
}

// longest returns the largest k in [0, n] for which fits(k) holds, fits
// being taken as true up to some k and false after, and fits(0) as true.
// It gallops from guess with steps doubling from step, then bisects, so
// that with a good guess only values near it are tried.
func longest(n, guess, step int, fits func(int) (bool, error)) (int, error) {
	lo, hi := 0, n+1 // fits(lo) holds or lo is 0; fits(hi) fails or hi is n+1
	k := min(max(guess, 1), n)
	for k > lo && k < hi {
		ok, err := fits(k)
		if err != nil {
			return 0, err
		}
		if ok {
			lo, k = k, k+step
		} else {
			hi, k = k, k-step
		}
		step *= 2
	}
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		ok, err := fits(mid)
		if err != nil {
			return 0, err
		}
		if ok {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo, nil
}

func isRuneStart(s string, i int) bool { return i >= len(s) || s[i]&0xC0 != 0x80 }

// piece is a kept line or a cut marker.
type piece struct {
	text   string
	tokens int // the count of text alone
	marker bool
}

func join(ps []piece) string {
	var b strings.Builder
	for i, p := range ps {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(p.text)
	}
	return b.String()
}

// estimate is the sum of the pieces' counts and a token per newline.
func estimate(ps []piece) int {
	n := max(len(ps)-1, 0)
	for _, p := range ps {
		n += p.tokens
	}
	return n
}

func kept(ps []piece) int {
	n := 0
	for _, p := range ps {
		if !p.marker {
			n++
		}
	}
	return n
}

// splitLines splits text into lines; a final newline ends the last line
// rather than starting an empty one, and "" has no lines.
func splitLines(text string) []string {
	if text == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(text, "\n"), "\n")
}

// windows keeps the lines within radius of each line of interest (1-based;
// numbers outside lines are ignored), each with its count in toks (or 0
// when toks is nil), merging windows that overlap or
// touch, and replaces each run of removed lines with one Marker piece. A
// gap of a single line is kept rather than replaced. With no line of
// interest only a marker is left. A marker counts markTok tokens.
func windows(lines []string, toks []int, markTok int, interest []int, radius int) []piece {
	n := len(lines)
	if n == 0 {
		return nil
	}
	radius = max(radius, 0)
	keep := make([]bool, n)
	for _, l := range interest {
		if l < 1 || l > n {
			continue
		}
		for i := max(l-1-radius, 0); i <= min(l-1+radius, n-1); i++ {
			keep[i] = true
		}
	}
	// A lone removed line between kept ones costs as much as its marker.
	for i := 1; i < n-1; i++ {
		if !keep[i] && keep[i-1] && keep[i+1] {
			keep[i] = true
		}
	}
	var ps []piece
	for i, l := range lines {
		switch {
		case keep[i]:
			p := piece{text: l}
			if toks != nil {
				p.tokens = toks[i]
			}
			ps = append(ps, p)
		case i == 0 || keep[i-1]:
			ps = append(ps, piece{text: Marker, tokens: markTok, marker: true})
		}
	}
	return ps
}
