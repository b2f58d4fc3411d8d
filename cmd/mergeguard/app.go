package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/palantir/go-githubapp/githubapp"
	"github.com/rs/zerolog"

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/github"
	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/pipeline"
	"github.com/mergeguard/mergeguard/server/api"
	"github.com/mergeguard/mergeguard/server/metrics"
	"github.com/mergeguard/mergeguard/server/store"
	"github.com/mergeguard/mergeguard/server/webhook"
	"github.com/mergeguard/mergeguard/server/worker"
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
// and the review workers on st. With an App, it first learns the App's bot
// login from GitHub.
func newGitHubApp(ctx context.Context, cfg config.Config, st *store.Store, log *zerolog.Logger, version string, mx *metrics.Metrics) (githubApp, error) {
	var (
		app           githubApp
		installations *github.Installations
	)
	if cfg.GitHub.App.Configured() {
		var err error
		installations, err = newInstallations(ctx, cfg, version, mx)
		if err != nil {
			return githubApp{}, err
		}
		log.Info().Str("login", installations.Login()).Msg("GitHub App identified")
		app.webhook, err = webhook.New(webhook.Deps{
			Secret:            cfg.GitHub.App.WebhookSecret.Value(),
			Store:             st,
			Recorder:          st.NewIntake(store.IntakeOptions{}),
			GitHub:            webhook.NewGitHub(installations),
			BotLogin:          installations.Login(),
			AppID:             cfg.GitHub.App.IntegrationID,
			MaxAttempts:       cfg.Workers.MaxAttempts,
			BodyBytesInFlight: cfg.GitHub.WebhookBytesInFlight,
			Metrics:           mx,
			Logger:            log,
		})
		if err != nil {
			return githubApp{}, err
		}
		app.pulls = pullResolver{store: st, installations: installations}
	}
	if cfg.Workers.Concurrency == 0 {
		log.Info().Msg("workers.concurrency is 0: this process reviews nothing")
		return app, nil
	}
	var err error
	app.workers, err = newWorkers(cfg, st, installations, log, mx)
	return app, err
}

// newInstallations makes the App's client creator and learns its login.
func newInstallations(ctx context.Context, cfg config.Config, version string, mx *metrics.Metrics) (*github.Installations, error) {
	var ghc githubapp.Config
	ghc.V3APIURL, ghc.V4APIURL = cfg.GitHub.V3APIURL, cfg.GitHub.V4APIURL
	ghc.App.IntegrationID = cfg.GitHub.App.IntegrationID
	ghc.App.PrivateKey = cfg.GitHub.App.PrivateKey.Value()
	cc, err := github.NewClientCreator(ghc, github.ClientOptions{
		Version: version, Timeout: cfg.GitHub.Timeout,
		Middleware: []githubapp.ClientMiddleware{mx.GitHubMiddleware()},
	})
	if err != nil {
		return nil, err
	}
	return github.NewInstallations(ctx, cc, cfg.GitHub.WebURL, github.PublisherOptions{MaxInlineComments: cfg.GitHub.MaxInlineComments})
}

// newWorkers builds the review workers; installations is nil without a
// GitHub App (pull request runs then fail).
func newWorkers(cfg config.Config, st *store.Store, installations *github.Installations, log *zerolog.Logger, mx *metrics.Metrics) (*worker.Pool, error) {
	deps, hasLLM := pipelineDeps(cfg.LLM, mx.LLMTransport(nil))
	if !hasLLM {
		log.Warn().Msg("no LLM configured (set OPENAI_API_KEY, or OPENAI_BASE_URL for a local server): built-in analyzers only")
		deps.Model = ""
	}
	host, err := os.Hostname()
	if err != nil {
		host = "mergeguard"
	}
	pl := pipeline.New(deps)
	wd := worker.Deps{Store: st, Reviewer: pl, PublicURL: cfg.Server.PublicURL,
		Model: deps.Model, Metrics: mx, Logger: log}
	if deps.LLM != nil {
		wd.Answerer = pl
	}
	if installations != nil {
		wd.GitHub = worker.Installations(installations)
	}
	return worker.New(wd, worker.Config{
		ID:            fmt.Sprintf("%s-%d", host, os.Getpid()),
		Workers:       cfg.Workers.Concurrency,
		Lease:         cfg.Workers.Lease,
		PollInterval:  cfg.Workers.PollInterval,
		ShutdownGrace: cfg.Server.ShutdownTimeout,
		RunTimeout:    cfg.Workers.RunTimeout,
		DefaultRepo:   cfg.Review,
		Retry:         worker.Retry{Base: cfg.Workers.RetryBase, Max: cfg.Workers.RetryMax},
		Budgets: worker.Budgets{
			ReviewMaxTokens:            cfg.Budgets.ReviewMaxTokens,
			InstallationDailyMaxTokens: cfg.Budgets.InstallationDailyMaxTokens,
			InstallationDailyMaxCost:   cfg.Budgets.InstallationDailyMaxCost,
		},
	})
}

// pullResolver resolves the pull requests of github_url reviews: the
// installation covering the repository from the store, the head and base
// from GitHub.
type pullResolver struct {
	store         *store.Store
	installations *github.Installations
}

func (r pullResolver) Resolve(ctx context.Context, owner, name string, number int) (int64, review.PullHead, error) {
	id, err := r.store.InstallationForRepo(ctx, owner+"/"+name)
	if errors.Is(err, store.ErrNotFound) {
		return 0, review.PullHead{}, api.ErrNotInstalled
	}
	if err != nil {
		return 0, review.PullHead{}, err
	}
	repo, err := r.installations.Repo(id, owner+"/"+name)
	if err != nil {
		return 0, review.PullHead{}, err
	}
	head, err := repo.Head(ctx, number) // review.ErrNotFound on 404
	return id, head, err
}
