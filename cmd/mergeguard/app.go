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
	"github.com/mergeguard/mergeguard/github/markdown"
	"github.com/mergeguard/mergeguard/internal/retry"
	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/budget"
	"github.com/mergeguard/mergeguard/review/pipeline"
	"github.com/mergeguard/mergeguard/server/api"
	"github.com/mergeguard/mergeguard/server/metrics"
	"github.com/mergeguard/mergeguard/server/store"
	"github.com/mergeguard/mergeguard/server/worker"
)

// githubApp is the GitHub App half of `mergeguard serve`.
type githubApp struct {
	// holder is the current App: the intake of POST /api/github/hook, the
	// resolver of github_url reviews and the workers' GitHub. It holds none
	// until an App is configured or created at /setup.
	holder *appHolder
	// workers review queued runs, nil when the configuration runs none in
	// this process.
	workers *worker.Pool
}

// newGitHubApp builds the App holder and the review workers on st. With
// an App in the environment or configuration file it first learns the
// App's bot login from GitHub; otherwise it loads the App stored by /setup,
// when there is one (Watch then follows changes).
func newGitHubApp(ctx context.Context, p *process, cfg config.Config, st *store.Store, log *zerolog.Logger, version string, mx *metrics.Metrics) (githubApp, error) {
	h := &appHolder{cfg: cfg, store: st, log: log, version: version, mx: mx, poll: appPollInterval,
		intake: st.NewIntake(store.IntakeOptions{})}
	if cfg.GitHub.App.Configured() {
		a := cfg.GitHub.App
		parts, err := h.build(ctx, appIdentity{id: a.IntegrationID, webhookSecret: a.WebhookSecret, privateKey: a.PrivateKey})
		if err != nil {
			return githubApp{}, err
		}
		h.cur.Store(parts)
	} else if st.HasSecretKey() {
		h.reload(ctx) // logs what fails; Watch tries again
	}
	app := githubApp{holder: h}
	if cfg.Workers.Concurrency == 0 {
		log.Info().Msg("workers.concurrency is 0: this process reviews nothing")
		return app, nil
	}
	var err error
	app.workers, err = newWorkers(ctx, p, cfg, st, h, log, mx)
	return app, err
}

// githubOptions are the options of MergeGuard's GitHub clients (the App's,
// a token's, a signed-in person's): each attempt's timeout and the retry
// policy, from the configuration.
func githubOptions(g config.GitHub, version string) github.ClientOptions {
	return github.ClientOptions{Version: version, Timeout: g.Timeout, Retry: github.RetryPolicy{
		MaxRetries: g.MaxRetries, MaxWait: g.RetryMaxWait, Backoff: g.RetryBackoff, MinWriteInterval: g.MinWriteInterval,
	}}
}

// newInstallations makes the App's client creator and learns its login.
func newInstallations(ctx context.Context, cfg config.Config, id appIdentity, version string, mx *metrics.Metrics) (*github.Installations, error) {
	var ghc githubapp.Config
	ghc.V3APIURL, ghc.V4APIURL = cfg.GitHub.V3APIURL, cfg.GitHub.V4APIURL
	ghc.App.IntegrationID = id.id
	ghc.App.PrivateKey = id.privateKey.Value()
	opts := githubOptions(cfg.GitHub, version)
	opts.Middleware = []githubapp.ClientMiddleware{mx.GitHubMiddleware()}
	cc, err := github.NewClientCreator(ghc, opts)
	if err != nil {
		return nil, err
	}
	// The markers of MergeGuard's section of a description are signed
	// with a key derived from the webhook secret of this App, which only
	// MergeGuard and GitHub hold: the configured one or the one /setup
	// stored (the configuration's is empty then). The holder builds new
	// installations whenever it swaps in another App, so the key follows
	// the App in use.
	return github.NewInstallations(ctx, cc, cfg.GitHub.WebURL, github.PublisherOptions{MaxInlineComments: cfg.GitHub.MaxInlineComments,
		DescriptionKey: markdown.DescriptionKey(id.webhookSecret.Value())})
}

// newWorkers builds the review workers; gh resolves through the App
// holder (pull request runs fail while it holds no App).
func newWorkers(ctx context.Context, p *process, cfg config.Config, st *store.Store, gh worker.GitHub, log *zerolog.Logger, mx *metrics.Metrics) (*worker.Pool, error) {
	known, err := st.Corrections(ctx)
	if err != nil {
		return nil, err
	}
	deps, hasLLM := pipelineDeps(p, cfg.LLM, mx.LLMTransport(nil), budget.NewCorrections(known), st, func(err error) {
		log.Warn().Err(err).Msg("token correction not stored (kept in memory)")
	})
	if !hasLLM {
		log.Warn().Msg("no LLM configured (set OPENAI_API_KEY, or OPENAI_BASE_URL for a local server): built-in analyzers only")
		deps.Config.Model, deps.Config.Experiments = "", nil
	}
	host, err := os.Hostname()
	if err != nil {
		host = "mergeguard"
	}
	pl := pipeline.New(deps)
	wd := worker.Deps{Store: st, GitHub: gh, Reviewer: pl, PublicURL: cfg.Server.PublicURL,
		Model: deps.Config.Model, Metrics: mx, Logger: log}
	if deps.LLM != nil {
		wd.Answerer = pl
	}
	return worker.New(wd, worker.Config{
		ID:            fmt.Sprintf("%s-%d", host, os.Getpid()),
		Workers:       cfg.Workers.Concurrency,
		Lease:         cfg.Workers.Lease,
		PollInterval:  cfg.Workers.PollInterval,
		ShutdownGrace: cfg.Server.ShutdownTimeout,
		RunTimeout:    cfg.Workers.RunTimeout,
		DefaultRepo:   cfg.Review,
		Retry:         retry.Backoff{Base: cfg.Workers.RetryBase, Max: cfg.Workers.RetryMax},
		Budgets:       cfg.Budgets,
		Experiments:   deps.Config.Experiments,
		Memory:        cfg.Memory,
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
