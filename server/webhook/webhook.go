// Package webhook is MergeGuard's GitHub webhook intake: it checks each
// delivery's signature, records every delivery once and turns pull-request
// events and comment commands into queued review runs, in one database
// transaction per delivery. It never reviews anything itself: the workers of
// server/worker take the queued runs.
//
// Handlers run synchronously in the request (go-githubapp's DefaultScheduler):
// GitHub gets its 2xx only once the delivery is durably stored, and no
// in-memory queue can lose an event.
package webhook

import (
	"context"
	"errors"
	"fmt"
	"mime"
	"net/http"

	"github.com/palantir/go-githubapp/githubapp"
	"github.com/rs/zerolog"

	"github.com/mergeguard/mergeguard/server/metrics"
)

// Route is the path GitHub posts webhooks to.
const Route = githubapp.DefaultWebhookRoute

// MaxPayloadBytes is the largest delivery accepted; GitHub caps webhook
// payloads at 25 MB.
const MaxPayloadBytes = 25 << 20

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
	dispatcher http.Handler
	metrics    *metrics.Metrics
	logger     *zerolog.Logger
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
	handlers := []githubapp.EventHandler{
		&pullRequestHandler{store: deps.Store, maxAttempts: deps.MaxAttempts},
		&issueCommentHandler{store: deps.Store, github: deps.GitHub, maxAttempts: deps.MaxAttempts},
		&installationHandler{store: deps.Store},
	}
	dispatcher := githubapp.NewEventDispatcher(handlers, deps.Secret,
		githubapp.WithScheduler(githubapp.DefaultScheduler()),
		githubapp.WithErrorCallback(respondError),
	)
	return &Handler{dispatcher: dispatcher, metrics: deps.Metrics, logger: deps.Logger}, nil
}

// Register adds POST Route to mux.
func (h *Handler) Register(mux *http.ServeMux) { mux.Handle("POST "+Route, h) }

// ServeHTTP handles one delivery.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, MaxPayloadBytes)
	outcome := "unhandled"
	ctx := context.WithValue(h.logger.WithContext(r.Context()), outcomeKey{}, &outcome)
	h.dispatcher.ServeHTTP(w, r.WithContext(ctx))
	h.metrics.Delivery(eventLabel(r.Header.Get("X-GitHub-Event")), outcome)
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

// respondError answers a delivery that was not handled: 401 when the
// signature is missing or wrong, 413 when the body is too large, 400 for
// malformed requests and payloads, 500 when the handler failed (the
// delivery was not recorded, so GitHub's redelivery will be processed).
func respondError(w http.ResponseWriter, r *http.Request, err error) {
	logger := zerolog.Ctx(r.Context())
	var (
		invalid   githubapp.ValidationError
		malformed malformedError
	)
	switch {
	case errors.As(err, &invalid):
		status, outcome := rejection(r, invalid)
		setOutcome(r.Context(), outcome)
		logger.Warn().Err(invalid.Cause).Int("status", status).Msg("rejected webhook delivery")
		http.Error(w, http.StatusText(status), status)
	case errors.As(err, &malformed):
		setOutcome(r.Context(), outcomeMalformed)
		logger.Warn().Err(err).Msg("rejected webhook delivery")
		http.Error(w, err.Error(), http.StatusBadRequest)
	default:
		setOutcome(r.Context(), "error")
		logger.Error().Err(err).Msg("webhook delivery failed")
		http.Error(w, http.StatusText(http.StatusInternalServerError), http.StatusInternalServerError)
	}
}

// rejection tells a signature failure from a malformed request, and names
// the outcome for the deliveries metric. go-github's ValidatePayload fails
// for an unparsable or unsupported Content-Type, a body that cannot be
// read, or a missing or wrong signature; the first two are checked here, so
// what remains is the signature.
func rejection(r *http.Request, invalid githubapp.ValidationError) (status int, outcome string) {
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(invalid.Cause, &tooLarge):
		return http.StatusRequestEntityTooLarge, "too_large"
	case invalid.EventType == "", !acceptedContentType(r.Header.Get("Content-Type")):
		return http.StatusBadRequest, outcomeMalformed
	}
	return http.StatusUnauthorized, "unauthorized"
}

func acceptedContentType(v string) bool {
	mt, _, err := mime.ParseMediaType(v)
	return err == nil && (mt == "application/json" || mt == "application/x-www-form-urlencoded")
}

// decodeError marks a payload that is not the JSON GitHub sends.
func decodeError(event string, err error) error {
	return malformedError{fmt.Errorf("decode %s payload: %w", event, err)}
}
