// Package api serves MergeGuard's review API (docs/architecture.md):
// submitting a diff or a pull request for review, reading the verdict,
// following the pipeline live as Server-Sent Events, reading a pull request's
// runs and finding ledger, managing a repository's learnings, and reading
// the quality of its findings (docs/quality.md).
package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/rs/zerolog"

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/github"
	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/diff"
	"github.com/mergeguard/mergeguard/server/access"
	"github.com/mergeguard/mergeguard/server/events"
	"github.com/mergeguard/mergeguard/server/store"
)

// MaxBodyBytes caps a POST /api/review body (the diff text included).
const MaxBodyBytes = 10 << 20

// Store is what the API needs of the database.
type Store interface {
	EnqueueRun(ctx context.Context, r store.NewRun) (store.Run, error)
	GetRun(ctx context.Context, id string) (store.Run, error)
	Events(ctx context.Context, runID string, afterSeq, limit int) ([]store.StoredEvent, error)
	ListRuns(ctx context.Context, f store.RunFilter) ([]store.Run, error)
	Ledger(ctx context.Context, repo string, number int) ([]review.LedgerEntry, error)
	DismissFinding(ctx context.Context, repo string, number int, fingerprint, by, how string) (bool, error)
	LedgerHistory(ctx context.Context, repo string, number int) ([]store.LedgerChange, error)
	Suppressed(ctx context.Context, repo string, number int) ([]store.SuppressedFinding, error)
	Revive(ctx context.Context, repo string, number int, fingerprint, by string) (bool, error)
	LearningStore
	QualityStore
}

// PullRequests resolves a pull request to review through the GitHub App.
type PullRequests interface {
	// Resolve returns the installation covering owner/repo and the pull
	// request's head and base. It returns ErrNotInstalled when no
	// installation covers the repository and review.ErrNotFound when the
	// pull request does not exist.
	Resolve(ctx context.Context, owner, repo string, number int) (installationID int64, head review.PullHead, err error)
}

// ErrNotInstalled says no installation of the App covers a repository.
var ErrNotInstalled = errors.New("the MergeGuard GitHub App is not installed on this repository")

// Deps are the API's collaborators. PullRequests may be nil when the GitHub
// App is not configured: github_url reviews are then refused.
type Deps struct {
	Store        Store
	PullRequests PullRequests
	Hub          *events.Hub
	Access       access.Policy
	Logger       zerolog.Logger
	// Config is the api section as loaded (config.Load, which applies the
	// defaults once), taken as it is: the streams' heartbeat, poll, batch
	// and write timeout, and the limits (max_concurrent_submissions
	// POST /api/review requests handled at once, 503 beyond; max_streams
	// open event streams, 503 beyond, and max_streams_per_client per
	// client address, 429 beyond).
	Config config.API
	// GitHubWebURL is github.web_url: a github_url must be a pull request
	// on this host.
	GitHubWebURL string
}

// API serves the /api/review routes.
type API struct {
	d       Deps
	bodies  chan struct{} // a slot per body being read
	streams *streamLimit
	redact  redactor
}

// New returns the API over d.
func New(d Deps) *API {
	return &API{
		d:       d,
		bodies:  make(chan struct{}, d.Config.MaxConcurrentSubmissions),
		streams: newStreamLimit(d.Config.MaxStreams, d.Config.MaxStreamsPerClient),
		redact:  newRedactor(),
	}
}

// Register adds the API routes to mux.
func (a *API) Register(mux *http.ServeMux) {
	mux.Handle("POST /api/review", a.guard(a.create))
	mux.Handle("GET /api/review/{id}", a.guard(a.get))
	mux.Handle("GET /api/review/{id}/stream", a.guard(a.stream))
	mux.Handle("GET /api/pulls/{owner}/{name}/{number}", a.guard(a.pull))
	mux.Handle("POST /api/pulls/{owner}/{name}/{number}/findings/{fingerprint}/dismiss", a.guard(a.dismiss))
	mux.Handle("POST /api/pulls/{owner}/{name}/{number}/suppressed/{fingerprint}/revive", a.guard(a.revive))
	mux.Handle("GET /api/repos/{owner}/{name}/learnings", a.guard(a.listLearnings))
	mux.Handle("POST /api/repos/{owner}/{name}/learnings", a.guard(a.createLearning))
	mux.Handle("GET /api/repos/{owner}/{name}/learnings/{id}", a.guard(a.getLearning))
	mux.Handle("PATCH /api/repos/{owner}/{name}/learnings/{id}", a.guard(a.patchLearning))
	mux.Handle("DELETE /api/repos/{owner}/{name}/learnings/{id}", a.guard(a.deleteLearning))
	mux.Handle("GET /api/repos/{owner}/{name}/quality", a.guard(a.repoQuality))
	mux.Handle("GET /api/quality", a.guard(a.allQuality))
}

// Review serves what GET /api/review/{id} answers without the API's guard,
// for the web UI, which guards it itself (GET /reviews/{id}/verdict). The
// path value "id" names the run.
func (a *API) Review(w http.ResponseWriter, r *http.Request) { a.get(w, r) }

// Stream serves what GET /api/review/{id}/stream answers without the API's
// guard, for the web UI, which guards it itself (GET
// /reviews/{id}/stream).
func (a *API) Stream(w http.ResponseWriter, r *http.Request) { a.stream(w, r) }

// guard refuses cross-site state-changing requests (403), requests
// without the token (401) and browser requests without the CSRF token
// (403), in that order.
func (a *API) guard(h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := a.d.Access.CheckOrigin(r); err != nil {
			writeError(w, http.StatusForbidden, "cross-site request refused")
			return
		}
		if !a.d.Access.Allow(r) {
			msg := "missing or wrong bearer token (MERGEGUARD_API_TOKEN, or the token of the sign-in link the server logs at start)"
			w.Header().Set("WWW-Authenticate", `Bearer realm="mergeguard"`)
			writeError(w, http.StatusUnauthorized, msg)
			return
		}
		if err := access.CheckCSRF(r); err != nil {
			writeError(w, http.StatusForbidden, "a browser request needs the "+access.CSRFHeader+" header (from the web UI's page)")
			return
		}
		h(w, r)
	})
}

type createRequest struct {
	DiffText  string         `json:"diff_text"`
	GitHubURL string         `json:"github_url"`
	Options   review.Options `json:"options"`
	// Title names a diff run (at most MaxTitleRunes characters, one line).
	Title string `json:"title"`
}

// MaxTitleRunes caps the title of a diff review.
const MaxTitleRunes = 200

// checkTitle returns the title of a review request trimmed, or what is
// wrong with it: too long, more than one line, control characters, or
// given for a pull request review (which is named by its pull request).
func checkTitle(req createRequest) (string, string) {
	t := strings.TrimSpace(req.Title)
	switch {
	case t == "":
		return "", ""
	case req.DiffText == "":
		return "", "title names a diff review; a pull request review is named by its pull request"
	case utf8.RuneCountInString(t) > MaxTitleRunes:
		return "", fmt.Sprintf("title is longer than %d characters", MaxTitleRunes)
	case !utf8.ValidString(t):
		return "", "title is not valid UTF-8"
	case strings.IndexFunc(t, unicode.IsControl) >= 0:
		return "", "title must be one line of plain text (no control characters)"
	}
	return t, ""
}

type createResponse struct {
	ReviewID  string       `json:"review_id"`
	Status    store.Status `json:"status"`
	CreatedAt time.Time    `json:"created_at"`
	StreamURL string       `json:"stream_url"`
}

func (a *API) create(w http.ResponseWriter, r *http.Request) {
	if !a.admitBody(w, r) {
		return
	}
	defer func() { <-a.bodies }()
	req, ok := a.readCreate(w, r)
	if !ok {
		return
	}
	options, err := req.Options.Normalize()
	if err != nil {
		writeError(w, http.StatusBadRequest, "options."+err.Error())
		return
	}
	title, msg := checkTitle(req)
	if msg != "" {
		writeError(w, http.StatusBadRequest, msg)
		return
	}
	options.Title = title
	opts, err := json.Marshal(options)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "encode options")
		return
	}
	nr := store.NewRun{Trigger: store.TriggerAPI, Options: opts, RequestedBy: "api"}
	switch {
	case req.DiffText != "" && req.GitHubURL != "":
		writeError(w, http.StatusBadRequest, "give either diff_text or github_url, not both")
		return
	case strings.TrimSpace(req.DiffText) != "":
		if msg := checkDiffText(req.DiffText); msg != "" {
			writeError(w, http.StatusBadRequest, msg)
			return
		}
		nr.Mode = store.ModeDiff
		nr.DiffText = &req.DiffText
	case req.GitHubURL != "":
		if !a.resolvePull(w, r, req.GitHubURL, &nr) {
			return
		}
	default:
		writeError(w, http.StatusBadRequest, "give diff_text or github_url")
		return
	}
	run, err := a.d.Store.EnqueueRun(r.Context(), nr)
	if err != nil {
		a.d.Logger.Error().Err(err).Msg("enqueue review")
		writeError(w, http.StatusInternalServerError, "could not queue the review")
		return
	}
	w.Header().Set("Location", "/api/review/"+run.ID)
	writeJSON(w, http.StatusAccepted, createResponse{
		ReviewID:  run.ID,
		Status:    run.Status,
		CreatedAt: run.CreatedAt,
		StreamURL: "/api/review/" + run.ID + "/stream",
	})
}

// admitBody refuses, before reading it, a POST /api/review body that is
// not JSON (415) or announces more than MaxBodyBytes (413), and takes one
// of the MaxBodies slots (503 with Retry-After when all are taken; the
// caller frees it by receiving from a.bodies). It answers the client
// itself when it returns false.
func (a *API) admitBody(w http.ResponseWriter, r *http.Request) bool {
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		writeError(w, http.StatusUnsupportedMediaType, "the body must be JSON, sent with Content-Type: application/json")
		return false
	}
	if r.ContentLength > MaxBodyBytes {
		writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("body larger than %d bytes", MaxBodyBytes))
		return false
	}
	select {
	case a.bodies <- struct{}{}:
		return true
	default:
		w.Header().Set("Retry-After", "1")
		writeError(w, http.StatusServiceUnavailable, "too many reviews being submitted at once; retry shortly")
		return false
	}
}

// readCreate decodes a POST /api/review body (decodeJSON). It answers the
// client itself when it returns false.
func (a *API) readCreate(w http.ResponseWriter, r *http.Request) (createRequest, bool) {
	var req createRequest
	ok := decodeJSON(w, r, MaxBodyBytes, &req)
	return req, ok
}

// checkDiffText says what is wrong with a diff to review, or "".
func checkDiffText(text string) string {
	if strings.ContainsRune(text, 0) {
		return "diff_text holds a NUL character (\\u0000): binary content cannot be reviewed"
	}
	d, err := diff.ParseString(text)
	if err != nil {
		return "diff_text is not a unified diff: " + err.Error()
	}
	if len(d.Files) == 0 {
		return "diff_text holds no file changes"
	}
	return ""
}

// resolvePull fills nr for a review of the pull request at rawURL. It
// answers the client itself when it returns false.
func (a *API) resolvePull(w http.ResponseWriter, r *http.Request, rawURL string, nr *store.NewRun) bool {
	ref, err := github.ParsePullURL(rawURL, a.d.GitHubWebURL)
	if err != nil {
		writeError(w, http.StatusBadRequest, "github_url: "+err.Error())
		return false
	}
	owner, repo, number := ref.Owner, ref.Repo, ref.Number
	if a.d.PullRequests == nil {
		writeError(w, http.StatusUnprocessableEntity, "the GitHub App is not configured on this server")
		return false
	}
	installationID, head, err := a.d.PullRequests.Resolve(r.Context(), owner, repo, number)
	switch {
	case errors.Is(err, ErrNotInstalled):
		writeError(w, http.StatusUnprocessableEntity, fmt.Sprintf("%s/%s: %v", owner, repo, err))
		return false
	case errors.Is(err, review.ErrNotFound):
		writeError(w, http.StatusNotFound, fmt.Sprintf("pull request %s/%s#%d not found", owner, repo, number))
		return false
	case err != nil:
		a.d.Logger.Error().Err(err).Str("github_url", rawURL).Msg("resolve pull request")
		writeError(w, http.StatusBadGateway, "could not read the pull request from GitHub")
		return false
	}
	nr.Mode = store.ModePR
	nr.InstallationID = installationID
	nr.Repository = owner + "/" + repo
	nr.PRNumber = number
	nr.HeadSHA, nr.BaseSHA, nr.Branch = head.SHA, head.BaseSHA, head.Branch
	return true
}

// statusResponse is the answer for a run without a verdict (yet), and a
// run in the list of a pull request's runs.
type statusResponse struct {
	ReviewID     string       `json:"review_id"`
	Status       store.Status `json:"status"`
	Title        string       `json:"title,omitempty"`
	StatusReason string       `json:"status_reason,omitempty"`
	Error        string       `json:"error,omitempty"`
	CreatedAt    time.Time    `json:"created_at"`
	StartedAt    *time.Time   `json:"started_at,omitempty"`
	FinishedAt   *time.Time   `json:"finished_at,omitempty"`
	StreamURL    string       `json:"stream_url"`
	// HeadSHA and Verdict are the head a pull request run reviewed and the
	// verdict it reached; ReviewKind, KindReason and SinceSHA its scope
	// (full or incremental, why full, from which head).
	HeadSHA    string          `json:"head_sha,omitempty"`
	Verdict    review.Decision `json:"verdict,omitempty"`
	ReviewKind string          `json:"review_kind,omitempty"`
	KindReason string          `json:"kind_reason,omitempty"`
	SinceSHA   string          `json:"since_sha,omitempty"`
	// Mode is "answer" for an answer run, which carries the question, the
	// answer posted and how the reply was read.
	Mode           store.Mode            `json:"mode,omitempty"`
	Question       *review.Question      `json:"question,omitempty"`
	Answer         string                `json:"answer,omitempty"`
	Classification review.Classification `json:"classification,omitempty"`
}

// summary is run as a statusResponse, its error redacted.
func (a *API) summary(run store.Run) statusResponse {
	s := statusResponse{
		ReviewID: run.ID, Status: run.Status, StatusReason: run.StatusReason, Error: a.redact.text(run.Error),
		CreatedAt: run.CreatedAt, StartedAt: run.StartedAt, FinishedAt: run.FinishedAt,
		StreamURL: "/api/review/" + run.ID + "/stream",
		HeadSHA:   run.HeadSHA, Verdict: run.Verdict,
		ReviewKind: run.ReviewKind, KindReason: run.KindReason, SinceSHA: run.SinceSHA,
		Title: runTitle(run),
	}
	if run.Mode == store.ModeAnswer {
		if q, err := run.Question(); err == nil { // a run's options are its own JSON
			s.Question = &q
		}
		s.Mode, s.Answer, s.Classification = run.Mode, run.Answer, run.Classification
	}
	return s
}

// verdictResponse is the ReviewVerdict of a finished run, with the run's id
// and status beside the contract's fields.
type verdictResponse struct {
	ReviewID string       `json:"review_id"`
	Status   store.Status `json:"status"`
	Title    string       `json:"title,omitempty"`
	*review.Verdict
}

// runTitle is the title a diff run was given, "" for other runs.
func runTitle(run store.Run) string {
	o, err := run.ReviewOptions()
	if run.Mode != store.ModeDiff || err != nil { // a run's options are its own JSON
		return ""
	}
	return o.Title
}

func (a *API) get(w http.ResponseWriter, r *http.Request) {
	run, err := a.d.Store.GetRun(r.Context(), r.PathValue("id"))
	if errors.Is(err, store.ErrNotFound) {
		writeError(w, http.StatusNotFound, "no review with that id")
		return
	}
	if err != nil {
		a.d.Logger.Error().Err(err).Msg("get review")
		writeError(w, http.StatusInternalServerError, "could not read the review")
		return
	}
	if run.Result != nil && run.Status.Final() {
		writeJSON(w, http.StatusOK, verdictResponse{ReviewID: run.ID, Status: run.Status, Title: runTitle(run), Verdict: run.Result})
		return
	}
	writeJSON(w, http.StatusOK, a.summary(run))
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // the client went away; nothing to do
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}
