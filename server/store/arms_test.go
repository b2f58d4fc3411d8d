package store_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/experiment"
	"github.com/mergeguard/mergeguard/review/quality"
	"github.com/mergeguard/mergeguard/server/store"
)

// armRun is what one review run of an arm records.
type armRun struct {
	arm, model, prompt string
	cost               float64
	took               time.Duration
}

// reviewAs runs one review of the pull request at head as arm r, leaving
// entries on its ledger.
func (p prStream) reviewAs(r armRun, head string, entries ...review.LedgerEntry) {
	p.t.Helper()
	run := enqueue(p.t, p.s, prRun(p.repo, p.n, head))
	if got := claim(p.t, p.s, "w"); got == nil || got.ID != run.ID {
		p.t.Fatalf("claimed %+v, want run %s", got, run.ID)
	}
	err := p.s.FinishRun(p.t.Context(), run.ID, "w", store.Result{Status: store.StatusSucceeded, Model: r.model,
		Arm: r.arm, PromptVersion: r.prompt, Duration: r.took, Cost: review.CostInfo{TotalCost: r.cost},
		Ledger: entries, Scope: review.Scope{Kind: review.ScopeFull}})
	if err != nil {
		p.t.Fatal(err)
	}
}

// TestQualityOfArms: 40 pull requests split between two arms by
// experiment.Choose, each reviewed twice by its arm (the arm "big",
// gpt-4o, fixes every finding, slower and dearer; the default arm,
// gpt-4o-mini, leaves its finding open), plus one pull request reviewed
// before arms were recorded (the default arm's), merged: the comparison
// read back from the store gives each arm its pull requests, addressed
// rate with interval, findings and cost per pull request and median run
// duration, and each finding's source names its model and prompt version.
func TestQualityOfArms(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	const repo, prs = "acme/shop", 40
	arms := []config.Experiment{{Name: "big", Model: "gpt-4o", Share: 0.5}}
	big := armRun{arm: "big", model: "gpt-4o", prompt: "prompt-v1", cost: 0.05, took: 60 * time.Second}
	def := armRun{arm: config.DefaultArm, model: "gpt-4o-mini", prompt: "prompt-v1", cost: 0.01, took: 20 * time.Second}
	old := armRun{model: "gpt-4o-mini", cost: 0.01, took: 30 * time.Second} // before arms and prompt versions were recorded
	now := time.Now().UTC().Truncate(time.Second)
	nBig := 0
	for n := 1; n <= prs+1; n++ {
		p := prStream{t: t, s: s, repo: repo, n: n}
		f1 := entry("f1", "a.go", 1, review.SeverityWarning, review.FindingOpen, "h1")
		r := old
		if n <= prs {
			r = def
			if experiment.Choose(arms, repo, n) == "big" {
				r = big
				nBig++
			}
		}
		p.reviewAs(r, "h1", f1)
		if r.arm == "big" {
			f1.State, f1.FixedSHA, f1.LastSeenSHA = review.FindingFixed, "h2", "h2"
		}
		p.reviewAs(r, "h2", f1)
		p.close(fmt.Sprint("close-", n), true, now.Add(-time.Duration(n)*time.Minute))
	}
	nDef := prs + 1 - nBig
	if nBig < 12 || nBig > 28 {
		t.Fatalf("%d of %d pull requests in the arm big, want 20 ± 8", nBig, prs)
	}

	since := now.Add(-24 * time.Hour)
	data, err := s.Quality(t.Context(), repo, since)
	if err != nil {
		t.Fatal(err)
	}
	rep := quality.Compute(since, data.Findings, data.PullRequests)
	rate := func(a, u int) quality.Rate {
		r := quality.Rate{Addressed: a, Unaddressed: u, N: a + u, Rate: float64(a) / float64(a+u)}
		r.Low, r.High = quality.Wilson(a, a+u, quality.Z95)
		return r
	}
	// The default arm: nDef-1 runs of 20 s and two of 30 s, median 20 s.
	want := []quality.Arm{
		{Name: "big", MergedPullRequests: nBig, AddressedRate: rate(nBig, 0), FindingsPerPR: 1, CostPerPR: 0.10,
			Runs: 2 * nBig, MedianRunSeconds: 60},
		{Name: config.DefaultArm, MergedPullRequests: nDef, AddressedRate: rate(0, nDef), FindingsPerPR: 1, CostPerPR: 0.02,
			Runs: 2 * nDef, MedianRunSeconds: 20},
	}
	if diff := cmp.Diff(want, rep.ByArm, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
		t.Errorf("arms (-want +got):\n%s", diff)
	}
	sources := map[string]int{}
	for _, g := range rep.BySource {
		sources[g.Key] = g.N
	}
	if diff := cmp.Diff(map[string]int{"gpt-4o@prompt-v1": nBig, "gpt-4o-mini@prompt-v1": nDef - 1, "gpt-4o-mini": 1}, sources); diff != "" {
		t.Errorf("findings by source (-want +got):\n%s", diff)
	}
}
