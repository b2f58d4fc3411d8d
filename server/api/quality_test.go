package api

import (
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/server/store/storetest"
)

func closedEntry(fp string, state review.FindingState) review.LedgerEntry {
	return review.LedgerEntry{Finding: review.Finding{FilePath: "a.go", LineStart: 1, LineEnd: 1, Side: review.SideRight,
		Severity: review.SeverityWarning, Category: review.CategoryBug, Title: fp, VerificationStatus: review.Verified,
		Fingerprint: fp}, State: state, FirstSeenSHA: "h1", LastSeenSHA: "h1", FixedSHA: map[bool]string{true: "h2"}[state == review.FindingFixed]}
}

// TestQualityRoutes: the repository's report and the installation-wide
// one, in the window asked for; bad windows and repositories refused.
func TestQualityRoutes(t *testing.T) {
	f := newFixture(t, "")
	now := time.Now().UTC().Truncate(time.Second)
	storetest.Closed(t, f.store, storetest.PR{Repository: "o/r", Number: 1, Model: "gpt-4o", Cost: 0.25, Merged: true,
		At: now.Add(-24 * time.Hour), Ledger: []review.LedgerEntry{closedEntry("fp-a", review.FindingFixed), closedEntry("fp-b", review.FindingOpen)}})
	storetest.Closed(t, f.store, storetest.PR{Repository: "o/other", Number: 2, Model: "gpt-4o", Cost: 0.25, Merged: true,
		At: now.Add(-100 * 24 * time.Hour), Ledger: []review.LedgerEntry{closedEntry("fp-c", review.FindingFixed)},
		Arm: "big", PromptVersion: "prompt-v1", Took: 90 * time.Second})

	rate := func(a, u int, r, low, high float64) map[string]any {
		return map[string]any{"addressed": float64(a), "dismissed": 0.0, "unaddressed": float64(u), "n": float64(a + u),
			"rate": r, "low": low, "high": high}
	}
	code, got := f.call(t, "GET", "/api/repos/o/r/quality", "", nil)
	if code != http.StatusOK {
		t.Fatalf("GET quality: %d %v", code, got)
	}
	body := got.(map[string]any)
	round := func(v any) any { return float64(int(v.(float64)*1000+0.5)) / 1000 }
	ar := body["addressed_rate"].(map[string]any)
	ar["low"], ar["high"] = round(ar["low"]), round(ar["high"])
	// Wilson 95% of 1 out of 2: [0.095, 0.905].
	if diff := cmp.Diff(rate(1, 1, 0.5, 0.095, 0.905), ar); diff != "" {
		t.Errorf("addressed_rate (-want +got):\n%s", diff)
	}
	for k, want := range map[string]any{"repository": "o/r", "merged_pull_requests": 1.0, "findings_per_pr": 2.0,
		"cost_per_pr": 0.25, "share_with_addressed": 1.0, "truncated": false} {
		if !cmp.Equal(want, body[k]) {
			t.Errorf("%s = %v, want %v", k, body[k], want)
		}
	}

	// The arms compared: only the default arm's pull request in the window.
	arms := body["by_arm"].([]any)
	if len(arms) != 1 || arms[0].(map[string]any)["arm"] != "default" || arms[0].(map[string]any)["merged_pull_requests"] != 1.0 {
		t.Errorf("by_arm = %v, want the default arm's one merged pull request", arms)
	}

	// Installation-wide, over 120 days: both pull requests.
	since := now.Add(-120 * 24 * time.Hour).Format(time.DateOnly)
	code, got = f.call(t, "GET", "/api/quality?since="+since, "", nil)
	if code != http.StatusOK {
		t.Fatalf("GET /api/quality: %d %v", code, got)
	}
	body = got.(map[string]any)
	if body["merged_pull_requests"] != 2.0 || len(body["by_repository"].([]any)) != 2 || body["repository"] != nil {
		t.Errorf("installation-wide report: %v merged pull requests, %d repositories, repository %v; want 2, 2, none",
			body["merged_pull_requests"], len(body["by_repository"].([]any)), body["repository"])
	}
	big := map[string]any{"arm": "big", "merged_pull_requests": 1.0, "closed_unmerged_pull_requests": 0.0,
		"addressed_rate":  map[string]any{"addressed": 1.0, "dismissed": 0.0, "unaddressed": 0.0, "n": 1.0, "rate": 1.0, "low": 0.207, "high": 1.0},
		"findings_per_pr": 1.0, "cost_per_pr": 0.25, "runs": 1.0, "median_run_seconds": 90.0}
	if arms = body["by_arm"].([]any); len(arms) != 2 {
		t.Fatalf("by_arm = %v, want the arms big and default", arms)
	}
	ar = arms[0].(map[string]any)["addressed_rate"].(map[string]any)
	ar["low"] = round(ar["low"])
	if diff := cmp.Diff(big, arms[0]); diff != "" {
		t.Errorf("by_arm: the arm big (-want +got):\n%s", diff)
	}

	for _, path := range []string{"/api/quality?since=yesterday", "/api/quality?since=2999-01-01",
		"/api/repos/o/r%20x/quality", "/api/quality?since=" + now.Add(-5000*24*time.Hour).Format(time.DateOnly)} {
		if code, got := f.call(t, "GET", path, "", nil); code != http.StatusBadRequest {
			t.Errorf("GET %s: %d %v, want 400", path, code, got)
		}
	}
}

// TestQualityGuard: the reports need the token, as every API route.
func TestQualityGuard(t *testing.T) {
	f := newFixture(t, "s3cret")
	for _, path := range []string{"/api/quality", "/api/repos/o/r/quality"} {
		if code, _ := f.call(t, "GET", path, "", nil); code != http.StatusUnauthorized {
			t.Errorf("GET %s without the token: %d, want 401", path, code)
		}
		if code, _ := f.call(t, "GET", path, "", map[string]string{"Authorization": "Bearer s3cret"}); code != http.StatusOK {
			t.Errorf("GET %s with the token: %d, want 200", path, code)
		}
	}
}
