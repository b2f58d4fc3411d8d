// Package api serves MergeGuard's review API (DESIGN.md section 6):
// submitting a diff or a pull request for review, reading the verdict, and
// following the pipeline live as Server-Sent Events.
package api

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/rs/zerolog"

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
	// GitHubWebURL is GitHub's web address (github.web_url); github_url
	// reviews must be on its host.
	GitHubWebURL string
	Logger       zerolog.Logger
	// Heartbeat is the interval of SSE comments that keep idle proxies from
	// closing a stream (default 15s).
	Heartbeat time.Duration
	// Poll is how often a stream re-reads its run even without a
	// notification, the safety net for missed NOTIFYs (default 5s).
	Poll time.Duration
}

// API serves the /api/review routes.
type API struct {
	d Deps
}

// New returns the API over d.
func New(d Deps) *API {
	if d.Heartbeat <= 0 {
		d.Heartbeat = 15 * time.Second
	}
	if d.Poll <= 0 {
		d.Poll = 5 * time.Second
	}
	return &API{d: d}
}

// Register adds the API routes to mux.
func (a *API) Register(mux *http.ServeMux) {
	mux.Handle("POST /api/review", a.guard(a.create))
	mux.Handle("GET /api/review/{id}", a.guard(a.get))
	mux.Handle("GET /api/review/{id}/stream", a.guard(a.stream))
}

func (a *API) guard(h http.HandlerFunc) http.Handler {
	cross := http.NewCrossOriginProtection()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A page of another site may make the browser send a request with
		// no custom header (a form posting text/plain): refuse what the
		// browser marks cross-site before anything else.
		if err := cross.Check(r); err != nil {
			writeError(w, http.StatusForbidden, "cross-origin request refused")
			return
		}
		if !a.d.Access.Allow(r, false) {
			msg := "missing or wrong bearer token"
			if a.d.Access.Token == "" {
				msg = "MERGEGUARD_API_TOKEN is not set: the API answers local requests only"
			}
			w.Header().Set("WWW-Authenticate", `Bearer realm="mergeguard"`)
			writeError(w, http.StatusUnauthorized, msg)
			return
		}
		h(w, r)
	})
}

type createRequest struct {
	DiffText  string         `json:"diff_text"`
	GitHubURL string         `json:"github_url"`
	Options   review.Options `json:"options"`
}

type createResponse struct {
	ReviewID  string       `json:"review_id"`
	Status    store.Status `json:"status"`
	CreatedAt time.Time    `json:"created_at"`
	StreamURL string       `json:"stream_url"`
}

func (a *API) create(w http.ResponseWriter, r *http.Request) {
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		writeError(w, http.StatusUnsupportedMediaType, "the body must be JSON, sent as Content-Type: application/json")
		return
	}
	var req createRequest
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	dec.DisallowUnknownFields()
	err := dec.Decode(&req)
	if err == nil && dec.Decode(&struct{}{}) != io.EOF {
		err = errors.New("data after the JSON object")
	}
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("body larger than %d bytes", tooBig.Limit))
			return
		}
		writeError(w, http.StatusBadRequest, "invalid JSON body: "+err.Error())
		return
	}
	options, err := req.Options.Normalize()
	if err != nil {
		writeError(w, http.StatusBadRequest, "options."+err.Error())
		return
	}
	opts, err := json.Marshal(options)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "encode options")
		return
	}
	nr := store.NewRun{Trigger: store.TriggerAPI, Options: opts, RequestedBy: "api"}
	switch {
	case strings.ContainsRune(req.DiffText, 0):
		writeError(w, http.StatusBadRequest, "diff_text holds a NUL character; send the diff as text")
		return
	case req.DiffText != "" && req.GitHubURL != "":
		writeError(w, http.StatusBadRequest, "give either diff_text or github_url, not both")
		return
	case strings.TrimSpace(req.DiffText) != "":
		d, err := diff.ParseString(req.DiffText)
		if err != nil {
			writeError(w, http.StatusBadRequest, "diff_text is not a unified diff: "+err.Error())
			return
		}
		if len(d.Files) == 0 {
			writeError(w, http.StatusBadRequest, "diff_text holds no file changes")
			return
		}
		nr.Mode = store.ModeDiff
		nr.DiffText = &req.DiffText
	case req.GitHubURL != "":
		owner, repo, number, err := ParsePullURL(req.GitHubURL, a.d.GitHubWebURL)
		if err != nil {
			writeError(w, http.StatusBadRequest, err.Error())
			return
		}
		if a.d.PullRequests == nil {
			writeError(w, http.StatusUnprocessableEntity, "the GitHub App is not configured on this server")
			return
		}
		installationID, head, err := a.d.PullRequests.Resolve(r.Context(), owner, repo, number)
		switch {
		case errors.Is(err, ErrNotInstalled):
			writeError(w, http.StatusUnprocessableEntity, fmt.Sprintf("%s/%s: %v", owner, repo, err))
			return
		case errors.Is(err, review.ErrNotFound):
			writeError(w, http.StatusNotFound, fmt.Sprintf("pull request %s/%s#%d not found", owner, repo, number))
			return
		case err != nil:
			a.d.Logger.Error().Err(err).Str("github_url", req.GitHubURL).Msg("resolve pull request")
			writeError(w, http.StatusBadGateway, "could not read the pull request from GitHub")
			return
		}
		nr.Mode = store.ModePR
		nr.InstallationID = installationID
		nr.Repository = owner + "/" + repo
		nr.PRNumber = number
		nr.HeadSHA, nr.BaseSHA, nr.Branch = head.SHA, head.BaseSHA, head.Branch
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

// ParsePullURL splits https://HOST/owner/repo/pull/N into its parts. HOST
// must be the host of webURL, the configured GitHub web address (GitHub
// Enterprise included; "" means https://github.com/): a URL of another host
// must not review a repository of the same name here.
func ParsePullURL(raw, webURL string) (owner, repo string, number int, err error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return "", "", 0, fmt.Errorf("github_url %q is not a pull request URL (https://github.com/owner/repo/pull/N)", raw)
	}
	if web, err := url.Parse(cmp.Or(webURL, "https://github.com/")); err != nil || !strings.EqualFold(u.Host, web.Host) {
		return "", "", 0, fmt.Errorf("github_url %q is not on this MergeGuard's GitHub (%s)", raw, cmp.Or(webURL, "https://github.com/"))
	}
	parts := strings.Split(strings.Trim(u.Path, "/"), "/")
	if len(parts) < 4 || parts[2] != "pull" || parts[0] == "" || parts[1] == "" {
		return "", "", 0, fmt.Errorf("github_url %q is not a pull request URL (https://github.com/owner/repo/pull/N)", raw)
	}
	n, err := strconv.Atoi(parts[3])
	if err != nil || n <= 0 {
		return "", "", 0, fmt.Errorf("github_url %q: %q is not a pull request number", raw, parts[3])
	}
	return parts[0], parts[1], n, nil
}

// statusResponse is the answer for a run without a verdict (yet).
type statusResponse struct {
	ReviewID     string       `json:"review_id"`
	Status       store.Status `json:"status"`
	StatusReason string       `json:"status_reason,omitempty"`
	Error        string       `json:"error,omitempty"`
	CreatedAt    time.Time    `json:"created_at"`
	StartedAt    *time.Time   `json:"started_at,omitempty"`
	FinishedAt   *time.Time   `json:"finished_at,omitempty"`
	StreamURL    string       `json:"stream_url"`
}

// verdictResponse is the ReviewVerdict of a finished run, with the run's id
// and status beside the contract's fields.
type verdictResponse struct {
	ReviewID string       `json:"review_id"`
	Status   store.Status `json:"status"`
	*review.Verdict
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
		writeJSON(w, http.StatusOK, verdictResponse{ReviewID: run.ID, Status: run.Status, Verdict: run.Result})
		return
	}
	writeJSON(w, http.StatusOK, statusResponse{
		ReviewID: run.ID, Status: run.Status, StatusReason: run.StatusReason, Error: run.Error,
		CreatedAt: run.CreatedAt, StartedAt: run.StartedAt, FinishedAt: run.FinishedAt,
		StreamURL: "/api/review/" + run.ID + "/stream",
	})
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
