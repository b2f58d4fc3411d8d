package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/palantir/go-githubapp/githubapp"
	"github.com/rs/zerolog"

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/github"
	"github.com/mergeguard/mergeguard/review/pipeline"
	"github.com/mergeguard/mergeguard/server/api"
	"github.com/mergeguard/mergeguard/server/metrics"
	"github.com/mergeguard/mergeguard/server/store"
	"github.com/mergeguard/mergeguard/server/webhook"
	"github.com/mergeguard/mergeguard/server/worker"
)

// githubTimeout bounds each attempt of a GitHub API request.
const githubTimeout = 30 * time.Second

// Retry backoff of runs that failed for a transient reason.
const (
	retryBase = 30 * time.Second
	retryMax  = 10 * time.Minute
)

// githubApp is the GitHub App half of `mergeguard serve`.
type githubApp struct {
	// webhook is the intake of POST /api/github/hook, nil without an App.
	webhook *webhook.Handler
	// pulls resolves github_url reviews of the API, nil without an App.
	pulls api.PullRequests
	// workers review queued runs, nil when the configuration runs none in
	// this process.
	workers *worker.Pool
}

// newGitHubApp builds the webhook intake (when the GitHub App is configured)
// and the review workers on st.
func newGitHubApp(cfg config.Config, st *store.Store, log *zerolog.Logger, version string, mx *metrics.Metrics) (githubApp, error) {
	var (
		app githubApp
		cc  githubapp.ClientCreator
	)
	if cfg.GitHub.App.Configured() {
		var ghc githubapp.Config
		ghc.V3APIURL, ghc.V4APIURL = cfg.GitHub.V3APIURL, cfg.GitHub.V4APIURL
		ghc.App.IntegrationID = cfg.GitHub.App.IntegrationID
		ghc.App.PrivateKey = cfg.GitHub.App.PrivateKey.Value()
		var err error
		cc, err = github.NewClientCreator(ghc, github.ClientOptions{
			Version: version, Timeout: githubTimeout,
			Middleware: []githubapp.ClientMiddleware{mx.GitHubMiddleware()},
		})
		if err != nil {
			return githubApp{}, err
		}
		app.webhook, err = webhook.New(webhook.Deps{
			Secret:      cfg.GitHub.App.WebhookSecret.Value(),
			Store:       st,
			GitHub:      webhook.NewGitHub(cc),
			MaxAttempts: cfg.Workers.MaxAttempts,
			Metrics:     mx,
			Logger:      log,
		})
		if err != nil {
			return githubApp{}, err
		}
		app.pulls = pullResolver{store: st, cc: cc}
	}
	if cfg.Workers.Concurrency == 0 {
		log.Info().Msg("workers.concurrency is 0: this process reviews nothing")
		return app, nil
	}

	deps, hasLLM := pipelineDeps(cfg.LLM, mx.LLMTransport(nil))
	if hasLLM {
		deps.LLM = worker.BudgetedLLM(deps.LLM)
	} else {
		log.Warn().Msg("no LLM configured (set OPENAI_API_KEY, or OPENAI_BASE_URL for a local server): built-in analyzers only")
		deps.Model = ""
	}
	host, err := os.Hostname()
	if err != nil {
		host = "mergeguard"
	}
	app.workers, err = worker.New(worker.Deps{
		Store:       st,
		GitHub:      cc,
		Reviewer:    pipeline.New(deps),
		PublicURL:   cfg.Server.PublicURL,
		DefaultRepo: cfg.Review,
		Model:       deps.Model,
		Metrics:     mx,
		Logger:      log,
	}, worker.Config{
		ID:            fmt.Sprintf("%s-%d", host, os.Getpid()),
		Workers:       cfg.Workers.Concurrency,
		Lease:         cfg.Workers.Lease,
		PollInterval:  cfg.Workers.PollInterval,
		ShutdownGrace: cfg.Server.ShutdownTimeout,
		Retry:         worker.Retry{Base: retryBase, Max: retryMax},
		Budgets: worker.Budgets{
			ReviewMaxTokens:            cfg.Budgets.ReviewMaxTokens,
			InstallationDailyMaxTokens: cfg.Budgets.InstallationDailyMaxTokens,
			InstallationDailyMaxCost:   cfg.Budgets.InstallationDailyMaxCost,
		},
	})
	if err != nil {
		return githubApp{}, err
	}
	return app, nil
}

// pullResolver resolves the pull requests of github_url reviews: the
// installation covering the repository from the store, the head and base
// from GitHub.
type pullResolver struct {
	store *store.Store
	cc    githubapp.ClientCreator
}

func (r pullResolver) Resolve(ctx context.Context, owner, repo string, number int) (api.PullRequest, error) {
	id, err := r.store.InstallationForRepo(ctx, owner+"/"+repo)
	if errors.Is(err, store.ErrNotFound) {
		return api.PullRequest{}, api.ErrNotInstalled
	}
	if err != nil {
		return api.PullRequest{}, err
	}
	client, err := r.cc.NewInstallationClient(id)
	if err != nil {
		return api.PullRequest{}, fmt.Errorf("installation client: %w", err)
	}
	head, err := github.PullHead(ctx, client, owner, repo, number) // review.ErrNotFound on 404
	if err != nil {
		return api.PullRequest{}, err
	}
	return api.PullRequest{InstallationID: id, HeadSHA: head.SHA, BaseSHA: head.BaseSHA, Branch: head.Ref}, nil
}
