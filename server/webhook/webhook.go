// Package webhook is MergeGuard's GitHub webhook intake: it checks each
// delivery's signature, records every delivery once and turns pull-request
// events, comment commands and the Re-run button of MergeGuard's check
// into queued review runs, and questions to MergeGuard (replies in its
// review threads, mentions, /mergeguard ask) into queued answer runs, and
// records MergeGuard's review threads resolved, unresolved or ignored on
// the finding ledger. It never
// reviews or answers anything itself: the workers of server/worker take
// the queued runs.
//
// Each delivery is recorded in one database transaction with what it
// changes; with a Recorder (store.Intake), concurrent deliveries share
// their transaction (group commit), so that a durable commit is paid once
// per batch. Handlers run synchronously in the request: GitHub gets its
// 2xx only once the delivery's transaction committed, and no in-memory
// queue can lose an event.
//
// The intake is MergeGuard's own rather than go-githubapp's dispatcher
// because the dispatcher (through go-github's ValidatePayload) reads any
// body whole, form-encoded ones included, before it checks anything: here
// the headers are checked first, bodies are held only within a byte budget,
// and nothing is parsed before its signature matched. GitHub's wire format
// (signature, headers, payload types) lives in package github.
package webhook

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/rs/zerolog"

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/github"
	"github.com/mergeguard/mergeguard/github/hook"
	"github.com/mergeguard/mergeguard/server/metrics"
)

// Route is the path GitHub posts webhooks to.
const Route = "/api/github/hook"

// MaxPayloadBytes is the largest delivery accepted; GitHub caps webhook
// payloads at 25 MB.
const MaxPayloadBytes = 25 << 20

// Deps are what the intake needs.
type Deps struct {
	// Secret is the App's webhook secret; it must not be empty.
	Secret string
	// Store records deliveries and queues runs.
	Store Store
	// Recorder, when set, records the deliveries that Store.RecordDelivery
	// would (pull requests' reviews queued, deliveries ignored, ...):
	// `mergeguard serve` passes a *store.Intake, which records concurrent
	// deliveries in one transaction. Nil means Store.
	Recorder Recorder
	// GitHub answers comment commands and review comments (permission
	// check, reaction, reply, thread resolved).
	GitHub GitHub
	// BotLogin is the App's bot account, "<slug>[bot]"
	// (github.Installations.Login), by which MergeGuard's review threads and
	// check runs are told from others', and mentions of it ("@<slug>")
	// found. Without it, review thread and check run deliveries are
	// recorded as ignored, and review comments are questions to MergeGuard
	// only in its threads or as /mergeguard ask.
	BotLogin string
	// AppID is the App's id (GITHUB_APP_INTEGRATION_ID); check runs whose
	// app id is another are not MergeGuard's. 0 compares the app's slug
	// only.
	AppID int64
	// MaxAttempts is how many times a queued run is tried; 0 means the
	// store's default.
	MaxAttempts int
	// Config is the github section as loaded (config.Load, which applies
	// the defaults once), taken as it is; its webhook_* keys bound the
	// bodies. webhook_bytes_in_flight caps the bytes of delivery bodies
	// held in memory at once, signature not yet checked included: a body
	// reserves its bytes a chunk at a time as they arrive; one that cannot
	// get more room (or announces more than fits) is answered 503. An
	// eighth of it is kept for the first chunk of each body, so that small
	// deliveries fit while large ones fill the rest. After
	// webhook_body_grace a body must have arrived at webhook_min_body_rate
	// bytes a second, averaged since the request began; a slower one is
	// answered 408 and its connection closed, and at most
	// webhook_slow_bodies_per_address bodies of one client address may
	// still be being read then (one more is answered 408).
	Config config.GitHub
	// ReadTimeout bounds the reading of a whole body, as the server's
	// read timeout does (the intake sets the connection's read deadline
	// itself); zero means none but the rate.
	ReadTimeout time.Duration
	// Reread, when set, is asked for the App's current intake when a
	// delivery's signature does not match: the App's secret may have just
	// been rotated, or the App created, by another replica. It re-reads
	// the stored App (at most so often) and returns the intake then
	// current; when that is another whose secret the delivery matches, it
	// handles the delivery, else the delivery is answered 401.
	Reread func(ctx context.Context) *Handler
	// Metrics counts deliveries by event and outcome; nil counts nothing.
	Metrics *metrics.Metrics
	// Logger is the base logger; every line adds the delivery id, event,
	// installation, repository and pull request it is about.
	Logger *zerolog.Logger
}

// eventHandler handles the deliveries of some events.
type eventHandler interface {
	Handles() []string
	Handle(ctx context.Context, eventType, deliveryID string, payload []byte) error
}

// Handler is the webhook intake, the handler of POST Route.
type Handler struct {
	secret   []byte
	handlers map[string]eventHandler
	bodies   *budget
	pace     pace
	reread   func(ctx context.Context) *Handler
	metrics  *metrics.Metrics
	logger   *zerolog.Logger
}

// New returns the intake. It refuses an empty secret: the signature check
// would be meaningless.
func New(deps Deps) (*Handler, error) {
	if deps.Secret == "" {
		return nil, errors.New("webhook: the GitHub App webhook secret is empty; set GITHUB_APP_WEBHOOK_SECRET")
	}
	if deps.Store == nil || deps.GitHub == nil || deps.Logger == nil {
		return nil, errors.New("webhook: store, GitHub and logger are required")
	}
	if deps.Metrics == nil {
		deps.Metrics = metrics.New() // recorded nowhere
	}
	if deps.Recorder != nil {
		deps.Store = recordingStore{Store: deps.Store, rec: deps.Recorder}
	}
	h := &Handler{secret: []byte(deps.Secret), handlers: map[string]eventHandler{}, reread: deps.Reread,
		metrics: deps.Metrics, logger: deps.Logger}
	h.bodies, h.pace = bodyLimits(deps)
	me := app{login: deps.BotLogin, id: deps.AppID}
	for _, eh := range []eventHandler{
		&pullRequestHandler{decode: hook.NewDecoder[hook.PullRequestEvent](), store: deps.Store, metrics: deps.Metrics,
			maxAttempts: deps.MaxAttempts},
		&issueCommentHandler{decode: hook.NewDecoder[hook.IssueCommentEvent](), store: deps.Store, github: deps.GitHub,
			maxAttempts: deps.MaxAttempts},
		&installationHandler{decodeInstallation: hook.NewDecoder[hook.InstallationEvent](),
			decodeRepositories: hook.NewDecoder[hook.InstallationRepositoriesEvent](), store: deps.Store},
		&reviewThreadHandler{decode: hook.NewDecoder[hook.PullRequestReviewThreadEvent](), store: deps.Store,
			github: deps.GitHub, app: me},
		&checkRunHandler{decode: hook.NewDecoder[hook.CheckRunEvent](), store: deps.Store, github: deps.GitHub,
			app: me, maxAttempts: deps.MaxAttempts},
		&reviewCommentHandler{decode: hook.NewDecoder[hook.PullRequestReviewCommentEvent](), store: deps.Store,
			github: deps.GitHub, app: me, maxAttempts: deps.MaxAttempts},
		&repositoryHandler{decode: hook.NewDecoder[hook.RepositoryEvent](), store: deps.Store},
	} {
		for _, event := range eh.Handles() {
			h.handlers[event] = eh
		}
	}
	return h, nil
}

// bodyLimits are the in-flight budget and the pace of bodies.
func bodyLimits(deps Deps) (*budget, pace) {
	g := deps.Config
	return newBudget(g.WebhookBytesInFlight, g.WebhookSlowBodiesPerAddress),
		pace{grace: g.WebhookBodyGrace, rate: g.WebhookMinBodyRate, timeout: deps.ReadTimeout}
}

// Register adds POST Route to mux.
func (h *Handler) Register(mux *http.ServeMux) { mux.Handle("POST "+Route, h) }

// ServeHTTP handles one delivery, synchronously: GitHub gets its 2xx only
// once the delivery is durably stored. The headers are checked before any
// of the body is read; the body is read into memory only within the
// in-flight budget, and parsed only after its signature matched.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	event := r.Header.Get("X-GitHub-Event")
	outcome := "unhandled"
	defer func() { h.metrics.Delivery(eventLabel(event), outcome) }()
	log := h.logger.With().Str(github.LogKeyEventType, event).Str(github.LogKeyDeliveryID, r.Header.Get("X-GitHub-Delivery")).Logger()
	ctx := context.WithValue(log.WithContext(r.Context()), outcomeKey{}, &outcome)

	var held int64
	defer func() { h.bodies.release(held) }()
	body := newPacedBody(w, r, h.pace, h.bodies)
	d, err := hook.ReadDelivery(r.Header, body, r.ContentLength, h.secret, MaxPayloadBytes, func(n int64) error {
		if held == 0 && !h.bodies.fits(r.ContentLength) || !h.bodies.grow(n, held) {
			return errBusy
		}
		held += n
		return nil
	})
	body.done()
	var mismatch *hook.MismatchError
	if errors.As(err, &mismatch) && h.reread != nil {
		if next := h.reread(ctx); next != nil && next != h {
			if d, ok := mismatch.Verify(next.secret); ok {
				log.Info().Msg("webhook delivery signed with the App's new secret")
				next.handle(ctx, w, d)
				return
			}
		}
	}
	if err != nil {
		outcome = reject(w, &log, err)
		return
	}
	h.handle(ctx, w, d)
}

// handle acts on a delivery whose signature matched.
func (h *Handler) handle(ctx context.Context, w http.ResponseWriter, d hook.Delivery) {
	handler, ok := h.handlers[d.Event]
	if !ok {
		status := http.StatusAccepted
		if d.Event == "ping" {
			status = http.StatusOK
		}
		w.WriteHeader(status)
		return
	}
	zerolog.Ctx(ctx).Debug().Msg("webhook delivery received")
	if err := handler.Handle(ctx, d.Event, d.ID, d.Payload); err != nil {
		respondError(ctx, w, err)
		return
	}
	w.WriteHeader(http.StatusOK)
}

// eventLabel bounds the metric's event label to the events the App
// subscribes to: the header of a rejected request is anyone's text.
func eventLabel(event string) string {
	switch event {
	case "pull_request", "issue_comment", "installation", "installation_repositories", "ping",
		"pull_request_review_thread", "check_run", "pull_request_review_comment", "repository":
		return event
	}
	return "other"
}

type outcomeKey struct{}

// setOutcome tells the intake what became of the delivery of ctx, for the
// deliveries metric.
func setOutcome(ctx context.Context, outcome string) {
	if p, ok := ctx.Value(outcomeKey{}).(*string); ok {
		*p = outcome
	}
}

// malformedError is a signed delivery whose payload cannot be decoded.
type malformedError struct{ err error }

func (e malformedError) Error() string { return "malformed payload: " + e.err.Error() }
func (e malformedError) Unwrap() error { return e.err }

// errBusy: the bodies in flight fill the budget; GitHub's redelivery, or a
// retry after Retry-After, will find room.
var errBusy = errors.New("too many webhook bodies in flight")

// reject answers a request that is not a delivery to act on, and returns
// the outcome for the deliveries metric: 400 without an event or delivery
// id, 415 when it is not JSON, 401 without a matching signature, 413 when
// larger than a payload may be, 408 when the body arrives too slowly, 503
// when the in-flight budget is full.
func reject(w http.ResponseWriter, log *zerolog.Logger, err error) string {
	status, outcome := http.StatusBadRequest, outcomeMalformed
	switch {
	case errors.Is(err, hook.ErrUnsigned), errors.Is(err, hook.ErrBadSignature):
		status, outcome = http.StatusUnauthorized, "unauthorized"
	case errors.Is(err, hook.ErrTooLarge):
		status, outcome = http.StatusRequestEntityTooLarge, "too_large"
	case errors.Is(err, hook.ErrNotJSON):
		status, outcome = http.StatusUnsupportedMediaType, "unsupported_media_type"
	case errors.Is(err, errSlow):
		status, outcome = http.StatusRequestTimeout, "too_slow"
		w.Header().Set("Connection", "close")
	case errors.Is(err, errBusy):
		status, outcome = http.StatusServiceUnavailable, "busy"
		w.Header().Set("Retry-After", "1")
	}
	log.Warn().Err(err).Int("status", status).Msg("rejected webhook delivery")
	http.Error(w, err.Error(), status)
	return outcome
}

// respondError answers a delivery its handler failed: 400 for a payload
// that is not the JSON GitHub sends, 500 otherwise (the delivery was not
// recorded, so GitHub's redelivery will be processed).
func respondError(ctx context.Context, w http.ResponseWriter, err error) {
	logger := zerolog.Ctx(ctx)
	var malformed malformedError
	if errors.As(err, &malformed) {
		setOutcome(ctx, outcomeMalformed)
		logger.Warn().Err(err).Msg("rejected webhook delivery")
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	setOutcome(ctx, "error")
	logger.Error().Err(err).Msg("webhook delivery failed")
	http.Error(w, http.StatusText(http.StatusInternalServerError), http.StatusInternalServerError)
}

// decodeError marks a payload that is not the JSON GitHub sends.
func decodeError(event string, err error) error {
	return malformedError{fmt.Errorf("decode %s payload: %w", event, err)}
}
