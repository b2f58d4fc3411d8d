package webhook_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mergeguard/mergeguard/github/githubtest"
	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/server/metrics"
	"github.com/mergeguard/mergeguard/server/store/storetest"
	"github.com/mergeguard/mergeguard/server/webhook"
)

// TestClosedGivesOutcomes: GitHub's closed delivery of a merged pull
// request gives its open finding the outcome unaddressed and its fixed one
// addressed, counted once in mergeguard_finding_outcomes_total; its
// redelivery counts nothing more.
func TestClosedGivesOutcomes(t *testing.T) {
	t.Parallel()
	m := metrics.New()
	in := newIntakeBatched(t, "", true, func(d *webhook.Deps) { d.Metrics = m })
	const repo = "Codertocat/Hello-World"
	finding := func(fp string, state review.FindingState) review.LedgerEntry {
		return review.LedgerEntry{Finding: review.Finding{FilePath: "a.go", LineStart: 1, LineEnd: 1, Side: review.SideRight,
			Severity: review.SeverityWarning, Category: review.CategoryBug, Title: fp, VerificationStatus: review.Verified,
			Fingerprint: fp}, State: state, FirstSeenSHA: "h1", LastSeenSHA: "h1"}
	}
	fixed := finding("fp-fixed", review.FindingFixed)
	fixed.FixedSHA = "h2"
	storetest.Reviewed(t, in.store, storetest.PR{Repository: repo, Number: 2, Model: "gpt-4o",
		Ledger: []review.LedgerEntry{finding("fp-open", review.FindingOpen), fixed}})

	payload := githubtest.SetFields(t, githubtest.Payload(t, "pull_request/closed.payload.json"),
		map[string]any{"pull_request.merged": true})
	for range 2 { // delivered, then redelivered
		if got := in.send(githubtest.Delivery{Event: "pull_request", ID: "close-1", Payload: payload}); got != http.StatusOK {
			t.Fatalf("status %d, want 200", got)
		}
	}
	got := map[string]string{}
	rows, err := in.raw.Query(t.Context(), `SELECT fingerprint, outcome || '/' || outcome_how || '/' || outcome_merged::text
		|| '/' || to_char(outcome_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS') FROM pr_findings WHERE repository = $1`, repo)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var fp, o string
		if err := rows.Scan(&fp, &o); err != nil {
			t.Fatal(err)
		}
		got[fp] = o
	}
	want := map[string]string{ // closed_at of GitHub's payload
		"fp-open":  "unaddressed//true/2019-05-15T15:21:18",
		"fp-fixed": "addressed/fixed/true/2019-05-15T15:21:18",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("outcomes (-want +got):\n%s", diff)
	}
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	for _, line := range []string{
		`mergeguard_finding_outcomes_total{category="bug",outcome="unaddressed",severity="warning",source="gpt-4o"} 1`,
		`mergeguard_finding_outcomes_total{category="bug",outcome="addressed",severity="warning",source="gpt-4o"} 1`,
	} {
		if !strings.Contains(rec.Body.String(), line) {
			t.Errorf("scrape lacks %s", line)
		}
	}
}
