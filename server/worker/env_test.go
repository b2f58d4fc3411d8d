package worker_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/rs/zerolog"

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/github"
	"github.com/mergeguard/mergeguard/github/githubtest"
	"github.com/mergeguard/mergeguard/github/markdown"
	"github.com/mergeguard/mergeguard/internal/retry"
	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/analyzer"
	"github.com/mergeguard/mergeguard/review/budget"
	"github.com/mergeguard/mergeguard/review/diff"
	"github.com/mergeguard/mergeguard/review/lifecycle"
	"github.com/mergeguard/mergeguard/review/llm"
	"github.com/mergeguard/mergeguard/review/llm/llmtest"
	"github.com/mergeguard/mergeguard/review/pipeline"
	"github.com/mergeguard/mergeguard/review/tools"
	"github.com/mergeguard/mergeguard/server/store"
	"github.com/mergeguard/mergeguard/server/store/storetest"
	"github.com/mergeguard/mergeguard/server/webhook"
	"github.com/mergeguard/mergeguard/server/worker"
)

// The pull request of the fixture payloads: Codertocat/Hello-World#2 of
// installation 1 at head ec26c3e.
const (
	owner      = "Codertocat"
	repoName   = "Hello-World"
	repoFull   = owner + "/" + repoName
	prNumber   = 2
	fixtureSHA = "ec26c3e57ca3a959ca5aad62de7213c562f8c821"
)

// env is MergeGuard's GitHub App on a real database, a fake GitHub and a
// fake LLM: the webhook intake and worker pools started by the test.
type env struct {
	t      *testing.T
	cfg    envConfig
	store  *store.Store
	raw    *pgxpool.Pool
	gh     *githubtest.Server
	llm    *llmtest.Server
	inst   *github.Installations
	hook   string
	secret []byte
	log    zerolog.Logger
}

// envConfig adjusts an env; most tests use the zero value.
type envConfig struct {
	// databaseURL is a migrated database of the test's own; empty creates
	// one on the shared test server.
	databaseURL string
	// githubTimeout bounds each attempt of a GitHub request; 0 is none.
	githubTimeout time.Duration
	// llmTimeout bounds each attempt of an LLM request; 0 is none.
	llmTimeout time.Duration
}

// newEnv starts everything but the workers; the fake LLM answers with
// answer.
func newEnv(t *testing.T, answer func(llmtest.Request) llmtest.Response) *env {
	t.Helper()
	return newEnvWith(t, answer, envConfig{})
}

// newEnvWith is newEnv adjusted by cfg.
func newEnvWith(t *testing.T, answer func(llmtest.Request) llmtest.Response, cfg envConfig) *env {
	t.Helper()
	e := &env{t: t, cfg: cfg, log: zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.InfoLevel)}
	var err error
	if cfg.databaseURL == "" {
		e.store, e.raw = storetest.Open(t)
	} else {
		e.store, e.raw = storetest.OpenURL(t, cfg.databaseURL)
	}

	e.gh = githubtest.New(t)
	app := e.gh.AppConfig(42)
	cc, err := github.NewClientCreator(app, github.ClientOptions{
		Timeout: cfg.githubTimeout,
		Retry:   github.RetryPolicy{MaxRetries: 1, MaxWait: time.Second, Backoff: 10 * time.Millisecond},
	})
	if err != nil {
		t.Fatal(err)
	}
	e.inst, err = github.NewInstallations(t.Context(), cc, "", github.PublisherOptions{MaxInlineComments: 30, DescriptionKey: markdown.DescriptionKey("test secret")})
	if err != nil {
		t.Fatal(err)
	}
	e.gh.ResetCalls() // GET /app at start is not the review's
	e.llm = llmtest.New(t, answer)
	e.secret = []byte(app.App.WebhookSecret)
	h, err := webhook.New(webhook.Deps{Config: config.Default().GitHub, Secret: app.App.WebhookSecret, Store: e.store, GitHub: webhook.NewGitHub(e.inst), Logger: &e.log})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	e.hook = srv.URL + webhook.Route
	return e
}

// deliver posts a signed delivery and fails the test unless it is answered
// 200.
func (e *env) deliver(event, id string, payload []byte) {
	e.t.Helper()
	req, err := githubtest.Delivery{Event: event, ID: id, Payload: payload}.Request(e.t.Context(), e.hook, e.secret)
	if err != nil {
		e.t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		e.t.Fatalf("delivery %s (%s): status %d, want 200", id, event, resp.StatusCode)
	}
}

// opened delivers the fixture's pull_request opened at head.
func (e *env) opened(id, head string) {
	e.t.Helper()
	e.deliver("pull_request", id, githubtest.SetFields(e.t, githubtest.Payload(e.t, "pull_request/opened.payload.json"),
		map[string]any{"pull_request.head.sha": head}))
}

// comment adds a comment by user to the pull request and delivers its
// issue_comment created.
func (e *env) comment(id, user, body string) {
	e.t.Helper()
	commentID := e.gh.AddIssueComment(owner, repoName, prNumber, githubtest.IssueComment{User: githubtest.User{Login: user, ID: 77, Type: "User"}, Body: body})
	payload := githubtest.SetFields(e.t, githubtest.Payload(e.t, "issue_comment/githubIssueCommentEvent.json"), map[string]any{
		"comment.body":           body,
		"comment.user.login":     user,
		"comment.id":             commentID,
		"installation.id":        1,
		"issue.number":           prNumber,
		"repository.name":        repoName,
		"repository.full_name":   repoFull,
		"repository.owner.login": owner,
	})
	e.deliver("issue_comment", id, payload)
}

// options are the worker settings of the tests: short leases and backoff.
func (e *env) options() worker.Config {
	return worker.Config{
		ID:            "test",
		Workers:       2,
		Lease:         time.Second,
		PollInterval:  50 * time.Millisecond,
		ShutdownGrace: 5 * time.Second,
		RunTimeout:    time.Minute,
		DefaultRepo:   config.DefaultRepo(),
		Retry:         retry.Backoff{Base: 20 * time.Millisecond, Max: 100 * time.Millisecond},
		Memory:        config.Memory{Dismissals: 500},
	}
}

// testTokenizers are the token counters of every test's pipelines, shared
// so that the vocabulary is loaded once per test binary rather than by
// each pipeline (about 0.4 s, 1.2 s under the race detector), as
// budget.Tokenizers is meant to be shared (one per process).
var testTokenizers = budget.NewTokenizers()

// testAnalyzers are the built-in analyzers of every test's pipelines,
// shared as a server shares them: the secret scan compiles gitleaks' rules
// once (0.2 s, a quarter of the package's CPU when each pipeline did).
var testAnalyzers = analyzer.Builtin()

// pipeline is the real review pipeline on the fake LLM, with the tools.
// The LLM client retries once, after a short backoff or what the fake asks
// (up to 2s).
func (e *env) pipeline() *pipeline.Pipeline { return e.pipelineWith(nil) }

// pipelineWith is pipeline with its LLM configuration adjusted by set
// (nil for none).
func (e *env) pipelineWith(set func(*config.LLM)) *pipeline.Pipeline {
	client := llm.New(llm.Config{BaseURL: e.llm.URL(), Model: "gpt-4o", MaxRetries: 1, Timeout: e.cfg.llmTimeout}, nil,
		llm.WithBackoff(20*time.Millisecond, 2*time.Second))
	cfg := config.Default().LLM
	cfg.Model, cfg.Prices, cfg.Temperature, cfg.Walkthrough = "gpt-4o", nil, 0, false
	if set != nil {
		set(&cfg)
	}
	return pipeline.New(pipeline.Deps{
		Config:    cfg,
		LLM:       client,
		Counter:   testTokenizers.ForModel("gpt-4o"),
		Analyzers: testAnalyzers,
		Tools:     func(src review.Source, d *diff.Diff) pipeline.Toolbox { return tools.New(src, d, config.Default().LLM) },
	})
}

// start runs a worker pool on st until the test ends or stop is called;
// stop returns once the pool has stopped.
func (e *env) start(st worker.Store, cfg worker.Config, reviewer lifecycle.Reviewer) (stop func()) {
	e.t.Helper()
	if reviewer == nil {
		reviewer = e.pipeline()
	}
	pool, err := worker.New(worker.Deps{
		Store: st, GitHub: worker.Installations(e.inst), Reviewer: reviewer, Answerer: e.pipeline(), Model: "gpt-4o", Logger: &e.log,
	}, cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(e.t.Context()))
	done := make(chan struct{})
	go func() {
		defer close(done)
		pool.Run(ctx)
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			<-done
		})
	}
	e.t.Cleanup(stop)
	return stop
}

// runs returns the runs, oldest first. It asks again when the database is
// out of reach (a test restarting it).
func (e *env) runs() []store.Run {
	e.t.Helper()
	runs, err := e.store.ListRuns(e.t.Context(), store.RunFilter{})
	for i := 0; store.Transient(err) && i < 10; i++ {
		time.Sleep(50 * time.Millisecond)
		runs, err = e.store.ListRuns(e.t.Context(), store.RunFilter{})
	}
	if err != nil {
		e.t.Fatal(err)
	}
	slices.Reverse(runs)
	return runs
}

// waitFor polls cond until it holds, failing the test after 30 seconds.
func (e *env) waitFor(what string, cond func() bool) {
	e.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			e.t.Fatalf("timed out waiting for %s; runs: %s", what, e.describeRuns())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitDone waits until n runs exist and all of them are final, and returns
// them oldest first.
func (e *env) waitDone(n int) []store.Run {
	e.t.Helper()
	var runs []store.Run
	e.waitFor(fmt.Sprintf("%d finished runs", n), func() bool {
		runs = e.runs()
		if len(runs) != n {
			return false
		}
		for _, r := range runs {
			if !r.Status.Final() {
				return false
			}
		}
		return true
	})
	return runs
}

func (e *env) describeRuns() string {
	var b strings.Builder
	for _, r := range e.runs() {
		fmt.Fprintf(&b, "\n  %s %s/%s attempts=%d reason=%q error=%q", r.ID, r.Trigger, r.Status, r.Attempts, r.StatusReason, r.Error)
	}
	return b.String()
}

// reviews returns the reviews posted on the pull request.
func (e *env) reviews() []githubtest.Review { return e.gh.Reviews(owner, repoName, prNumber) }

// checks waits until the repository has check runs and all are completed
// (a run completes its check after its end is recorded), and returns them.
func (e *env) checks() []githubtest.CheckRun {
	e.t.Helper()
	var out []githubtest.CheckRun
	e.waitFor("completed check runs", func() bool {
		out = e.gh.CheckRuns(owner, repoName)
		for _, c := range out {
			if c.Status != "completed" {
				return false
			}
		}
		return len(out) > 0
	})
	return out
}

// botComments waits for n comments of the bot on the pull request's
// conversation (a run's notice follows its recorded end) and returns them.
func (e *env) botComments(n int) []githubtest.IssueComment {
	e.t.Helper()
	var out []githubtest.IssueComment
	e.waitFor(fmt.Sprintf("%d bot comments", n), func() bool {
		out = out[:0]
		for _, c := range e.gh.IssueComments(owner, repoName, prNumber) {
			if c.User.Type == "Bot" {
				out = append(out, c)
			}
		}
		return len(out) >= n
	})
	return out
}

// findings returns where each stored finding of a run went, by title.
func (e *env) findings(runID string) map[string]string {
	e.t.Helper()
	fs, err := e.store.Findings(e.t.Context(), runID)
	if err != nil {
		e.t.Fatal(err)
	}
	out := make(map[string]string, len(fs))
	for _, f := range fs {
		out[f.Title] = f.Posted
	}
	return out
}
