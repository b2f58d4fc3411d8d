package store_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/quality"
	"github.com/mergeguard/mergeguard/server/store"
)

// prStream drives pull requests through the store's own paths: runs that
// write the ledger, the dismissal routes, closings.
type prStream struct {
	t    *testing.T
	s    *store.Store
	repo string
	n    int
}

// review runs one review of the pull request at head by model, leaving
// entries on its ledger (each run costs $0.01).
func (p prStream) review(head, model string, entries ...review.LedgerEntry) {
	p.t.Helper()
	run := enqueue(p.t, p.s, prRun(p.repo, p.n, head))
	if got := claim(p.t, p.s, "w"); got == nil || got.ID != run.ID {
		p.t.Fatalf("claimed %+v, want run %s", got, run.ID)
	}
	err := p.s.FinishRun(p.t.Context(), run.ID, "w", store.Result{Status: store.StatusSucceeded, Model: model,
		Cost: review.CostInfo{TotalCost: 0.01}, Ledger: entries, Scope: review.Scope{Kind: review.ScopeFull}})
	if err != nil {
		p.t.Fatal(err)
	}
}

func (p prStream) close(id string, merged bool, at time.Time) {
	p.t.Helper()
	closePR(p.t, p.s, id, p.repo, p.n, merged, at)
}

// dismiss dismisses fp as a person does, by how: resolving its thread, the
// ignore command, a reply or 👎 read as feedback, the API.
func (p prStream) dismiss(fp string, commentID int64, how string) {
	p.t.Helper()
	ctx := p.t.Context()
	var (
		ok  bool
		err error
	)
	switch how {
	case review.DismissedThreadResolved:
		ok, err = p.s.ApplyThread(ctx, p.repo, p.n, review.ThreadChange{ThreadID: fmt.Sprint("T", commentID), CommentID: commentID, Resolved: true, By: "alice"})
	case review.DismissedCommand:
		d := store.Delivery{ID: fmt.Sprintf("ignore-%s-%d", p.repo, p.n), Event: "issue_comment", Action: "created",
			InstallationID: 7, Repository: p.repo, Outcome: "replied"}
		var res store.CommandResult
		res, err = p.s.RecordCommand(ctx, d, store.Command{Name: "ignore", User: "alice", PRNumber: p.n,
			Dismiss: &store.Dismissal{Fingerprint: fp, How: review.DismissedCommand}})
		ok = res.Dismissed
	case review.DismissedFeedback:
		ok, err = p.s.DismissFinding(ctx, p.repo, p.n, fp, "alice", review.DismissedFeedback)
	case review.DismissedAPI:
		ok, err = p.s.DismissFinding(ctx, p.repo, p.n, fp, "api", review.DismissedAPI)
	}
	if err != nil || !ok {
		p.t.Fatalf("dismiss %s of %s#%d by %s: %t, %v", fp, p.repo, p.n, how, ok, err)
	}
}

// TestQualityOfAStream: 35 pull requests with known outcomes, in seven
// kinds (fixed by a push, dismissed by each route, left open and merged,
// closed unmerged, reopened and merged with its closing delivered twice
// and an older closing delivered last), give exactly the addressed rates
// counted by hand, overall and per repository, severity and source.
//
// Each pull request has a model's warning (F1) and shellcheck's info (F2):
//
//	kind 0: F1 fixed by a push, F2 open, merged          → A, U
//	kind 1: F1 thread resolved, F2 fixed, merged         → D, A
//	kind 2: F1 /mergeguard ignore, F2 open, merged       → D, U
//	kind 3: F1 feedback (reply, 👎), F2 API, merged      → D, D
//	kind 4: both open, merged                            → U, U
//	kind 5: both open, closed unmerged                   → abandoned ×2
//	kind 6: F1 fixed, closed unmerged (F2 abandoned); reopened, a new
//	        warning F3 fixed, merged                     → F3 A
//
// Pull request i is kind i%7, of acme/api when i is even (else acme/web),
// reviewed by gpt-4o when i < 18 (else qwen2.5-coder).
func TestQualityOfAStream(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	now := time.Now().UTC().Truncate(time.Second)
	for i := range 35 {
		repo, model := "acme/web", "qwen2.5-coder"
		if i%2 == 0 {
			repo = "acme/api"
		}
		if i < 18 {
			model = "gpt-4o"
		}
		p := prStream{t: t, s: s, repo: repo, n: i + 1}
		f1 := entry("f1", "a.go", 1, review.SeverityWarning, review.FindingOpen, "h1")
		f1.CommentID = int64(1000 + i)
		f2 := entry("f2", "run.sh", 2, review.SeverityInfo, review.FindingOpen, "h1")
		f2.Finding.Agent = "analyzer:shellcheck"
		p.review("h1", model, f1, f2)
		fixed := func(e review.LedgerEntry) review.LedgerEntry {
			e.State, e.FixedSHA, e.LastSeenSHA = review.FindingFixed, "h2", "h2"
			return e
		}
		closed := now.Add(-time.Duration(i) * time.Hour)
		switch i % 7 {
		case 0:
			p.review("h2", model, fixed(f1))
		case 1:
			p.dismiss("f1", f1.CommentID, review.DismissedThreadResolved)
			p.review("h2", model, fixed(f2))
		case 2:
			p.dismiss("f1", f1.CommentID, review.DismissedCommand)
		case 3:
			p.dismiss("f1", f1.CommentID, review.DismissedFeedback)
			p.dismiss("f2", 0, review.DismissedAPI)
		case 5:
			p.close(fmt.Sprint("close-", i), false, closed)
			continue
		case 6:
			p.review("h2", model, fixed(f1))
			p.close(fmt.Sprint("close-first-", i), false, closed.Add(-48*time.Hour))
			f3 := entry("f3", "b.go", 3, review.SeverityWarning, review.FindingOpen, "h3")
			p.review("h3", model, f3)
			f3.State, f3.FixedSHA = review.FindingFixed, "h4"
			p.review("h4", model, f3)
			p.close(fmt.Sprint("close-", i), true, closed)
			p.close(fmt.Sprint("close-", i), true, closed)                           // redelivered
			p.close(fmt.Sprint("close-stale-", i), false, closed.Add(-50*time.Hour)) // older, delivered last
			continue
		}
		p.close(fmt.Sprint("close-", i), true, closed)
	}

	since := now.Add(-90 * 24 * time.Hour)
	data, err := s.Quality(t.Context(), "", since)
	if err != nil {
		t.Fatal(err)
	}
	if data.Truncated {
		t.Error("35 pull requests truncated")
	}
	rep := quality.Compute(since, data.Findings, data.PullRequests)
	type counts struct{ A, D, U int }
	of := func(r quality.Rate) counts { return counts{r.Addressed, r.Dismissed, r.Unaddressed} }
	byKey := func(gs []quality.Group) map[string]counts {
		m := map[string]counts{}
		for _, g := range gs {
			m[g.Key] = of(g.Rate)
		}
		return m
	}
	type summary struct {
		Overall                      counts
		Rate                         float64
		Repository, Severity, Source map[string]counts
		Merged, ClosedUnmerged       int
		Abandoned                    int
		DismissedHow                 map[string]int
		FindingsPerPR, CostPerPR     float64
		WithAddressed                float64
	}
	want := summary{
		Overall: counts{15, 20, 20}, Rate: 15.0 / 55,
		Repository: map[string]counts{"acme/api": {8, 9, 12}, "acme/web": {7, 11, 8}},
		Severity:   map[string]counts{"warning": {10, 15, 5}, "info": {5, 5, 15}},
		Source:     map[string]counts{"gpt-4o": {5, 9, 2}, "qwen2.5-coder": {5, 6, 3}, "analyzer:shellcheck": {5, 5, 15}},
		Merged:     30, ClosedUnmerged: 5, Abandoned: 15,
		DismissedHow: map[string]int{review.DismissedThreadResolved: 5, review.DismissedCommand: 5,
			review.DismissedFeedback: 5, review.DismissedAPI: 5},
		// 55 counted findings; 55 runs at $0.01 on merged pull requests (2,
		// 2, 1, 1, 1 and 4 of kinds 0-4 and 6, five each);
		// kinds 0, 1 and 6 have an addressed finding.
		FindingsPerPR: 55.0 / 30, CostPerPR: 0.55 / 30, WithAddressed: 15.0 / 30,
	}
	got := summary{Overall: of(rep.AddressedRate), Rate: rep.AddressedRate.Rate,
		Repository: byKey(rep.ByRepository), Severity: byKey(rep.BySeverity), Source: byKey(rep.BySource),
		Merged: rep.Merged, ClosedUnmerged: rep.ClosedUnmerged, Abandoned: rep.Abandoned, DismissedHow: rep.DismissedHow,
		FindingsPerPR: rep.FindingsPerPR, CostPerPR: rep.CostPerPR, WithAddressed: rep.WithAddressed}
	if diff := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
		t.Errorf("quality of the stream (-want +got):\n%s", diff)
	}

	// One repository's report holds its own pull requests only.
	data, err = s.Quality(t.Context(), "acme/api", since)
	if err != nil {
		t.Fatal(err)
	}
	api := quality.Compute(since, data.Findings, data.PullRequests)
	if diff := cmp.Diff(counts{8, 9, 12}, of(api.AddressedRate)); diff != "" || api.Merged != 16 {
		t.Errorf("acme/api: %d merged pull requests, want 16; counts (-want +got):\n%s", api.Merged, diff)
	}
}
