// Package metrics defines MergeGuard's Prometheus metrics and the small
// hooks that record them: webhook intake, the job queue, reviews, pipeline
// stages, LLM calls, GitHub API calls and rate limits, and posting failures.
// Nothing here is global: the composition root builds one Metrics on its own
// registry and hands it to the parts that record.
package metrics

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/mergeguard/mergeguard/review"
)

// Metrics holds every collector. The zero value is not usable; use New.
type Metrics struct {
	reg *prometheus.Registry

	deliveries     *prometheus.CounterVec
	reviews        *prometheus.CounterVec
	reviewDuration *prometheus.HistogramVec
	stageDuration  *prometheus.HistogramVec
	llmDuration    *prometheus.HistogramVec
	tokens         *prometheus.CounterVec
	cost           *prometheus.CounterVec
	githubRequests *prometheus.CounterVec
	rateRemaining  *prometheus.GaugeVec
	postFailures   *prometheus.CounterVec
	outcomes       *prometheus.CounterVec
	suggestions    *prometheus.CounterVec
	jobsRetried    prometheus.Counter
	http           httpMetrics
}

// New builds the collectors on a fresh registry, with the Go runtime and
// process collectors beside them.
func New() *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	m.deliveries = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mergeguard_webhook_deliveries_total",
		Help: "Webhook deliveries by event and outcome (enqueued, ignored, duplicate, malformed, unauthorized, error).",
	}, []string{"event", "outcome"})
	m.reviews = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mergeguard_reviews_total",
		Help: "Finished review runs by status and verdict.",
	}, []string{"status", "verdict"})
	m.reviewDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "mergeguard_review_duration_seconds",
		Help:    "Wall time of review runs, claim to finish, by status.",
		Buckets: prometheus.ExponentialBuckets(0.5, 2, 12),
	}, []string{"status"})
	m.stageDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "mergeguard_stage_duration_seconds",
		Help:    "Time spent in each pipeline stage.",
		Buckets: prometheus.ExponentialBuckets(0.01, 2.5, 12),
	}, []string{"stage"})
	m.llmDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "mergeguard_llm_request_duration_seconds",
		Help:    "Latency of HTTP calls to the LLM server, by status code.",
		Buckets: prometheus.ExponentialBuckets(0.1, 2, 12),
	}, []string{"code"})
	m.tokens = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mergeguard_llm_tokens_total",
		Help: "LLM tokens used by finished reviews, by model and direction (input, output).",
	}, []string{"model", "direction"})
	m.cost = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mergeguard_llm_cost_dollars_total",
		Help: "Cost of LLM usage by model, from the configured price table.",
	}, []string{"model"})
	m.githubRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mergeguard_github_requests_total",
		Help: "GitHub API requests by method and status code.",
	}, []string{"method", "code"})
	m.rateRemaining = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "mergeguard_github_rate_limit_remaining",
		Help: "X-RateLimit-Remaining of the last GitHub response, of any installation, by resource.",
	}, []string{"resource"})
	m.outcomes = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mergeguard_finding_outcomes_total",
		Help: "Outcomes given to findings when their pull request closed (docs/quality.md), by outcome, severity, category and source (the model or analyzer).",
	}, []string{"outcome", "severity", "category", "source"})
	m.suggestions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mergeguard_suggestions_total",
		Help: "Suggestions of reported findings by result: applied (they apply to the file at the head and are posted as suggestion blocks) or rejected (posted as plain code with the reason); docs/quality.md.",
	}, []string{"result"})
	m.postFailures = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mergeguard_post_failures_total",
		Help: "Failures to post a review or comment to GitHub, by reason.",
	}, []string{"reason"})
	m.jobsRetried = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "mergeguard_jobs_retried_total",
		Help: "Review jobs handed back to the queue for a retry after a transient failure.",
	})
	m.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.deliveries, m.reviews, m.reviewDuration, m.stageDuration, m.llmDuration,
		m.tokens, m.cost, m.githubRequests, m.rateRemaining, m.postFailures, m.outcomes, m.suggestions, m.jobsRetried)
	m.http = newHTTPMetrics(m.reg)
	m.zero()
	return m
}

// zero creates the series of the labelled metrics whose labels are known
// in advance, at zero, so that dashboards and alerts have series before the
// first review.
func (m *Metrics) zero() {
	// Final statuses of runs, the verdicts they may carry, the stages.
	runStatuses := []string{"succeeded", "failed", "skipped", "superseded"}
	verdicts := []string{"", string(review.DecisionApprove), string(review.DecisionRequestChanges), string(review.DecisionComment)}
	stages := []string{review.StagePlanner, review.StageReviewer, review.StageVerifier, review.StageReporter}
	for _, s := range runStatuses {
		m.reviewDuration.WithLabelValues(s)
		for _, v := range verdicts {
			m.reviews.WithLabelValues(s, v)
		}
	}
	for _, s := range stages {
		m.stageDuration.WithLabelValues(s)
	}
	m.suggestions.WithLabelValues(review.SuggestionApplied)
	m.suggestions.WithLabelValues(review.SuggestionRejected)
}

// Handler serves the registry in the Prometheus exposition format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// Delivery counts one webhook delivery.
func (m *Metrics) Delivery(event, outcome string) {
	m.deliveries.WithLabelValues(event, outcome).Inc()
}

// ReviewFinished records a finished run; v may be nil for runs without a
// verdict.
func (m *Metrics) ReviewFinished(status string, model string, elapsed time.Duration, v *review.Verdict) {
	verdict := ""
	if v != nil {
		verdict = string(v.Verdict)
		if model == "" {
			model = "none"
		}
		m.tokens.WithLabelValues(model, "input").Add(float64(v.Stats.InputTokens))
		m.tokens.WithLabelValues(model, "output").Add(float64(v.Stats.OutputTokens))
		m.cost.WithLabelValues(model).Add(v.Stats.TotalCost)
		m.suggestions.WithLabelValues(review.SuggestionApplied).Add(float64(v.Stats.SuggestionsApplied))
		m.suggestions.WithLabelValues(review.SuggestionRejected).Add(float64(v.Stats.SuggestionsRejected))
	}
	m.reviews.WithLabelValues(status, verdict).Inc()
	m.reviewDuration.WithLabelValues(status).Observe(elapsed.Seconds())
}

// Stage records the time one pipeline stage took.
func (m *Metrics) Stage(stage string, d time.Duration) {
	m.stageDuration.WithLabelValues(stage).Observe(d.Seconds())
}

// PostFailure counts a failure to post to GitHub.
func (m *Metrics) PostFailure(reason string) { m.postFailures.WithLabelValues(reason).Inc() }

// FindingOutcome counts one outcome given to a finding when its pull
// request closed.
func (m *Metrics) FindingOutcome(outcome, severity, category, source string) {
	m.outcomes.WithLabelValues(outcome, severity, category, source).Inc()
}

// JobRetried counts a job handed back for a retry.
func (m *Metrics) JobRetried() { m.jobsRetried.Inc() }

// QueueStats reads the queue's state at scrape time.
type QueueStats func(ctx context.Context) (queued, running int, oldestQueued time.Duration, err error)

// WatchQueue registers gauges of the queue depth and the age of the oldest
// queued job, read from stats at each scrape (so every replica reports the
// shared queue; aggregate with max, not sum).
func (m *Metrics) WatchQueue(stats QueueStats) {
	m.reg.MustRegister(&queueCollector{stats: stats,
		depth: prometheus.NewDesc("mergeguard_queue_depth", "Review jobs by queue state (queued, running).", []string{"state"}, nil),
		age:   prometheus.NewDesc("mergeguard_queue_oldest_job_age_seconds", "Age of the oldest queued review job.", nil, nil),
	})
}

// WatchGauge registers a gauge read from fn at each scrape.
func (m *Metrics) WatchGauge(name, help string, fn func() float64) {
	m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, fn))
}

type queueCollector struct {
	stats      QueueStats
	depth, age *prometheus.Desc
}

func (c *queueCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.depth; ch <- c.age }

func (c *queueCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	queued, running, oldest, err := c.stats(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.depth, err)
		return
	}
	ch <- prometheus.MustNewConstMetric(c.depth, prometheus.GaugeValue, float64(queued), "queued")
	ch <- prometheus.MustNewConstMetric(c.depth, prometheus.GaugeValue, float64(running), "running")
	ch <- prometheus.MustNewConstMetric(c.age, prometheus.GaugeValue, oldest.Seconds())
}

// LLMTransport wraps the LLM client's transport to time every call.
func (m *Metrics) LLMTransport(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return promhttp.InstrumentRoundTripperDuration(m.llmDuration, base)
}

// GitHubMiddleware counts GitHub API calls and records the rate limit left,
// in the shape of go-githubapp's ClientMiddleware. One client creator serves
// every installation, so the rate limit is the last one any reported.
func (m *Metrics) GitHubMiddleware() func(http.RoundTripper) http.RoundTripper {
	return func(next http.RoundTripper) http.RoundTripper {
		return roundTripper(func(r *http.Request) (*http.Response, error) {
			res, err := next.RoundTrip(r)
			if err != nil {
				m.githubRequests.WithLabelValues(r.Method, "error").Inc()
				return res, err
			}
			m.githubRequests.WithLabelValues(r.Method, strconv.Itoa(res.StatusCode)).Inc()
			if v := res.Header.Get("X-RateLimit-Remaining"); v != "" {
				if n, err := strconv.Atoi(v); err == nil {
					resource := res.Header.Get("X-RateLimit-Resource")
					if resource == "" {
						resource = "core"
					}
					m.rateRemaining.WithLabelValues(resource).Set(float64(n))
				}
			}
			return res, nil
		})
	}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// StageTimer turns pipeline events into stage durations: a stage starts
// with its first event and ends when another stage's event arrives or the
// pipeline ends. One StageTimer serves one run.
type StageTimer struct {
	m       *Metrics
	now     func() time.Time
	stage   string
	started time.Time
}

// NewStageTimer returns a timer for one run; now may be nil (time.Now).
func (m *Metrics) NewStageTimer(now func() time.Time) *StageTimer {
	if now == nil {
		now = time.Now
	}
	return &StageTimer{m: m, now: now}
}

// Observe feeds one event of the run. It is not safe for concurrent use;
// call it from the run's event sink under its lock.
func (t *StageTimer) Observe(e review.Event) {
	end := e.Type == review.EventPipelineCompleted || e.Type == review.EventPipelineFailed
	if t.stage != "" && (end || (e.Stage != "" && e.Stage != t.stage)) {
		t.m.Stage(t.stage, t.now().Sub(t.started))
		t.stage = ""
	}
	if !end && e.Stage != "" && t.stage == "" {
		t.stage, t.started = e.Stage, t.now()
	}
}
