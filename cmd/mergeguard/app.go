package main

import (
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/palantir/go-githubapp/githubapp"
	"github.com/rs/zerolog"

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/github"
	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/diff"
	"github.com/mergeguard/mergeguard/review/llm"
	"github.com/mergeguard/mergeguard/review/pipeline"
	"github.com/mergeguard/mergeguard/review/tools"
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

// pipelineDeps builds the review pipeline's dependencies from the
// configuration, with the reviewer's tools. llmConfigured is false when
// neither an API key nor a non-default server is set: only the built-in
// analyzers review then.
func pipelineDeps(cfg config.Config) (deps pipeline.Deps, llmConfigured bool) {
	deps = pipeline.Deps{
		Model: cfg.LLM.Model, ContextTokens: cfg.LLM.ContextTokens, MaxOutputTokens: cfg.LLM.MaxOutputTokens,
		Concurrency: cfg.LLM.Concurrency, MaxTurns: cfg.LLM.MaxTurns, Prices: prices(cfg.LLM.Prices),
		Temperature: float32(cfg.LLM.Temperature),
		Tools: func(src review.Source, d *diff.Diff) pipeline.Toolbox {
			return tools.New(src, d, tools.Options{})
		},
	}
	if cfg.LLM.APIKey.IsSet() || strings.TrimRight(cfg.LLM.BaseURL, "/") != defaultOpenAIURL {
		deps.LLM = llm.New(llm.Config{BaseURL: cfg.LLM.BaseURL, APIKey: cfg.LLM.APIKey.Value(), Model: cfg.LLM.Model,
			Timeout: cfg.LLM.Timeout, MaxRetries: 3}, &http.Client{})
		return deps, true
	}
	return deps, false
}

// githubApp is the GitHub App half of `mergeguard serve`.
type githubApp struct {
	// webhook is the handler of POST /api/github/hook, nil without an App.
	webhook http.Handler
	// workers review queued runs, nil when the configuration runs none in
	// this process.
	workers *worker.Pool
}

// newGitHubApp builds the webhook intake (when the GitHub App is configured)
// and the review workers on st.
func newGitHubApp(cfg config.Config, st *store.Store, log *zerolog.Logger, version string) (githubApp, error) {
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
		cc, err = github.NewClientCreator(ghc, github.ClientOptions{Version: version, Timeout: githubTimeout})
		if err != nil {
			return githubApp{}, err
		}
		app.webhook, err = webhook.New(webhook.Deps{
			Secret:      cfg.GitHub.App.WebhookSecret.Value(),
			Store:       st,
			GitHub:      webhook.NewGitHub(cc),
			MaxAttempts: cfg.Workers.MaxAttempts,
			Logger:      log,
		})
		if err != nil {
			return githubApp{}, err
		}
	}
	if cfg.Workers.Concurrency == 0 {
		log.Info().Msg("workers.concurrency is 0: this process reviews nothing")
		return app, nil
	}

	deps, llmConfigured := pipelineDeps(cfg)
	if llmConfigured {
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
