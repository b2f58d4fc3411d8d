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
	"errors"
	"fmt"
	"mime"
	"net/http"

	"github.com/palantir/go-githubapp/githubapp"
	"github.com/rs/zerolog"
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
	// Logger is the base logger; every line adds the delivery id, event,
	// installation, repository and pull request it is about.
	Logger *zerolog.Logger
}

// New returns the handler of POST Route. It refuses an empty secret: the
// signature check would be skipped.
func New(deps Deps) (http.Handler, error) {
	if deps.Secret == "" {
		return nil, errors.New("webhook: the GitHub App webhook secret is empty; set GITHUB_APP_WEBHOOK_SECRET")
	}
	if deps.Store == nil || deps.GitHub == nil || deps.Logger == nil {
		return nil, errors.New("webhook: store, GitHub and logger are required")
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
	logger := deps.Logger
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, MaxPayloadBytes)
		dispatcher.ServeHTTP(w, r.WithContext(logger.WithContext(r.Context())))
	}), nil
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
		tooLarge  *http.MaxBytesError
		malformed malformedError
	)
	switch {
	case errors.As(err, &invalid):
		status := validationStatus(r, invalid)
		logger.Warn().Err(invalid.Cause).Int("status", status).Msg("rejected webhook delivery")
		http.Error(w, http.StatusText(status), status)
	case errors.As(err, &tooLarge):
		logger.Warn().Err(err).Msg("rejected webhook delivery")
		http.Error(w, http.StatusText(http.StatusRequestEntityTooLarge), http.StatusRequestEntityTooLarge)
	case errors.As(err, &malformed):
		logger.Warn().Err(err).Msg("rejected webhook delivery")
		http.Error(w, err.Error(), http.StatusBadRequest)
	default:
		logger.Error().Err(err).Msg("webhook delivery failed")
		http.Error(w, http.StatusText(http.StatusInternalServerError), http.StatusInternalServerError)
	}
}

// validationStatus tells a signature failure from a malformed request.
// go-github's ValidatePayload fails for an unparsable or unsupported
// Content-Type, a body that cannot be read, or a missing or wrong signature;
// the first two are checked here, so what remains is the signature.
func validationStatus(r *http.Request, invalid githubapp.ValidationError) int {
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(invalid.Cause, &tooLarge):
		return http.StatusRequestEntityTooLarge
	case invalid.EventType == "":
		return http.StatusBadRequest
	case !acceptedContentType(r.Header.Get("Content-Type")):
		return http.StatusBadRequest
	}
	return http.StatusUnauthorized
}

func acceptedContentType(v string) bool {
	mt, _, err := mime.ParseMediaType(v)
	return err == nil && (mt == "application/json" || mt == "application/x-www-form-urlencoded")
}

// decodeError marks a payload that is not the JSON GitHub sends.
func decodeError(event string, err error) error {
	return malformedError{fmt.Errorf("decode %s payload: %w", event, err)}
}
