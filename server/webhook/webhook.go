// Package webhook is MergeGuard's GitHub webhook intake: it checks each
// delivery's signature, records every delivery once and turns pull-request
// events and comment commands into queued review runs, in one database
// transaction per delivery. It never reviews anything itself: the workers of
// server/worker take the queued runs.
//
// Handlers run synchronously in the request: GitHub gets its 2xx only once
// the delivery is durably stored, and no in-memory queue can lose an event.
// The body is read only after the headers pass (signature header present
// and well formed, JSON content type, delivery id, length), into a buffer
// of its announced length, while its HMAC is computed; it is parsed only
// once the HMAC matches.
package webhook

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/palantir/go-githubapp/githubapp"
	"github.com/rs/zerolog"

	"github.com/mergeguard/mergeguard/server/metrics"
)

// Route is the path GitHub posts webhooks to.
const Route = githubapp.DefaultWebhookRoute

// Bounds on what intake reads before a delivery's signature is checked:
// nothing of a request without a well-formed X-Hub-Signature-256, and at
// most MaxConcurrentBodies bodies at a time (a delivery waits up to
// bodySlotWait for a slot), of which at most MaxConcurrentLargeBodies above
// SmallPayloadBytes (no wait). Unverified bodies thus
// hold at most MaxConcurrentBodies×SmallPayloadBytes +
// MaxConcurrentLargeBodies×MaxPayloadBytes (82 MB) of memory. A request
// over a bound is answered 503 with Retry-After; GitHub does not redeliver
// by itself, so the bounds are generous for GitHub's own traffic (its
// pull_request and issue_comment payloads stay well under 1 MB).
const (
	// MaxPayloadBytes is the largest delivery accepted; GitHub caps webhook
	// payloads at 25 MB.
	MaxPayloadBytes = 25 << 20
	// SmallPayloadBytes is the size up to which a body needs no large slot.
	SmallPayloadBytes = 1 << 20
	// MaxConcurrentBodies is how many deliveries are read and handled at
	// once.
	MaxConcurrentBodies = 32
	// MaxConcurrentLargeBodies is how many of them may be above
	// SmallPayloadBytes.
	MaxConcurrentLargeBodies = 2
	// bodySlotWait is how long a delivery waits for a body slot.
	bodySlotWait = time.Second
	// retryAfter is the Retry-After of a 503 (seconds).
	retryAfter = "5"
	// maxDeliveryIDBytes bounds X-GitHub-Delivery (GitHub's are GUIDs, 36
	// bytes).
	maxDeliveryIDBytes = 100
)

// Deps are what the intake needs.
type Deps struct {
	// Secret is the App's webhook secret; it must not be empty.
	Secret string
	// Store records deliveries and queues runs.
	Store Store
	// GitHub answers comment commands (permission check, reaction, reply).
	GitHub GitHub
	// MaxAttempts is how many times a queued run is tried; 0 means the
	// store's default.
	MaxAttempts int
	// Metrics counts deliveries by event and outcome; nil counts nothing.
	Metrics *metrics.Metrics
	// Logger is the base logger; every line adds the delivery id, event,
	// installation, repository and pull request it is about.
	Logger *zerolog.Logger
}

// Handler is the webhook intake, the handler of POST Route.
type Handler struct {
	secret   []byte
	handlers map[string]githubapp.EventHandler
	// bodies and largeBodies are semaphores of the bodies being read and
	// handled.
	bodies, largeBodies chan struct{}
	metrics             *metrics.Metrics
	logger              *zerolog.Logger
}

// New returns the intake. It refuses an empty secret: the signature check
// would be skipped.
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
	h := &Handler{
		secret:      []byte(deps.Secret),
		handlers:    map[string]githubapp.EventHandler{},
		bodies:      make(chan struct{}, MaxConcurrentBodies),
		largeBodies: make(chan struct{}, MaxConcurrentLargeBodies),
		metrics:     deps.Metrics,
		logger:      deps.Logger,
	}
	for _, eh := range []githubapp.EventHandler{
		&pullRequestHandler{store: deps.Store, maxAttempts: deps.MaxAttempts},
		&issueCommentHandler{store: deps.Store, github: deps.GitHub, maxAttempts: deps.MaxAttempts},
		&installationHandler{store: deps.Store},
	} {
		for _, event := range eh.Handles() {
			h.handlers[event] = eh
		}
	}
	return h, nil
}

// Register adds POST Route to mux.
func (h *Handler) Register(mux *http.ServeMux) { mux.Handle("POST "+Route, h) }

// ServeHTTP handles one delivery: it checks the headers, reads the body
// while computing its HMAC, and hands the payload to the event's handler
// only once the signature matches.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	event, id := r.Header.Get("X-GitHub-Event"), r.Header.Get("X-GitHub-Delivery")
	outcome := "unhandled"
	defer func() { h.metrics.Delivery(eventLabel(event), outcome) }()
	logger := h.logger.With().Str(githubapp.LogKeyEventType, event).Str(githubapp.LogKeyDeliveryID, id).Logger()
	ctx := context.WithValue(logger.WithContext(r.Context()), outcomeKey{}, &outcome)
	r = r.WithContext(ctx)

	payload, rej := h.verified(r)
	if rej != nil {
		outcome = rej.outcome
		logger.Warn().Err(rej.err).Int("status", rej.status).Msg("rejected webhook delivery")
		if rej.status == http.StatusServiceUnavailable {
			w.Header().Set("Retry-After", retryAfter)
		}
		http.Error(w, rej.err.Error(), rej.status)
		return
	}
	defer h.release(r.ContentLength)
	handler, ok := h.handlers[event]
	if !ok {
		status := http.StatusAccepted
		if event == "ping" {
			status = http.StatusOK
		}
		w.WriteHeader(status)
		return
	}
	if err := handler.Handle(ctx, event, id, payload); err != nil {
		respondError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusOK)
}

// eventLabel bounds the metric's event label to the events the App
// subscribes to: the header of a rejected request is anyone's text.
func eventLabel(event string) string {
	switch event {
	case "pull_request", "issue_comment", "installation", "installation_repositories", "ping":
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

// respondError answers a delivery whose handler failed: 400 for a
// malformed payload, 500 otherwise (the delivery was not recorded, so
// GitHub's redelivery will be processed).
func respondError(w http.ResponseWriter, r *http.Request, err error) {
	logger := zerolog.Ctx(r.Context())
	var malformed malformedError
	if errors.As(err, &malformed) {
		setOutcome(r.Context(), outcomeMalformed)
		logger.Warn().Err(err).Msg("rejected webhook delivery")
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	setOutcome(r.Context(), "error")
	logger.Error().Err(err).Msg("webhook delivery failed")
	http.Error(w, http.StatusText(http.StatusInternalServerError), http.StatusInternalServerError)
}

// decodeError marks a payload that is not the JSON GitHub sends.
func decodeError(event string, err error) error {
	return malformedError{fmt.Errorf("decode %s payload: %w", event, err)}
}
