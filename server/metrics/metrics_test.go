package metrics

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/mergeguard/mergeguard/review"
)

func scrape(t *testing.T, m *Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("scrape = %d", rec.Code)
	}
	return rec.Body.String()
}

func TestCountersAppearInScrape(t *testing.T) {
	m := New()
	m.Delivery("pull_request", "enqueued")
	m.Delivery("pull_request", "enqueued")
	m.Delivery("ping", "ignored")
	v := &review.Verdict{Verdict: review.DecisionRequestChanges, Stats: review.Stats{InputTokens: 1200, OutputTokens: 300, TotalCost: 0.5,
		SuggestionsApplied: 3, SuggestionsRejected: 2}}
	m.ReviewFinished("succeeded", "gpt-4o", 3*time.Second, v)
	m.PostFailure("422")
	m.FindingOutcome("addressed", "warning", "bug", "gpt-4o")
	m.FindingOutcome("addressed", "warning", "bug", "gpt-4o")
	m.FindingOutcome("dismissed", "info", "quality", "analyzer:shellcheck")
	m.WatchQueue(func(context.Context) (int, int, time.Duration, error) { return 4, 2, 90 * time.Second, nil })

	out := scrape(t, m)
	for _, want := range []string{
		`mergeguard_webhook_deliveries_total{event="pull_request",outcome="enqueued"} 2`,
		`mergeguard_webhook_deliveries_total{event="ping",outcome="ignored"} 1`,
		`mergeguard_reviews_total{status="succeeded",verdict="request_changes"} 1`,
		`mergeguard_llm_tokens_total{direction="input",model="gpt-4o"} 1200`,
		`mergeguard_llm_tokens_total{direction="output",model="gpt-4o"} 300`,
		`mergeguard_llm_cost_dollars_total{model="gpt-4o"} 0.5`,
		`mergeguard_post_failures_total{reason="422"} 1`,
		`mergeguard_suggestions_total{result="applied"} 3`,
		`mergeguard_suggestions_total{result="rejected"} 2`,
		`mergeguard_finding_outcomes_total{category="bug",outcome="addressed",severity="warning",source="gpt-4o"} 2`,
		`mergeguard_finding_outcomes_total{category="quality",outcome="dismissed",severity="info",source="analyzer:shellcheck"} 1`,
		`mergeguard_queue_depth{state="queued"} 4`,
		`mergeguard_queue_depth{state="running"} 2`,
		`mergeguard_queue_oldest_job_age_seconds 90`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("scrape lacks %q", want)
		}
	}
}

func TestQueueStatsErrorFailsOnlyThatMetric(t *testing.T) {
	m := New()
	m.WatchQueue(func(context.Context) (int, int, time.Duration, error) { return 0, 0, 0, errors.New("db down") })
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusInternalServerError {
		t.Errorf("scrape with a failing collector = %d, want 500 (promhttp's default HTTPErrorOnError)", rec.Code)
	}
}

func TestGitHubMiddleware(t *testing.T) {
	gh := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-RateLimit-Remaining", "4321")
		w.Header().Set("X-RateLimit-Resource", "core")
		if r.Method == http.MethodPost {
			w.WriteHeader(http.StatusUnprocessableEntity)
		}
	}))
	defer gh.Close()
	m := New()
	c := &http.Client{Transport: m.GitHubMiddleware()(http.DefaultTransport)}
	for _, method := range []string{http.MethodGet, http.MethodGet, http.MethodPost} {
		req, _ := http.NewRequestWithContext(t.Context(), method, gh.URL, nil)
		res, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
	}
	if got := testutil.ToFloat64(m.githubRequests.WithLabelValues("GET", "200")); got != 2 {
		t.Errorf("GET 200 = %v, want 2", got)
	}
	if got := testutil.ToFloat64(m.githubRequests.WithLabelValues("POST", "422")); got != 1 {
		t.Errorf("POST 422 = %v, want 1", got)
	}
	if got := testutil.ToFloat64(m.rateRemaining.WithLabelValues("core")); got != 4321 {
		t.Errorf("rate remaining = %v, want 4321", got)
	}
}

func TestStageTimer(t *testing.T) {
	m := New()
	now := time.Unix(0, 0)
	st := m.NewStageTimer(func() time.Time { return now })
	step := func(d time.Duration, typ review.EventType, stage string) {
		now = now.Add(d)
		st.Observe(review.Event{Type: typ, Stage: stage})
	}
	step(0, review.EventPipelineStarted, review.StagePlanner)
	step(2*time.Second, review.EventAgentHandoff, review.StageReviewer)
	step(5*time.Second, review.EventToolCalled, review.StageReviewer)
	step(1*time.Second, review.EventAgentHandoff, review.StageVerifier)
	step(1*time.Second, review.EventPipelineCompleted, review.StageReporter)

	got := map[string]float64{}
	fams, err := m.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != "mergeguard_stage_duration_seconds" {
			continue
		}
		for _, mt := range f.GetMetric() {
			got[mt.GetLabel()[0].GetValue()] = mt.GetHistogram().GetSampleSum()
		}
	}
	want := map[string]float64{"planner": 2, "reviewer": 6, "verifier": 1, "reporter": 0} // reporter: its zero series
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("stage seconds (-want +got):\n%s", diff)
	}
}

// TestSeriesExistBeforeTheFirstReview: the labelled series whose labels are
// known start at zero.
func TestSeriesExistBeforeTheFirstReview(t *testing.T) {
	out := scrape(t, New())
	for _, want := range []string{
		`mergeguard_reviews_total{status="succeeded",verdict="request_changes"} 0`,
		`mergeguard_reviews_total{status="failed",verdict=""} 0`,
		`mergeguard_review_duration_seconds_count{status="superseded"} 0`,
		`mergeguard_stage_duration_seconds_count{stage="verifier"} 0`,
		`mergeguard_suggestions_total{result="applied"} 0`,
		`mergeguard_suggestions_total{result="rejected"} 0`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("scrape lacks %s", want)
		}
	}
}
