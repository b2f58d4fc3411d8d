package quality_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/quality"
)

// approx compares rates and intervals to the three decimals they were
// computed by hand to.
var approx = cmpopts.EquateApprox(0, 0.0005)

// TestWilson checks the interval against published values (Wilson 1927;
// Newcombe 1998, table I: 8/10 is [0.490, 0.943], 0/10 [0, 0.278]).
func TestWilson(t *testing.T) {
	t.Parallel()
	tests := []struct {
		successes, n int
		low, high    float64
	}{
		{8, 10, 0.4902, 0.9433},
		{0, 10, 0, 0.2775},
		{10, 10, 0.7225, 1},
		{1, 2, 0.0945, 0.9055},
		{1, 3, 0.0615, 0.7923},
		{2, 5, 0.1176, 0.7693},
		{1, 1, 0.2065, 1},
		{0, 0, 0, 1},
	}
	for _, tt := range tests {
		low, high := quality.Wilson(tt.successes, tt.n, quality.Z95)
		if diff := cmp.Diff([2]float64{tt.low, tt.high}, [2]float64{low, high}, approx); diff != "" {
			t.Errorf("Wilson(%d, %d) (-want +got):\n%s", tt.successes, tt.n, diff)
		}
	}
}

func TestWeek(t *testing.T) {
	t.Parallel()
	for day, want := range map[string]string{
		"2026-11-02": "2026-W45", // a Monday
		"2026-11-08": "2026-W45", // its Sunday
		"2026-11-09": "2026-W46",
		"2027-01-01": "2026-W53", // a Friday: the last week of 2026
		"2025-12-29": "2026-W01",
	} {
		d, err := time.Parse(time.DateOnly, day)
		if err != nil {
			t.Fatal(err)
		}
		if got := quality.Week(d); got != want {
			t.Errorf("Week(%s) = %s, want %s", day, got, want)
		}
	}
}

func TestCompute(t *testing.T) {
	t.Parallel()
	day := func(s string) time.Time {
		d, err := time.Parse(time.DateOnly, s)
		if err != nil {
			t.Fatal(err)
		}
		return d.Add(12 * time.Hour)
	}
	f := func(repo string, n int, sev review.Severity, cat review.Category, src string, o review.Outcome, how string, merged bool, at string) quality.Finding {
		return quality.Finding{Repository: repo, PRNumber: n, Severity: sev, Category: cat, Source: src,
			FindingOutcome: review.FindingOutcome{Outcome: o, How: how}, Merged: merged, At: day(at)}
	}
	const (
		warn, info, crit = review.SeverityWarning, review.SeverityInfo, review.SeverityCritical
		bug, qual, sec   = review.CategoryBug, review.CategoryQuality, review.CategorySecurity
		A, D, U, X       = review.OutcomeAddressed, review.OutcomeDismissed, review.OutcomeUnaddressed, review.OutcomeAbandoned
	)
	findings := []quality.Finding{
		f("a/x", 1, warn, bug, "gpt-4o", A, review.AddressedFixed, true, "2026-11-03"),
		f("a/x", 1, info, qual, "gpt-4o", D, review.DismissedCommand, true, "2026-11-03"),
		f("a/x", 1, warn, bug, "analyzer:shellcheck", U, "", true, "2026-11-03"),
		f("a/x", 2, crit, sec, "gpt-4o", A, review.AddressedFixed, true, "2026-11-10"),
		f("b/y", 1, warn, bug, "gpt-4o", X, "", false, "2026-11-04"),
		f("b/y", 1, warn, bug, "gpt-4o", A, review.AddressedFixed, false, "2026-11-04"), // unmerged: no rate
		f("b/y", 2, warn, bug, "gpt-4o", D, review.DismissedThreadResolved, true, "2026-11-11"),
		f("a/x", 3, warn, bug, "gpt-4o", A, review.AddressedFixed, true, "2026-10-01"), // before the window
	}
	prs := []quality.PullRequest{
		{Repository: "a/x", Number: 1, Merged: true, ClosedAt: day("2026-11-03"), Cost: 0.30},
		{Repository: "a/x", Number: 2, Merged: true, ClosedAt: day("2026-11-10"), Cost: 0.10},
		{Repository: "b/y", Number: 1, Merged: false, ClosedAt: day("2026-11-04"), Cost: 0.50},
		{Repository: "b/y", Number: 2, Merged: true, ClosedAt: day("2026-11-11"), Cost: 0.20},
		{Repository: "a/x", Number: 4, Merged: true, ClosedAt: day("2026-11-12")}, // no findings
		{Repository: "a/x", Number: 3, Merged: true, ClosedAt: day("2026-10-01"), Cost: 9},
	}
	// rate: the counts, and the interval computed by hand (Wilson 95%).
	rate := func(a, d, u int, low, high float64) quality.Rate {
		n := a + d + u
		return quality.Rate{Addressed: a, Dismissed: d, Unaddressed: u, N: n, Rate: float64(a) / float64(n), Low: low, High: high}
	}
	one := rate(1, 0, 0, 0.2065, 1)
	none := rate(0, 1, 0, 0, 0.7935)
	third := rate(1, 1, 1, 0.0615, 0.7923)
	half := rate(1, 1, 0, 0.0945, 0.9055)
	twoOfFour := rate(2, 1, 1, 0.1500, 0.8500)
	since := day("2026-11-01")
	want := quality.Report{
		Since: since, Merged: 4, ClosedUnmerged: 1,
		AddressedRate: rate(2, 2, 1, 0.1176, 0.7693),
		ByRepository:  []quality.Group{{Key: "a/x", Rate: twoOfFour}, {Key: "b/y", Rate: none}},
		BySeverity:    []quality.Group{{Key: "critical", Rate: one}, {Key: "info", Rate: none}, {Key: "warning", Rate: third}},
		ByCategory:    []quality.Group{{Key: "bug", Rate: third}, {Key: "quality", Rate: none}, {Key: "security", Rate: one}},
		BySource: []quality.Group{{Key: "analyzer:shellcheck", Rate: rate(0, 0, 1, 0, 0.7935)},
			{Key: "gpt-4o", Rate: rate(2, 2, 0, 0.1500, 0.8500)}},
		ByWeek:        []quality.Group{{Key: "2026-W45", Rate: third}, {Key: "2026-W46", Rate: half}},
		DismissedHow:  map[string]int{review.DismissedCommand: 1, review.DismissedThreadResolved: 1},
		Abandoned:     1,
		FindingsPerPR: 5.0 / 4, CostPerPR: 0.6 / 4, WithAddressed: 2.0 / 4,
		// Without experiments, one arm: every pull request's.
		ByArm: []quality.Arm{{Name: "default", MergedPullRequests: 4, ClosedUnmerged: 1,
			AddressedRate: rate(2, 2, 1, 0.1176, 0.7693), FindingsPerPR: 5.0 / 4, CostPerPR: 0.6 / 4}},
	}
	if diff := cmp.Diff(want, quality.Compute(since, findings, prs), approx); diff != "" {
		t.Errorf("Compute (-want +got):\n%s", diff)
	}
}

// TestComputeEmpty: nothing closed says nothing is known, with no NaN.
func TestComputeEmpty(t *testing.T) {
	t.Parallel()
	since := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	want := quality.Report{Since: since, AddressedRate: quality.Rate{Low: 0, High: 1},
		ByRepository: []quality.Group{}, BySeverity: []quality.Group{}, ByCategory: []quality.Group{},
		BySource: []quality.Group{}, ByWeek: []quality.Group{}, DismissedHow: map[string]int{}, ByArm: []quality.Arm{}}
	if diff := cmp.Diff(want, quality.Compute(since, nil, nil)); diff != "" {
		t.Errorf("Compute of nothing (-want +got):\n%s", diff)
	}
}

// TestComputeArms: the arms compared (docs/quality.md, Choosing a model),
// counted by hand: each arm's findings by the arm of the run that first
// reported them, its merged pull requests by the arm of their first run
// (a pull request from before arms were recorded is the default arm's),
// cost and findings per merged pull request, and the median duration of
// its succeeded review runs.
func TestComputeArms(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 10, 12, 0, 0, 0, time.UTC)
	f := func(n int, arm string, o review.Outcome, merged bool) quality.Finding {
		return quality.Finding{Repository: "a/x", PRNumber: n, Severity: review.SeverityWarning, Category: review.CategoryBug,
			Source: "m", Arm: arm, FindingOutcome: review.FindingOutcome{Outcome: o}, Merged: merged, At: at}
	}
	const A, D, U, X = review.OutcomeAddressed, review.OutcomeDismissed, review.OutcomeUnaddressed, review.OutcomeAbandoned
	findings := []quality.Finding{
		f(1, "default", A, true), f(1, "default", D, true),
		f(2, "", U, true), // before arms were recorded: the default arm's
		f(3, "big", A, true), f(3, "big", A, true), f(3, "big", U, true),
		f(4, "big", X, false),
		f(5, "big", A, true),
	}
	s := func(secs ...int) []time.Duration {
		var ds []time.Duration
		for _, n := range secs {
			ds = append(ds, time.Duration(n)*time.Second)
		}
		return ds
	}
	prs := []quality.PullRequest{
		{Repository: "a/x", Number: 1, Merged: true, ClosedAt: at, Cost: 0.10, Arm: "default", RunDurations: s(30, 50)},
		{Repository: "a/x", Number: 2, Merged: true, ClosedAt: at, Cost: 0.20, RunDurations: s(40)},
		{Repository: "a/x", Number: 3, Merged: true, ClosedAt: at, Cost: 0.90, Arm: "big", RunDurations: s(90, 70, 200)},
		{Repository: "a/x", Number: 4, Merged: false, ClosedAt: at, Cost: 5, Arm: "big", RunDurations: s(1)},
		{Repository: "a/x", Number: 5, Merged: true, ClosedAt: at, Cost: 0.30, Arm: "big", RunDurations: s(60)},
		{Repository: "a/x", Number: 6, Merged: true, ClosedAt: at, Cost: 0.20, Arm: "big"}, // no findings, no run timed
	}
	want := []quality.Arm{
		{Name: "big", MergedPullRequests: 3, ClosedUnmerged: 1,
			AddressedRate: quality.Rate{Addressed: 3, Unaddressed: 1, N: 4, Rate: 0.75, Low: 0.3006, High: 0.9544},
			FindingsPerPR: 4.0 / 3, CostPerPR: 1.4 / 3, Runs: 4, MedianRunSeconds: 80},
		{Name: "default", MergedPullRequests: 2,
			AddressedRate: quality.Rate{Addressed: 1, Dismissed: 1, Unaddressed: 1, N: 3, Rate: 1.0 / 3, Low: 0.0615, High: 0.7923},
			FindingsPerPR: 1.5, CostPerPR: 0.15, Runs: 3, MedianRunSeconds: 40},
	}
	got := quality.Compute(at.Add(-time.Hour), findings, prs).ByArm
	if diff := cmp.Diff(want, got, approx); diff != "" {
		t.Errorf("ByArm (-want +got):\n%s", diff)
	}
}

// TestSum: the rate of several groups together is that of their counts
// added; of none, nothing is known.
func TestSum(t *testing.T) {
	t.Parallel()
	low, high := quality.Wilson(3, 6, quality.Z95)
	tests := []struct {
		name string
		rs   []quality.Rate
		want quality.Rate
	}{
		{"two", []quality.Rate{{Addressed: 2, Dismissed: 1, N: 3}, {Addressed: 1, Unaddressed: 2, N: 3}},
			quality.Rate{Addressed: 3, Dismissed: 1, Unaddressed: 2, N: 6, Rate: 0.5, Low: low, High: high}},
		{"none", nil, quality.Rate{High: 1}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, quality.Sum(tt.rs...)); diff != "" {
			t.Errorf("%s: Sum (-want +got):\n%s", tt.name, diff)
		}
	}
}
