// Package web serves MergeGuard's small web UI: the list of recent reviews,
// a live page per review fed by the event stream, and a form to review a
// pasted diff. Templates and assets are embedded; there is no build step.
package web

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/server/access"
	"github.com/mergeguard/mergeguard/server/store"
)

//go:embed templates/*.html static/*
var assets embed.FS

// Runs is what the UI reads from the database.
type Runs interface {
	ListRuns(ctx context.Context, f store.RunFilter) ([]store.Run, error)
	GetRun(ctx context.Context, id string) (store.Run, error)
}

// Deps are the UI's collaborators.
type Deps struct {
	Runs   Runs
	Access access.Policy
	Logger zerolog.Logger
	// GitHubURL is the web address of GitHub (https://github.com, or the
	// Enterprise host) used to link pull requests.
	GitHubURL string
}

// UI serves the web pages.
type UI struct {
	d     Deps
	pages map[string]*template.Template
}

// New parses the embedded templates.
func New(d Deps) (*UI, error) {
	if d.GitHubURL == "" {
		d.GitHubURL = "https://github.com"
	}
	funcs := template.FuncMap{"short": short}
	ui := &UI{d: d, pages: make(map[string]*template.Template)}
	for _, name := range []string{"index", "review", "new"} {
		t, err := template.New(name).Funcs(funcs).ParseFS(assets, "templates/layout.html", "templates/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("parse template %s: %w", name, err)
		}
		ui.pages[name] = t
	}
	return ui, nil
}

// Register adds the UI routes to mux.
func (u *UI) Register(mux *http.ServeMux) {
	static, _ := fs.Sub(assets, "static") // the embedded directory always exists
	mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	mux.Handle("GET /{$}", u.guard(u.index))
	mux.Handle("GET /new", u.guard(u.newReview))
	mux.Handle("GET /reviews/{id}", u.guard(u.review))
}

func (u *UI) guard(h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !u.d.Access.Allow(r, true) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Header().Set("Content-Security-Policy", "default-src 'self'; script-src 'self'")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(signInPage))
			return
		}
		h(w, r)
	})
}

// signInPage answers a page request without the API token: its button
// (static/app.js) asks for the token and keeps it in the SameSite=Strict
// cookie that authorises page loads.
const signInPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>MergeGuard: sign in</title>
<meta name="viewport" content="width=device-width, initial-scale=1"><link rel="stylesheet" href="/static/app.css"></head>
<body><main><h1>MergeGuard</h1>
<p>This MergeGuard needs its API token (MERGEGUARD_API_TOKEN), or a request from the server itself when no token is set.</p>
<p><button id="token-btn" type="button">Sign in with the API token</button></p>
</main><script src="/static/app.js"></script></body></html>
`

// RunView is a run as the pages show it.
type RunView struct {
	ID, Mode, Trigger, Status, Verdict string
	Repository, HeadSHA, PRURL         string
	PRNumber                           int
	Critical, Warning, Info, Style     int
	Tokens                             int
	Duration                           string
	Created                            time.Time
}

func (u *UI) view(r store.Run) RunView {
	v := RunView{
		ID: r.ID, Mode: string(r.Mode), Trigger: string(r.Trigger), Status: string(r.Status), Verdict: string(r.Verdict),
		Repository: r.Repository, HeadSHA: r.HeadSHA, PRNumber: r.PRNumber,
		Tokens: r.InputTokens + r.OutputTokens, Created: r.CreatedAt,
	}
	if r.Repository != "" && r.PRNumber > 0 {
		v.PRURL = strings.TrimSuffix(u.d.GitHubURL, "/") + "/" + r.Repository + "/pull/" + strconv.Itoa(r.PRNumber)
	}
	if r.Result != nil {
		s := r.Result.Stats
		v.Critical, v.Warning, v.Info, v.Style = s.Critical, s.Warning, s.Info, s.Style
	}
	if r.DurationMS > 0 {
		v.Duration = (time.Duration(r.DurationMS) * time.Millisecond).Round(100 * time.Millisecond).String()
	}
	return v
}

func (u *UI) index(w http.ResponseWriter, r *http.Request) {
	f := store.RunFilter{
		Repository: strings.TrimSpace(r.URL.Query().Get("repo")),
		Status:     store.Status(r.URL.Query().Get("status")),
		Limit:      100,
	}
	runs, err := u.d.Runs.ListRuns(r.Context(), f)
	if err != nil {
		u.fail(w, err, "list reviews")
		return
	}
	views := make([]RunView, len(runs))
	for i, run := range runs {
		views[i] = u.view(run)
	}
	u.render(w, "index", map[string]any{
		"Title":  "Reviews",
		"Runs":   views,
		"Filter": f,
		"Statuses": []store.Status{store.StatusQueued, store.StatusRunning, store.StatusSucceeded,
			store.StatusFailed, store.StatusSkipped, store.StatusSuperseded},
	})
}

func (u *UI) review(w http.ResponseWriter, r *http.Request) {
	run, err := u.d.Runs.GetRun(r.Context(), r.PathValue("id"))
	if errors.Is(err, store.ErrNotFound) {
		http.NotFound(w, r)
		return
	}
	if err != nil {
		u.fail(w, err, "get review")
		return
	}
	u.render(w, "review", map[string]any{
		"Title":  "Review " + short(run.ID),
		"Run":    u.view(run),
		"Stages": []string{review.StagePlanner, review.StageReviewer, review.StageVerifier, review.StageReporter},
	})
}

func (u *UI) newReview(w http.ResponseWriter, _ *http.Request) {
	u.render(w, "new", map[string]any{
		"Title":      "New review",
		"FocusAreas": review.Categories,
		"Severities": review.Severities,
	})
}

func (u *UI) render(w http.ResponseWriter, page string, data any) {
	var b strings.Builder
	if err := u.pages[page].ExecuteTemplate(&b, "layout", data); err != nil {
		u.fail(w, err, "render "+page)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", "default-src 'self'; style-src 'self'; script-src 'self'; connect-src 'self'")
	_, _ = w.Write([]byte(b.String())) // the client went away; nothing to do
}

func (u *UI) fail(w http.ResponseWriter, err error, what string) {
	u.d.Logger.Error().Err(err).Msg("web: " + what)
	http.Error(w, "Something went wrong reading the reviews; see the server log.", http.StatusInternalServerError)
}

func short(s string) string {
	if len(s) > 8 {
		return s[:8]
	}
	return s
}
