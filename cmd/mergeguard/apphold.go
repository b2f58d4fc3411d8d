package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/github"
	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/server/api"
	"github.com/mergeguard/mergeguard/server/metrics"
	"github.com/mergeguard/mergeguard/server/store"
	"github.com/mergeguard/mergeguard/server/webhook"
	"github.com/mergeguard/mergeguard/server/worker"
)

// appPollInterval is how often a replica looks for a new or changed App
// stored by /setup; a notification (store.ChannelApp) makes it look at
// once.
const appPollInterval = 5 * time.Second

// appRereadInterval is how often at most a delivery makes a replica read
// the stored App again: one that arrives while the replica has no App, or
// whose signature its App's secret does not verify.
const appRereadInterval = time.Second

// errNoApp is what the workers and github_url reviews get while no App
// is configured.
var errNoApp = errors.New("no GitHub App is configured: create one at /setup, or set GITHUB_APP_INTEGRATION_ID, GITHUB_APP_WEBHOOK_SECRET and GITHUB_APP_PRIVATE_KEY")

// appIdentity is what makes a GitHub App: its id, webhook secret and key.
type appIdentity struct {
	id                        int64
	webhookSecret, privateKey config.Secret
}

// appParts are the pieces built from one App identity.
type appParts struct {
	webhook       *webhook.Handler
	installations *github.Installations
	pulls         api.PullRequests
	// version is the stored App's version, 0 for the environment's.
	version int64
}

// appHolder holds the current GitHub App, swapped without a restart when
// /setup stores one (on this replica or another). It is the webhook
// route, the github_url resolver of the API and the workers' GitHub.
type appHolder struct {
	cfg     config.Config
	store   *store.Store
	log     *zerolog.Logger
	version string
	mx      *metrics.Metrics
	poll    time.Duration
	// intake writes the deliveries of whichever App is current in
	// group commits.
	intake *store.Intake

	cur atomic.Pointer[appParts]
	// rereading is held while the stored App is read again for a
	// delivery: the deliveries that arrive meanwhile wait for that read
	// rather than start their own. reread is when the last began.
	rereading sync.Mutex
	reread    time.Time
	// failed is the stored version that last failed to load, so that a
	// broken one is reported once, not at every poll.
	failed atomic.Int64
}

// build makes the webhook intake and the installations of an App; it asks
// GitHub for the App's bot login.
func (h *appHolder) build(ctx context.Context, id appIdentity) (*appParts, error) {
	installations, err := newInstallations(ctx, h.cfg, id, h.version, h.mx)
	if err != nil {
		return nil, err
	}
	h.log.Info().Str("login", installations.Login()).Int64("app_id", id.id).Msg("GitHub App identified")
	wh, err := webhook.New(webhook.Deps{
		Secret:      id.webhookSecret.Value(),
		Store:       h.store,
		Recorder:    h.intake,
		GitHub:      webhook.NewGitHub(installations),
		BotLogin:    installations.Login(),
		AppID:       id.id,
		MaxAttempts: h.cfg.Workers.MaxAttempts,
		Config:      h.cfg.GitHub,
		ReadTimeout: h.cfg.Server.ReadTimeout,
		Reread:      h.rereadWebhook,
		Metrics:     h.mx,
		Logger:      h.log,
	})
	if err != nil {
		return nil, err
	}
	return &appParts{webhook: wh, installations: installations,
		pulls: pullResolver{store: h.store, installations: installations}}, nil
}

// Register adds POST /api/github/hook, served by the current App.
func (h *appHolder) Register(mux *http.ServeMux) { mux.Handle("POST "+webhook.Route, h) }

// ServeHTTP hands a delivery to the current App's intake, or answers 503
// while there is none, even after reading the stored App again.
func (h *appHolder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := h.cur.Load()
	if p == nil {
		p = h.rereadApp(r.Context())
	}
	if p == nil {
		http.Error(w, "MergeGuard has no GitHub App yet: create one at /setup, or set GITHUB_APP_INTEGRATION_ID, "+
			"GITHUB_APP_WEBHOOK_SECRET and GITHUB_APP_PRIVATE_KEY.", http.StatusServiceUnavailable)
		return
	}
	p.webhook.ServeHTTP(w, r)
}

// Stored serves the App /setup just stored on this replica at once, not
// at the next notification: GitHub sends the installation delivery as
// soon as the user installs the App, and does not send it again.
func (h *appHolder) Stored(ctx context.Context) {
	h.rereading.Lock()
	defer h.rereading.Unlock()
	h.reload(ctx)
}

// rereadApp reads the stored App again for a delivery this replica
// cannot verify, at most once per appRereadInterval; deliveries that
// arrive while it reads wait for that read. It returns the App then
// current. An App from the environment or the configuration file is
// never replaced.
func (h *appHolder) rereadApp(ctx context.Context) *appParts {
	if h.cfg.GitHub.App.Configured() || !h.store.HasSecretKey() {
		return h.cur.Load()
	}
	h.rereading.Lock()
	defer h.rereading.Unlock()
	if time.Since(h.reread) >= appRereadInterval {
		h.reread = time.Now()
		h.reload(ctx)
	}
	return h.cur.Load()
}

// rereadWebhook is rereadApp for the intake (webhook.Deps.Reread).
func (h *appHolder) rereadWebhook(ctx context.Context) *webhook.Handler {
	if p := h.rereadApp(ctx); p != nil {
		return p.webhook
	}
	return nil
}

// Repo opens a repository through the current App (worker.GitHub).
func (h *appHolder) Repo(installationID int64, fullName string) (worker.Repo, error) {
	p := h.cur.Load()
	if p == nil {
		return nil, errNoApp
	}
	return worker.Installations(p.installations).Repo(installationID, fullName)
}

// Resolve resolves a github_url review through the current App
// (api.PullRequests).
func (h *appHolder) Resolve(ctx context.Context, owner, name string, number int) (int64, review.PullHead, error) {
	p := h.cur.Load()
	if p == nil {
		return 0, review.PullHead{}, fmt.Errorf("%w (%w)", api.ErrNotInstalled, errNoApp)
	}
	return p.pulls.Resolve(ctx, owner, name, number)
}

// Watch follows the App stored by /setup until ctx ends: at every
// notification on store.ChannelApp and every poll interval it compares
// the stored version with the one served and swaps in the stored App when
// they differ. An App from the environment or the configuration file
// wins: Watch then returns at once.
func (h *appHolder) Watch(ctx context.Context) {
	if h.cfg.GitHub.App.Configured() {
		return
	}
	if !h.store.HasSecretKey() {
		h.log.Info().Msg("MERGEGUARD_SECRET_KEY is not set: /setup is off and no stored GitHub App is loaded")
		return
	}
	wake := make(chan struct{}, 1)
	go h.store.Listen(ctx, store.ChannelApp, func(string) {
		select {
		case wake <- struct{}{}:
		default:
		}
	})
	tick := time.NewTicker(h.poll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-wake:
		case <-tick.C:
		}
		h.reload(ctx)
	}
}

// reload swaps in the stored App when its version differs from the one
// served. Failures are logged (once per version) and tried again later.
func (h *appHolder) reload(ctx context.Context) {
	v, err := h.store.AppCredentialsVersion(ctx)
	if err != nil {
		if ctx.Err() == nil {
			h.log.Warn().Err(err).Msg("stored GitHub App: read version")
		}
		return
	}
	if cur := h.cur.Load(); v == 0 || (cur != nil && cur.version == v) {
		return
	}
	creds, ok, err := h.store.AppCredentials(ctx)
	if err == nil && ok {
		var parts *appParts
		parts, err = h.build(ctx, appIdentity{id: creds.AppID, webhookSecret: creds.WebhookSecret, privateKey: creds.PrivateKey})
		if err == nil {
			parts.version = creds.Version
			h.cur.Store(parts)
			h.failed.Store(0)
			h.log.Info().Int64("app_id", creds.AppID).Str("slug", creds.Slug).Msg("serving the GitHub App stored by /setup")
			return
		}
	}
	if err != nil && h.failed.Swap(v) != v && ctx.Err() == nil {
		h.log.Error().Err(err).Int64("version", v).Msg("stored GitHub App: cannot load it (tried again every poll)")
	}
}
