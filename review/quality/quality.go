// Package quality computes how MergeGuard's findings fared on a team's own
// pull requests (docs/quality.md): the addressed rate of merged pull
// requests with its Wilson interval, broken down by repository, severity,
// category, source and week, findings, cost and addressed findings per
// pull request, and the arms of a model comparison side by side (ByArm).
// It is pure: the store reads the outcomes, this package
// counts them.
package quality

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/review"
)

// Z95 is the standard normal quantile of a two-sided 95% interval.
const Z95 = 1.959963984540054

// Finding is one finding's outcome, as its pull request's closing set it.
type Finding struct {
	Repository string
	PRNumber   int
	Severity   review.Severity
	Category   review.Category
	// Source is the model or analyzer that reported it
	// (review.FindingSource).
	Source string
	// Arm is the experiment arm of the run that first reported it
	// (llm.experiments); "" from before arms were recorded, counted as
	// config.DefaultArm's.
	Arm string
	review.FindingOutcome
	// Merged says whether the closing that set the outcome merged the pull
	// request; At is when it closed.
	Merged bool
	At     time.Time
}

// PullRequest is a closed pull request: its last closing and what its
// runs cost.
type PullRequest struct {
	Repository string
	Number     int
	Merged     bool
	ClosedAt   time.Time
	// Cost is the total cost of its runs, in dollars.
	Cost float64
	// Arm is the experiment arm of its first review run that recorded
	// one; "" for a pull request reviewed before arms were recorded,
	// counted as config.DefaultArm's.
	Arm string
	// RunDurations are the durations of its succeeded review runs.
	RunDurations []time.Duration
}

// Rate is an addressed rate: Addressed / (Addressed + Dismissed +
// Unaddressed) of the findings of merged pull requests, with its 95% Wilson
// score interval [Low, High]. With no finding, Rate is 0 and the interval
// [0, 1]: nothing is known.
type Rate struct {
	Addressed   int     `json:"addressed"`
	Dismissed   int     `json:"dismissed"`
	Unaddressed int     `json:"unaddressed"`
	N           int     `json:"n"`
	Rate        float64 `json:"rate"`
	Low         float64 `json:"low"`
	High        float64 `json:"high"`
}

// Group is the rate of the findings that share a key (a repository, a
// severity, ..., an ISO week "2026-W48").
type Group struct {
	Key string `json:"key"`
	Rate
}

// Report is the quality of the findings of the pull requests closed since
// a time.
type Report struct {
	Since time.Time `json:"since"`
	// Merged and ClosedUnmerged count the pull requests closed since Since
	// by their last closing.
	Merged         int `json:"merged_pull_requests"`
	ClosedUnmerged int `json:"closed_unmerged_pull_requests"`
	// AddressedRate is over every finding of merged pull requests.
	AddressedRate Rate    `json:"addressed_rate"`
	ByRepository  []Group `json:"by_repository"`
	BySeverity    []Group `json:"by_severity"`
	ByCategory    []Group `json:"by_category"`
	BySource      []Group `json:"by_source"`
	ByWeek        []Group `json:"by_week"`
	// DismissedHow counts the dismissals of merged pull requests' findings
	// by how they were dismissed (review.DismissedThreadResolved, ...).
	DismissedHow map[string]int `json:"dismissed_how"`
	// Abandoned counts the findings left open on pull requests closed
	// unmerged (not in any rate).
	Abandoned int `json:"abandoned"`
	// FindingsPerPR and CostPerPR are the mean findings and run cost of
	// a merged pull request; WithAddressed is the share of merged pull
	// requests with at least one addressed finding.
	FindingsPerPR float64 `json:"findings_per_pr"`
	CostPerPR     float64 `json:"cost_per_pr"`
	WithAddressed float64 `json:"share_with_addressed"`
	// ByArm compares the arms of a model comparison (llm.experiments),
	// by name; one arm, config.DefaultArm, without experiments.
	ByArm []Arm `json:"by_arm"`
}

// Arm is the quality of one experiment arm (docs/quality.md, Choosing a
// model): the findings first reported by its runs, and the pull requests
// closed since the report's start whose first review run was its.
type Arm struct {
	Name string `json:"arm"`
	// MergedPullRequests and ClosedUnmerged count its pull requests.
	MergedPullRequests int `json:"merged_pull_requests"`
	ClosedUnmerged     int `json:"closed_unmerged_pull_requests"`
	// AddressedRate is over its findings on merged pull requests.
	AddressedRate Rate `json:"addressed_rate"`
	// FindingsPerPR and CostPerPR are its findings and the cost of all
	// the runs of its merged pull requests, per merged pull request.
	FindingsPerPR float64 `json:"findings_per_pr"`
	CostPerPR     float64 `json:"cost_per_pr"`
	// Runs counts the succeeded review runs of its merged pull requests,
	// and MedianRunSeconds is the median of their durations (from the
	// claim of the run to its record); 0 without a run.
	Runs             int     `json:"runs"`
	MedianRunSeconds float64 `json:"median_run_seconds"`
}

// Wilson returns the Wilson score interval of successes out of n at the
// normal quantile z; [0, 1] when n is 0.
func Wilson(successes, n int, z float64) (low, high float64) {
	if n <= 0 {
		return 0, 1
	}
	nf := float64(n)
	p := float64(successes) / nf
	z2 := z * z
	denom := 1 + z2/nf
	center := (p + z2/(2*nf)) / denom
	half := z / denom * math.Sqrt(p*(1-p)/nf+z2/(4*nf*nf))
	return math.Max(0, center-half), math.Min(1, center+half)
}

// add counts one outcome in r (only the three the rate counts).
func (r *Rate) add(o review.Outcome) {
	switch o {
	case review.OutcomeAddressed:
		r.Addressed++
	case review.OutcomeDismissed:
		r.Dismissed++
	case review.OutcomeUnaddressed:
		r.Unaddressed++
	}
}

// finish computes the rate and its interval from the counts.
func (r *Rate) finish() {
	r.N = r.Addressed + r.Dismissed + r.Unaddressed
	if r.N > 0 {
		r.Rate = float64(r.Addressed) / float64(r.N)
	}
	r.Low, r.High = Wilson(r.Addressed, r.N, Z95)
}

// Sum is the rate of the findings of rs together: their counts added, the
// rate and its interval of the sum.
func Sum(rs ...Rate) Rate {
	var s Rate
	for _, r := range rs {
		s.Addressed += r.Addressed
		s.Dismissed += r.Dismissed
		s.Unaddressed += r.Unaddressed
	}
	s.finish()
	return s
}

// Week is the ISO week of t, "2026-W48".
func Week(t time.Time) string {
	y, w := t.UTC().ISOWeek()
	return fmt.Sprintf("%d-W%02d", y, w)
}

// Compute reports on findings and pull requests closed since since (those
// closed before are left out). Only the findings whose closing merged their
// pull request count in the rates; the others are abandoned or were fixed
// or dismissed on a pull request closed unmerged.
func Compute(since time.Time, findings []Finding, prs []PullRequest) Report {
	rep := Report{Since: since, DismissedHow: map[string]int{}}
	groups := [5]map[string]*Rate{{}, {}, {}, {}, {}}
	type prKey struct {
		repo   string
		number int
	}
	addressed := map[prKey]bool{}
	counted := 0
	for _, f := range findings {
		if f.At.Before(since) {
			continue
		}
		if f.Outcome == review.OutcomeAbandoned {
			rep.Abandoned++
		}
		if !f.Merged || f.Outcome == review.OutcomeAbandoned {
			continue
		}
		counted++
		rep.AddressedRate.add(f.Outcome)
		for i, key := range []string{f.Repository, string(f.Severity), string(f.Category), f.Source, Week(f.At)} {
			r := groups[i][key]
			if r == nil {
				r = &Rate{}
				groups[i][key] = r
			}
			r.add(f.Outcome)
		}
		if f.Outcome == review.OutcomeDismissed {
			rep.DismissedHow[f.How]++
		}
		if f.Outcome == review.OutcomeAddressed {
			addressed[prKey{f.Repository, f.PRNumber}] = true
		}
	}
	rep.AddressedRate.finish()
	rep.ByRepository, rep.BySeverity, rep.ByCategory = sorted(groups[0]), sorted(groups[1]), sorted(groups[2])
	rep.BySource, rep.ByWeek = sorted(groups[3]), sorted(groups[4])

	perPR(&rep, since, prs, counted, func(repo string, number int) bool { return addressed[prKey{repo, number}] })
	rep.ByArm = arms(since, findings, prs)
	return rep
}

// perPR counts the pull requests closed since since into rep, and the
// means of a merged one: counted findings, cost, and whether it has an
// addressed finding.
func perPR(rep *Report, since time.Time, prs []PullRequest, counted int, hasAddressed func(repo string, number int) bool) {
	cost, withAddressed := 0.0, 0
	for _, pr := range prs {
		switch {
		case pr.ClosedAt.Before(since):
		case !pr.Merged:
			rep.ClosedUnmerged++
		default:
			rep.Merged++
			cost += pr.Cost
			if hasAddressed(pr.Repository, pr.Number) {
				withAddressed++
			}
		}
	}
	if rep.Merged > 0 {
		m := float64(rep.Merged)
		rep.FindingsPerPR, rep.CostPerPR, rep.WithAddressed = float64(counted)/m, cost/m, float64(withAddressed)/m
	}
}

// sorted returns the groups of m by key, each rate finished.
func sorted(m map[string]*Rate) []Group {
	out := make([]Group, 0, len(m))
	for k, r := range m {
		r.finish()
		out = append(out, Group{Key: k, Rate: *r})
	}
	slices.SortFunc(out, func(a, b Group) int { return cmp.Compare(a.Key, b.Key) })
	return out
}

// armOf is the arm an arm recorded as name counts in: config.DefaultArm
// for "" (from before arms were recorded, when every run was the default
// arm's).
func armOf(name string) string { return cmp.Or(name, config.DefaultArm) }

// arms compares the arms: the findings (by the arm of the run that first
// reported them) and the pull requests (by the arm of their first run)
// closed since since.
func arms(since time.Time, findings []Finding, prs []PullRequest) []Arm {
	type tally struct {
		Arm
		counted   int
		cost      float64
		durations []time.Duration
	}
	m := map[string]*tally{}
	get := func(name string) *tally {
		name = armOf(name)
		if m[name] == nil {
			m[name] = &tally{Arm: Arm{Name: name}}
		}
		return m[name]
	}
	for _, f := range findings {
		if f.At.Before(since) || !f.Merged || f.Outcome == review.OutcomeAbandoned {
			continue
		}
		t := get(f.Arm)
		t.AddressedRate.add(f.Outcome)
		t.counted++
	}
	for _, pr := range prs {
		switch {
		case pr.ClosedAt.Before(since):
		case !pr.Merged:
			get(pr.Arm).ClosedUnmerged++
		default:
			t := get(pr.Arm)
			t.MergedPullRequests++
			t.cost += pr.Cost
			t.durations = append(t.durations, pr.RunDurations...)
		}
	}
	out := make([]Arm, 0, len(m))
	for _, t := range m {
		t.AddressedRate.finish()
		if n := float64(t.MergedPullRequests); n > 0 {
			t.FindingsPerPR, t.CostPerPR = float64(t.counted)/n, t.cost/n
		}
		t.Runs, t.MedianRunSeconds = len(t.durations), median(t.durations).Seconds()
		out = append(out, t.Arm)
	}
	slices.SortFunc(out, func(a, b Arm) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

// median is the median of ds (the mean of the middle two of an even
// number); 0 for none.
func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(ds))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
