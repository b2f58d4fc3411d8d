package web

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mergeguard/mergeguard/review/quality"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata/")

// group is a group of addressed, dismissed and unaddressed findings with
// its rate and Wilson interval, as quality.Compute makes it.
func group(key string, addressed, dismissed, unaddressed int) quality.Group {
	g := quality.Group{Key: key, Rate: quality.Rate{Addressed: addressed, Dismissed: dismissed, Unaddressed: unaddressed}}
	g.N = addressed + dismissed + unaddressed
	if g.N > 0 {
		g.Rate.Rate = float64(addressed) / float64(g.N)
	}
	g.Low, g.High = quality.Wilson(addressed, g.N, quality.Z95)
	return g
}

func TestQualityPercent(t *testing.T) {
	for _, tc := range []struct {
		p    float64
		want string
	}{
		{0, "0%"}, {0.625, "62.5%"}, {1, "100%"}, {0.12345, "12.3%"}, {0.99996, "100%"}, {0.5, "50%"},
	} {
		if got := Percent(tc.p); got != tc.want {
			t.Errorf("Percent(%v) = %q, want %q", tc.p, got, tc.want)
		}
	}
}

// barRow is what a test checks of a bar chart's row.
type barRow struct {
	Key, Label string
	Other      bool
	N          int
	Y, W       float64
	LowX       float64
	HighX      float64
	Value      string
}

func TestQualityBars(t *testing.T) {
	many := make([]quality.Group, 13)
	for i := range many {
		many[i] = group(fmt.Sprintf("c%02d", i), i, 1, 0) // c12 has the most findings
	}
	for _, tc := range []struct {
		name   string
		groups []quality.Group
		height int
		other  int
		rows   []barRow
	}{
		{name: "no groups", height: barTop + barAxisH},
		{
			name:   "one group: 8 of 10, interval 49.0%-94.3% (x 180 + 320p)",
			groups: []quality.Group{group("bug", 8, 1, 1)},
			height: barTop + barRowH + barAxisH,
			rows:   []barRow{{Key: "bug", Label: "bug", N: 10, Y: 4, W: 256, LowX: 336.9, HighX: 481.9, Value: "80% (8 of 10)"}},
		},
		{
			name:   "most findings first, ties by key; none addressed is an empty bar with its whisker (0 of 3: 0-56.1%; 1 of 1: 20.7-100%)",
			groups: []quality.Group{group("b", 1, 0, 0), group("a", 1, 0, 0), group("z", 0, 3, 0)},
			height: barTop + 3*barRowH + barAxisH,
			rows: []barRow{
				{Key: "z", Label: "z", N: 3, Y: 4, W: 0, LowX: 180, HighX: 359.7, Value: "0% (0 of 3)"},
				{Key: "a", Label: "a", N: 1, Y: 30, W: 320, LowX: 246.1, HighX: 500, Value: "100% (1 of 1)"},
				{Key: "b", Label: "b", N: 1, Y: 56, W: 320, LowX: 246.1, HighX: 500, Value: "100% (1 of 1)"},
			},
		},
		{
			name:   "13 groups: the 9 largest and the other 4 summed (0+1+2+3 of 8)",
			groups: many,
			height: barTop + MaxBars*barRowH + barAxisH,
			other:  4,
			rows: append(func() []barRow {
				var rs []barRow
				for i := 12; i >= 4; i-- {
					g := many[i]
					rs = append(rs, barRow{Key: g.Key, Label: g.Key, N: g.N, Y: float64(barTop + (12-i)*barRowH),
						W: round1(g.Rate.Rate * barScaleW), LowX: barX(g.Low), HighX: barX(g.High),
						Value: fmt.Sprintf("%s (%d of %d)", Percent(g.Rate.Rate), g.Addressed, g.N)})
				}
				return rs
			}(), barRow{Label: "other (4)", Other: true, N: 10, Y: 238, W: 192, LowX: barX(0.3127), HighX: barX(0.8318), Value: "60% (6 of 10)"}),
		},
		{
			name:   "an untrusted key: clipped, control characters shown as ?",
			groups: []quality.Group{group("model\n\x1b[31m"+strings.Repeat("x", 300), 1, 1, 0)},
			height: barTop + barRowH + barAxisH,
			rows: []barRow{{Key: "model??[31m" + strings.Repeat("x", maxKeyRunes-12) + "…", Label: "model??[31m" + strings.Repeat("x", maxLabelRunes-12) + "…",
				N: 2, Y: 4, W: 160, LowX: 210.2, HighX: 469.8, Value: "50% (1 of 2)"}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Bars("chart-x", "By x", tc.groups)
			var rows []barRow
			for _, r := range c.Rows {
				rows = append(rows, barRow{Key: r.Key, Label: r.Label, Other: r.Other, N: r.Rate.N, Y: r.Y, W: r.W,
					LowX: r.LowX, HighX: r.HighX, Value: r.Value})
			}
			if diff := cmp.Diff(tc.rows, rows); diff != "" {
				t.Errorf("rows (-want +got):\n%s", diff)
			}
			if c.Height != tc.height || c.Other != tc.other || len(c.Ticks) != 5 {
				t.Errorf("height %d, other %d, %d ticks; want %d, %d, 5", c.Height, c.Other, len(c.Ticks), tc.height, tc.other)
			}
		})
	}
}

func TestQualityWeeks(t *testing.T) {
	var sixty []quality.Group
	for i := range 60 {
		sixty = append(sixty, group(fmt.Sprintf("2025-W%02d", i%52+1), 1, 1, 0))
		if i >= 52 {
			sixty[i].Key = fmt.Sprintf("2026-W%02d", i-51)
		}
	}
	for _, tc := range []struct {
		name      string
		weeks     []quality.Group
		points    int
		dropped   int
		labels    []string
		line      string
		firstX    float64
		firstLowY float64
	}{
		{name: "no weeks"},
		{name: "one week: in the middle, no band (2 of 4: low 15%, y 200 - 188p)", weeks: []quality.Group{group("2026-W45", 2, 2, 0)}, points: 1,
			labels: []string{"2026-W45"}, firstX: 322, firstLowY: 171.8},
		{
			name:   "weeks out of order are drawn in time order, joined",
			weeks:  []quality.Group{group("2026-W47", 1, 0, 0), group("2025-W52", 0, 1, 0), group("2026-W01", 1, 1, 0)},
			points: 3, labels: []string{"2025-W52", "2026-W01", "2026-W47"},
			line:   "48,200 322,106 596,12",
			firstX: 48, firstLowY: 200,
		},
		{
			name: "60 weeks: the latest 53, a label every 7th ending on the latest", weeks: sixty, points: MaxWeeks, dropped: 7,
			labels: []string{"2025-W11", "2025-W18", "2025-W25", "2025-W32", "2025-W39", "2025-W46", "2026-W01", "2026-W08"},
			firstX: 48, firstLowY: 182.2, // 1 of 2: low 9.5%
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Weeks("chart-week", "By week", tc.weeks)
			var labels []string
			for _, p := range c.Points {
				if p.Label != "" {
					labels = append(labels, p.Label)
				}
			}
			if diff := cmp.Diff(tc.labels, labels); diff != "" {
				t.Errorf("labels (-want +got):\n%s", diff)
			}
			if len(c.Points) != tc.points || c.Dropped != tc.dropped {
				t.Fatalf("%d points, %d dropped; want %d, %d", len(c.Points), c.Dropped, tc.points, tc.dropped)
			}
			if tc.line != "" && c.Line != tc.line {
				t.Errorf("line %q, want %q", c.Line, tc.line)
			}
			if (len(c.Points) > 1) != (c.Band != "") {
				t.Errorf("band %q with %d points", c.Band, len(c.Points))
			}
			if tc.points > 0 && (c.Points[0].X != tc.firstX || c.Points[0].LowY != tc.firstLowY) {
				t.Errorf("first point at x %v, interval's low at y %v; want %v, %v", c.Points[0].X, c.Points[0].LowY, tc.firstX, tc.firstLowY)
			}
		})
	}
}

// TestQualityChartsGolden renders the charts of a fixed report, with a
// hostile category, through the page's templates and compares their SVG
// with testdata/ (go test -run QualityChartsGolden -update rewrites it).
func TestQualityChartsGolden(t *testing.T) {
	ui, err := New(Deps{})
	if err != nil {
		t.Fatal(err)
	}
	hostile := `<script>alert(1)</script>"onmouseover="x`
	for _, tc := range []struct {
		file, tmpl string
		data       any
	}{
		{"quality-bars.svg", "barchart", Bars("chart-category", "By category", []quality.Group{
			group("bug", 8, 1, 1), group("security", 3, 1, 0), group("style", 0, 4, 2), group(hostile, 1, 0, 0)})},
		{"quality-weeks.svg", "weekchart", Weeks("chart-week", "Addressed rate by week", []quality.Group{
			group("2026-W44", 1, 3, 0), group("2026-W45", 4, 2, 0), group("2026-W46", 6, 1, 1)})},
		{"quality-empty.svg", "barchart", Bars("chart-source", "By source", nil)},
	} {
		t.Run(tc.file, func(t *testing.T) {
			var b strings.Builder
			if err := ui.pages["quality"].ExecuteTemplate(&b, tc.tmpl, tc.data); err != nil {
				t.Fatal(err)
			}
			got := b.String()
			if strings.Contains(got, "<script>") || strings.Contains(got, `"onmouseover`) {
				t.Errorf("an untrusted key reached the SVG unescaped:\n%s", got)
			}
			path := filepath.Join("testdata", tc.file)
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("%s (-want +got):\n%s", path, diff)
			}
		})
	}
}
