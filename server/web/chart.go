package web

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/mergeguard/mergeguard/review/quality"
)

// The Quality page's charts are inline SVG that templates/quality.html
// draws from the geometry below: pure functions of a report's groups, so
// that a chart is tested as numbers and its SVG as a golden file. Keys
// (categories, sources, repositories) are untrusted text; the template
// escapes them, and the geometry bounds how many and how long.

// Chart bounds: a bar chart draws at most MaxBars rows (the groups with
// the most findings; the rest summed into one "other" row), a week chart
// the latest MaxWeeks weeks; a label shows at most maxLabelRunes
// characters of its key, a tooltip maxKeyRunes.
const (
	MaxBars       = 10
	MaxWeeks      = 53
	maxLabelRunes = 28
	maxKeyRunes   = 200
)

// Bar chart layout, in SVG user units: a label column, the bars' scale
// (0 to 100%) and the figures beside them.
const (
	barWidth   = 640
	barLabelW  = 180
	barScaleW  = 320
	barRowH    = 26
	barTop     = 4
	barAxisH   = 22
	barValueX  = barLabelW + barScaleW + 12
	whiskerCap = 6
)

// Week chart layout: the plot area and the margins for its axes' labels.
const (
	weekWidth  = 640
	weekHeight = 240
	weekLeft   = 48
	weekRight  = 596 // room for the last week's label
	weekTop    = 12
	weekBottom = 200
	weekLabels = 8 // at most this many week labels under the axis
)

// Tick is a mark on a chart's rate axis: its position (x for bars, y for
// weeks) and its label ("50%").
type Tick struct {
	Pos   float64
	Label string
}

// BarChart is a horizontal bar chart of addressed rates: one row per
// group, the bar its rate, the whisker its 95% interval.
type BarChart struct {
	// ID names the chart's element (chart-category, ...).
	ID, Title     string
	Width, Height int
	Rows          []BarRow
	Ticks         []Tick
	// LabelX is where the rows' labels end, ValueX where their figures
	// start; PlotBottom is the rows' bottom, AxisY the ticks' labels'
	// baseline.
	LabelX, ValueX    float64
	PlotBottom, AxisY float64
	// Other counts the groups summed into the last row ("other").
	Other int
}

// BarRow is one group's row.
type BarRow struct {
	// Key is the group's key, Label what is shown of it (at most
	// maxLabelRunes characters); Other marks the row of the groups not
	// drawn.
	Key, Label string
	Other      bool
	Rate       quality.Rate
	// Y is the row's top, TextY its text's baseline, MidY the whisker's
	// line; X and W are the bar's; LowX and HighX the whisker's ends,
	// CapTop and CapBot its caps'.
	Y, TextY, MidY float64
	BarY, BarH     float64
	X, W           float64
	LowX, HighX    float64
	CapTop, CapBot float64
	// Value is the figures beside the bar: "62.5% (5 of 8)".
	Value string
}

// Bars lays out groups as a bar chart with id and title: the MaxBars-1
// groups with the most findings in that order (ties by key), and when
// there are more than MaxBars the rest summed into an "other" row.
func Bars(id, title string, groups []quality.Group) BarChart {
	shown := topGroups(groups)
	c := BarChart{ID: id, Title: title, Width: barWidth, Other: len(groups) - len(shown)}
	if c.Other > 0 {
		c.Other++ // the row "other" stands for its groups
		shown[len(shown)-1] = otherGroup(groups, shown[:len(shown)-1])
	}
	for i, g := range shown {
		y := float64(barTop + i*barRowH)
		r := BarRow{Key: clip(g.Key, maxKeyRunes), Label: clip(g.Key, maxLabelRunes), Rate: g.Rate,
			Y: y, TextY: y + 17, MidY: y + barRowH/2, BarY: y + 5, BarH: barRowH - 10,
			X: barLabelW, W: round1(clamp01(g.Rate.Rate) * barScaleW),
			LowX: barX(g.Low), HighX: barX(g.High), CapTop: y + barRowH/2 - whiskerCap, CapBot: y + barRowH/2 + whiskerCap,
			Value: fmt.Sprintf("%s (%d of %d)", Percent(g.Rate.Rate), g.Addressed, g.N)}
		c.Rows = append(c.Rows, r)
	}
	if c.Other > 0 {
		last := &c.Rows[len(c.Rows)-1]
		last.Key, last.Label, last.Other = "", fmt.Sprintf("other (%d)", c.Other), true
	}
	c.LabelX, c.ValueX = barLabelW-8, barValueX
	c.PlotBottom = float64(barTop + len(shown)*barRowH)
	c.AxisY = c.PlotBottom + 16
	c.Height = barTop + len(shown)*barRowH + barAxisH
	for _, p := range []float64{0, 0.25, 0.5, 0.75, 1} {
		c.Ticks = append(c.Ticks, Tick{Pos: barX(p), Label: Percent(p)})
	}
	return c
}

// topGroups returns up to MaxBars groups: those with the most findings,
// ties by key; one more than drawn is kept as the place of "other".
func topGroups(groups []quality.Group) []quality.Group {
	out := slices.Clone(groups)
	slices.SortStableFunc(out, func(a, b quality.Group) int {
		return cmp.Or(cmp.Compare(b.N, a.N), cmp.Compare(a.Key, b.Key))
	})
	if len(out) > MaxBars {
		out = out[:MaxBars]
	}
	return out
}

// otherGroup sums the groups that are not among shown.
func otherGroup(groups, shown []quality.Group) quality.Group {
	drawn := make(map[string]bool, len(shown))
	for _, g := range shown {
		drawn[g.Key] = true
	}
	var rest []quality.Rate
	for _, g := range groups {
		if !drawn[g.Key] {
			rest = append(rest, g.Rate)
		}
	}
	return quality.Group{Rate: quality.Sum(rest...)}
}

// barX is the x of rate p on a bar chart's scale.
func barX(p float64) float64 { return round1(barLabelW + clamp01(p)*barScaleW) }

// WeekChart is the addressed rate week by week: a point per week with its
// interval as whiskers, the intervals joined as a band.
type WeekChart struct {
	ID, Title     string
	Width, Height int
	Points        []WeekPoint
	// Line joins the rates and Band outlines the intervals: SVG points
	// lists ("x,y x,y"), "" with fewer than two weeks.
	Line, Band string
	Ticks      []Tick
	// Left, Right, Top and Bottom bound the plot; TickX and LabelY place
	// the axes' labels.
	Left, Right, Top, Bottom float64
	TickX, LabelY            float64
	// Dropped counts the earliest weeks not drawn (beyond MaxWeeks).
	Dropped int
}

// WeekPoint is one week's point; Label is "" for the weeks whose label is
// left out to keep the axis readable.
type WeekPoint struct {
	Key, Label string
	Rate       quality.Rate
	// X and Y place the rate, LowY and HighY its interval's ends.
	X, Y, LowY, HighY float64
	Value             string
}

// Weeks lays out the groups of ISO weeks ("2026-W45", which sort in time
// order) as a week chart: the latest MaxWeeks of them.
func Weeks(id, title string, weeks []quality.Group) WeekChart {
	ws := slices.Clone(weeks)
	slices.SortFunc(ws, func(a, b quality.Group) int { return cmp.Compare(a.Key, b.Key) })
	c := WeekChart{ID: id, Title: title, Width: weekWidth, Height: weekHeight,
		Left: weekLeft, Right: weekRight, Top: weekTop, Bottom: weekBottom, TickX: weekLeft - 6, LabelY: weekBottom + 18}
	if len(ws) > MaxWeeks {
		c.Dropped = len(ws) - MaxWeeks
		ws = ws[c.Dropped:]
	}
	every := max(1, (len(ws)+weekLabels-1)/weekLabels)
	var line, upper, lower []string
	for i, g := range ws {
		p := WeekPoint{Key: clip(g.Key, maxKeyRunes), Rate: g.Rate, X: weekX(i, len(ws)), Y: weekY(g.Rate.Rate),
			LowY: weekY(g.Low), HighY: weekY(g.High),
			Value: fmt.Sprintf("%s (%d of %d), 95%% interval %s", Percent(g.Rate.Rate), g.Addressed, g.N, Interval(g.Rate))}
		if (len(ws)-1-i)%every == 0 { // the latest week is always labelled
			p.Label = clip(g.Key, maxLabelRunes)
		}
		c.Points = append(c.Points, p)
		line = append(line, xy(p.X, p.Y))
		upper = append(upper, xy(p.X, p.HighY))
		lower = append(lower, xy(p.X, p.LowY))
	}
	if len(ws) > 1 {
		slices.Reverse(lower)
		c.Line, c.Band = strings.Join(line, " "), strings.Join(append(upper, lower...), " ")
	}
	for _, p := range []float64{0, 0.25, 0.5, 0.75, 1} {
		c.Ticks = append(c.Ticks, Tick{Pos: weekY(p), Label: Percent(p)})
	}
	return c
}

// weekX is the x of the i-th of n weeks: spread over the plot, one week in
// its middle.
func weekX(i, n int) float64 {
	if n < 2 {
		return round1((weekLeft + weekRight) / 2)
	}
	return round1(weekLeft + float64(i)*(weekRight-weekLeft)/float64(n-1))
}

// weekY is the y of rate p on the week chart.
func weekY(p float64) float64 { return round1(weekBottom - clamp01(p)*(weekBottom-weekTop)) }

func xy(x, y float64) string {
	return strconv.FormatFloat(x, 'f', -1, 64) + "," + strconv.FormatFloat(y, 'f', -1, 64)
}

// Percent writes a rate as the page shows it: "62.5%".
func Percent(p float64) string {
	s := strconv.FormatFloat(math.Round(p*1000)/10, 'f', 1, 64)
	return strings.TrimSuffix(s, ".0") + "%"
}

// Interval writes a rate's 95% interval: "30.6%–86.3%".
func Interval(r quality.Rate) string { return Percent(r.Low) + "–" + Percent(r.High) }

// clip is what a chart shows of key: at most n characters, the cut marked
// with an ellipsis, control characters as "?".
func clip(key string, n int) string {
	key = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return '?'
		}
		return r
	}, key)
	if r := []rune(key); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return key
}

func clamp01(p float64) float64 { return math.Max(0, math.Min(1, p)) }

func round1(x float64) float64 { return math.Round(x*10) / 10 }
