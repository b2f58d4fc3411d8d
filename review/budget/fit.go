package budget

import (
	"cmp"
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
// The truncation metadata counts lines over all sections; a section is
// affected when it was cut or dropped.
func Fit(sections []Section, budget int, c Counter) ([]Section, review.Truncation) {
	need := make([]int, len(sections))
	total := 0
	tr := review.Truncation{SectionsAffected: []string{}}
	for i, s := range sections {
		need[i] = c.Count(s.Text)
		total += need[i]
		tr.OriginalLines += len(splitLines(s.Text))
	}
	if total <= budget {
		tr.KeptLines = tr.OriginalLines
		return slices.Clone(sections), tr
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
		text, kept := cut(lines, s.Interest, alloc[i], c)
		if text == "" {
			continue
		}
		s.Text = text
		out = append(out, s)
		tr.KeptLines += kept
	}
	return out, tr
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
func cut(lines []string, interest []int, limit int, c Counter) (string, int) {
	var ps []piece
	if len(interest) > 0 {
		// Windows narrower and narrower, then the head of the narrowest.
		for _, r := range []int{Radius, 5, 2, 0} {
			ps = windows(lines, interest, r)
			if text := join(ps); c.Count(text) <= limit {
				return text, kept(ps)
			}
		}
	} else {
		ps = make([]piece, len(lines))
		for i, l := range lines {
			ps[i] = piece{text: l}
		}
	}
	// Binary search the longest head of ps that fits with a closing marker.
	head := func(k int) []piece {
		h := slices.Clone(ps[:k])
		if k < len(ps) && (k == 0 || !h[k-1].marker) {
			h = append(h, piece{text: Marker, marker: true})
		}
		return h
	}
	lo, hi := 0, len(ps) // head(lo) fits, or lo is 0
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if c.Count(join(head(mid))) <= limit {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	if h := head(lo); lo > 0 && kept(h) > 0 {
		return join(h), kept(h)
	}
	// Not one whole line fits: keep the start of the first kept line.
	first := 0
	for first < len(ps) && ps[first].marker {
		first++
	}
	if first < len(ps) {
		if part := prefixFitting(ps[first].text, limit, c); part != "" {
			return part, 1
		}
	}
	return "", 0
}

// prefixFitting returns the longest prefix of line that fits in limit
// tokens together with a trailing marker, cut on a rune boundary, or "".
func prefixFitting(line string, limit int, c Counter) string {
	with := func(n int) string { return line[:n] + " " + Marker }
	lo, hi := 0, len(line)
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if c.Count(with(mid)) <= limit {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	for lo > 0 && !isRuneStart(line, lo) {
		lo--
	}
	if lo == 0 || c.Count(with(lo)) > limit {
		return ""
	}
	return with(lo)
}

func isRuneStart(s string, i int) bool { return i >= len(s) || s[i]&0xC0 != 0x80 }

// piece is a kept line or a cut marker.
type piece struct {
	text   string
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
// numbers outside lines are ignored), merging windows that overlap or
// touch, and replaces each run of removed lines with one Marker piece. A
// gap of a single line is kept rather than replaced. With no line of
// interest only a marker is left.
func windows(lines []string, interest []int, radius int) []piece {
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
			ps = append(ps, piece{text: l})
		case i == 0 || keep[i-1]:
			ps = append(ps, piece{text: Marker, marker: true})
		}
	}
	return ps
}
