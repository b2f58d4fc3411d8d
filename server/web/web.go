// Package web serves MergeGuard's small web UI: the list of recent reviews,
// a live page per review fed by the event stream, a form to review a
// pasted diff, a pull request's page and a repository's learnings.
// Templates and assets are embedded; there is no build step.
package web

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/mergeguard/mergeguard/github/oauth"
	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/server/access"
	"github.com/mergeguard/mergeguard/server/api"
	"github.com/mergeguard/mergeguard/server/store"
)

//go:embed templates/*.html static/*
var assets embed.FS

// Runs is what the UI reads from the database: runs, the finding ledger
// of pull requests, repositories' learnings and the quality reports'
// outcomes.
type Runs interface {
	api.QualityStore
	ListRuns(ctx context.Context, f store.RunFilter) ([]store.Run, error)
	GetRun(ctx context.Context, id string) (store.Run, error)
	Ledger(ctx context.Context, repo string, number int) ([]review.LedgerEntry, error)
	LedgerHistory(ctx context.Context, repo string, number int) ([]store.LedgerChange, error)
	Learnings(ctx context.Context, repo string, status review.LearningStatus) ([]review.Learning, error)
	RepositoryIDs(ctx context.Context, repo string, number int) ([]int64, error)
	RepositoryIDsOf(ctx context.Context, names []string) (map[string][]int64, error)
	// Suppressed and Revive are the memory of dismissals of a pull
	// request: what its reviews did not post, and a writer's revival.
	Suppressed(ctx context.Context, repo string, number int) ([]store.SuppressedFinding, error)
	Revive(ctx context.Context, repo string, number int, fingerprint, by string) (bool, error)
}

// ReviewData serves a run's status or verdict and its live events, as
// GET /api/review/{id} and its stream do (the path value "id" names the
// run); the UI guards them itself (api.API).
type ReviewData interface {
	Review(w http.ResponseWriter, r *http.Request)
	Stream(w http.ResponseWriter, r *http.Request)
}

// Deps are the UI's collaborators.
type Deps struct {
	Runs Runs
	// Access decides who the viewer is: Access.Sessions must be set for
	// anybody to sign in.
	Access access.Policy
	Logger zerolog.Logger
	// GitHubURL is the web address of GitHub (https://github.com, or the
	// Enterprise host) used to link pull requests.
	GitHubURL string
	// Reviews serves the review page's data; nil leaves those routes out.
	Reviews ReviewData
	// GitHub, OAuthApp and PublicURL (server.public_url, the base of the
	// OAuth callback) enable "Sign in with GitHub"; any of them unset
	// leaves it off. GitHub also answers what a signed-in person may read.
	GitHub    GitHub
	OAuthApp  OAuthApp
	PublicURL string
}

// UI serves the web pages.
type UI struct {
	d     Deps
	pages map[string]*template.Template
	vis   *visibility
	// throttle limits failed token sign-ins (in this process).
	throttle *access.Throttle
}

// New parses the embedded templates.
func New(d Deps) (*UI, error) {
	if d.GitHubURL == "" {
		d.GitHubURL = "https://github.com"
	}
	funcs := template.FuncMap{"short": short, "tokens": formatTokens, "mark": mark,
		"percent": Percent, "interval": Interval, "dollars": dollars, "fixed2": fixed2}
	ui := &UI{d: d, pages: make(map[string]*template.Template), throttle: access.NewThrottle()}
	if d.GitHub != nil {
		ui.vis = newVisibility(d.GitHub)
	}
	for _, name := range []string{"index", "review", "new", "pull", "learnings", "quality", "notfound", "unauthorized", "signin", "signedin", "operator"} {
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
	mux.Handle("GET /reviews/{id}/findings", u.guard(u.findings))
	mux.Handle("GET /repos/{owner}/{name}/pulls/{number}", u.guard(u.pull))
	mux.HandleFunc("POST /repos/{owner}/{name}/pulls/{number}/revive", u.revive)
	mux.Handle("GET /repos/{owner}/{name}/learnings", u.guard(u.learnings))
	mux.Handle("GET /quality", u.guard(u.allQuality))
	mux.Handle("GET /repos/{owner}/{name}/quality", u.guard(u.repoQuality))
	if u.d.Reviews != nil {
		mux.Handle("GET /reviews/{id}/verdict", u.guard(u.reviewData(u.d.Reviews.Review)))
		mux.Handle("GET /reviews/{id}/stream", u.guard(u.reviewData(u.d.Reviews.Stream)))
	}
	u.registerSignIn(mux)
}

// viewerKey is the context key of the request's viewer.
type viewerKey struct{}

// viewerOf returns the viewer the guard let through.
func viewerOf(r *http.Request) access.Viewer {
	v, _ := r.Context().Value(viewerKey{}).(access.Viewer)
	return v
}

// guard refuses cross-site state-changing requests (403), requests of
// nobody signed in (401: a page linking to the sign-in page) and browser
// state-changing requests without the CSRF token (403), in that order. It
// hands the viewer to h in the request's context.
func (u *UI) guard(h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := u.d.Access.CheckOrigin(r); err != nil {
			http.Error(w, "Cross-site request refused.", http.StatusForbidden)
			return
		}
		v, ok := u.d.Access.Viewer(r)
		if !ok {
			u.renderStatus(w, r, http.StatusUnauthorized, "unauthorized", map[string]any{
				"Title": "Sign in", "TokenSet": u.d.Access.Token != "", "SessionsOn": u.d.Access.Sessions() != nil,
				"SignIn": "/signin?next=" + url.QueryEscape(SafeNext(r.URL.RequestURI())),
			})
			return
		}
		if err := access.CheckCSRF(r); err != nil {
			http.Error(w, "Missing or wrong CSRF token: reload the page and try again.", http.StatusForbidden)
			return
		}
		h(w, r.WithContext(context.WithValue(r.Context(), viewerKey{}, v)))
	})
}

// canSee reports whether the request's viewer may see the runs, pull
// requests and learnings of the repository of GitHub id repoID (0: an
// admin only); when it cannot tell (GitHub failed) it answers 503 itself
// and returns false with ok false.
func (u *UI) canSee(w http.ResponseWriter, r *http.Request, repoID int64) (yes, ok bool) {
	ctx, cancel := context.WithTimeout(r.Context(), githubTimeout)
	defer cancel()
	yes, err := u.vis.canSee(ctx, viewerOf(r), repoID)
	if errors.Is(err, oauth.ErrUserTokenRefused) {
		// The person's GitHub token expired or was revoked: their
		// session ends.
		access.ClearCookie(w, access.SessionCookie, u.d.Access.SecureCookies(r))
		http.Redirect(w, r, "/signin?next="+url.QueryEscape(SafeNext(r.URL.RequestURI())), http.StatusSeeOther)
		return false, false
	}
	if err != nil {
		u.d.Logger.Warn().Err(err).Int64("repository_id", repoID).Msg("web: ask GitHub what a signed-in person may read")
		http.Error(w, "Could not ask GitHub whether you may read this repository; try again.", http.StatusServiceUnavailable)
		return false, false
	}
	return yes, true
}

// canSeeName reports whether the request's viewer may see what MergeGuard
// keeps under name repo: the pull request number's runs and ledger, or
// (number 0) the repository's learnings. It is decided by GitHub's id of
// the repository the runs stored under that name were of, never by the
// name: with no id (runs from before MergeGuard kept ids) or two (the name
// passed from one repository to another, and what is kept under it mixes
// them) only admins see it. id is the repository's id when there is one.
// Like canSee, it answers itself when ok is false.
func (u *UI) canSeeName(w http.ResponseWriter, r *http.Request, repo string, number int) (id int64, yes, ok bool) {
	ids, err := u.d.Runs.RepositoryIDs(r.Context(), repo, number)
	if err != nil {
		u.fail(w, err, "read a repository's id")
		return 0, false, false
	}
	if len(ids) == 1 {
		id = ids[0]
	}
	yes, ok = u.canSee(w, r, id)
	return id, yes, ok
}

// reviewData serves a run's data after checking that the viewer may see
// the run (404 otherwise, as for a run that does not exist).
func (u *UI) reviewData(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if _, ok := u.run(w, r); ok {
			h(w, r)
		}
	}
}

// RunView is a run as the pages show it.
type RunView struct {
	ID, Mode, Trigger, Status, Verdict string
	Repository, HeadSHA, PRURL         string
	PRNumber                           int
	// PRPage is the UI's page of the run's pull request, "" for other runs.
	PRPage string
	// Kind, KindReason and SinceSHA are a pull request run's scope: full
	// or incremental, why full, from which head.
	Kind, KindReason, SinceSHA string
	// Asker, Question, Answer and Classification are an answer run's: who
	// asked what, what MergeGuard answered and how it read the reply.
	Asker, Question, Answer, Classification string
	Findings                                int
	Critical, Warning, Info, Style          int
	// Title is the name a diff run was given, "" when none.
	Title string
	// Tokens counts input and output tokens; Duration is the run's time
	// as formatDuration writes it, "" before it ends.
	Tokens   int
	Duration string
	Created  time.Time
}

func (u *UI) view(r store.Run) RunView {
	v := RunView{
		ID: r.ID, Mode: string(r.Mode), Trigger: string(r.Trigger), Status: string(r.Status), Verdict: string(r.Verdict),
		Repository: r.Repository, HeadSHA: r.HeadSHA, PRNumber: r.PRNumber,
		Kind: r.ReviewKind, KindReason: r.KindReason, SinceSHA: r.SinceSHA,
		Tokens: r.InputTokens + r.OutputTokens, Created: r.CreatedAt,
	}
	if r.Mode == store.ModeAnswer {
		if q, err := r.Question(); err == nil { // a run's options are its own JSON
			v.Asker, v.Question = q.Author, q.Body
		}
		v.Answer, v.Classification = r.Answer, string(r.Classification)
	}
	if r.Mode == store.ModeDiff {
		if o, err := r.ReviewOptions(); err == nil { // a run's options are its own JSON
			v.Title = o.Title
		}
	}
	if r.Repository != "" && r.PRNumber > 0 {
		v.PRURL = u.githubPull(r.Repository, r.PRNumber)
		v.PRPage = pullPage(r.Repository, r.PRNumber)
	}
	if r.Result != nil {
		s := r.Result.Stats
		v.Findings = s.FindingsTotal
		v.Critical, v.Warning, v.Info, v.Style = s.Critical, s.Warning, s.Info, s.Style
	}
	if r.DurationMS > 0 {
		v.Duration = formatDuration(r.DurationMS)
	}
	return v
}

// maxIndexRuns is how many runs the list shows; a person signed in with
// GitHub gets those of the indexScan newest runs they may see.
const (
	maxIndexRuns = 100
	indexScan    = 1000
)

func (u *UI) index(w http.ResponseWriter, r *http.Request) {
	f := store.RunFilter{
		Repository: strings.TrimSpace(r.URL.Query().Get("repo")),
		Status:     store.Status(r.URL.Query().Get("status")),
		Limit:      maxIndexRuns,
	}
	v := viewerOf(r)
	if !v.Admin {
		f.Limit = indexScan
	}
	runs, err := u.d.Runs.ListRuns(r.Context(), f)
	if err != nil {
		u.fail(w, err, "list reviews")
		return
	}
	if !v.Admin {
		runs = u.visibleRuns(r, v, runs)
	}
	f.Limit = maxIndexRuns
	views := make([]RunView, len(runs))
	for i, run := range runs {
		views[i] = u.view(run)
	}
	u.render(w, r, "index", map[string]any{
		"Title":  "Reviews",
		"Runs":   views,
		"Filter": f,
		"Statuses": []store.Status{store.StatusQueued, store.StatusRunning, store.StatusSucceeded,
			store.StatusFailed, store.StatusSkipped, store.StatusSuperseded},
	})
}

// visibleRuns keeps the first maxIndexRuns of runs that v may see: runs
// of repositories GitHub lets them read (asked by repository id), no diff
// runs, no runs without an id. A repository GitHub could not be asked
// about is left out (and logged).
func (u *UI) visibleRuns(r *http.Request, v access.Viewer, runs []store.Run) []store.Run {
	var repos []int64
	seen := map[int64]bool{0: true}
	for _, run := range runs {
		if !seen[run.RepositoryID] {
			seen[run.RepositoryID] = true
			repos = append(repos, run.RepositoryID)
		}
	}
	ctx, cancel := context.WithTimeout(r.Context(), githubTimeout)
	defer cancel()
	visible, err := u.vis.visibleRepos(ctx, v, repos)
	if err != nil {
		u.d.Logger.Warn().Err(err).Msg("web: ask GitHub what a signed-in person may read; those repositories are left out")
	}
	out := runs[:0:0]
	for _, run := range runs {
		if visible[run.RepositoryID] && len(out) < maxIndexRuns {
			out = append(out, run)
		}
	}
	return out
}

// run reads the run the request's path names; it answers the 404 page or
// the failure itself when it returns false.
func (u *UI) run(w http.ResponseWriter, r *http.Request) (store.Run, bool) {
	run, err := u.d.Runs.GetRun(r.Context(), r.PathValue("id"))
	if errors.Is(err, store.ErrNotFound) {
		u.notFound(w, r, "There is no review with that id.")
		return store.Run{}, false
	}
	if err != nil {
		u.fail(w, err, "get review")
		return store.Run{}, false
	}
	yes, ok := u.canSee(w, r, run.RepositoryID)
	if !ok {
		return store.Run{}, false
	}
	if !yes {
		u.notFound(w, r, "There is no review with that id.")
		return store.Run{}, false
	}
	return run, true
}

func (u *UI) review(w http.ResponseWriter, r *http.Request) {
	run, ok := u.run(w, r)
	if !ok {
		return
	}
	v := u.view(run)
	title := "Review " + short(run.ID)
	if v.Title != "" {
		title = v.Title
	}
	data := map[string]any{
		"Title":  title,
		"Run":    v,
		"Stages": []string{review.StagePlanner, review.StageReviewer, review.StageVerifier, review.StageReporter},
	}
	if run.Status.Final() {
		data["Set"] = u.citedFindings(run)
	}
	u.render(w, r, "review", data)
}

// findings is the findings section of a finished run's page, which the
// page's script fetches when the run it follows ends (204 before).
func (u *UI) findings(w http.ResponseWriter, r *http.Request) {
	run, ok := u.run(w, r)
	if !ok {
		return
	}
	set := u.citedFindings(run)
	if !run.Status.Final() || set == nil {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	var b strings.Builder
	if err := u.pages["review"].ExecuteTemplate(&b, "findings", map[string]any{"Set": set}); err != nil {
		u.fail(w, err, "render findings")
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Security-Policy", "default-src 'none'")
	_, _ = w.Write([]byte(b.String())) // the client went away; nothing to do
}

func (u *UI) newReview(w http.ResponseWriter, r *http.Request) {
	if !viewerOf(r).Admin {
		u.renderStatus(w, r, http.StatusForbidden, "notfound", map[string]any{"Title": "Token holders only",
			"Message": "Only holders of the API token start reviews here; people signed in with GitHub read reviews."})
		return
	}
	u.render(w, r, "new", map[string]any{
		"Title":      "New review",
		"FocusAreas": review.Categories,
		"Severities": review.Severities,
	})
}

func (u *UI) render(w http.ResponseWriter, r *http.Request, page string, data map[string]any) {
	u.renderStatus(w, r, http.StatusOK, page, data)
}

// renderStatus renders page with data and the request's CSRF token (which
// the page's script sends back on state-changing requests).
func (u *UI) renderStatus(w http.ResponseWriter, r *http.Request, status int, page string, data map[string]any) {
	tok, err := access.CSRFToken(w, r)
	if err != nil {
		u.fail(w, err, "render "+page)
		return
	}
	data["CSRF"] = tok
	if _, set := data["Viewer"]; !set {
		if v, ok := r.Context().Value(viewerKey{}).(access.Viewer); ok {
			data["Viewer"] = v
		} else if v, ok := u.d.Access.Viewer(r); ok {
			data["Viewer"] = v
		}
	}
	var b strings.Builder
	if err := u.pages[page].ExecuteTemplate(&b, "layout", data); err != nil {
		u.fail(w, err, "render "+page)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Security-Policy", "default-src 'self'; style-src 'self'; script-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(b.String())) // the client went away; nothing to do
}

// notFound answers the 404 page, saying msg.
func (u *UI) notFound(w http.ResponseWriter, r *http.Request, msg string) {
	u.renderStatus(w, r, http.StatusNotFound, "notfound", map[string]any{"Title": "Not found", "Message": msg})
}

func (u *UI) fail(w http.ResponseWriter, err error, what string) {
	u.d.Logger.Error().Err(err).Msg("web: " + what)
	http.Error(w, "Something went wrong reading the reviews; see the server log.", http.StatusInternalServerError)
}

// formatDuration writes ms as the pages show a duration: "4.2 s" under a
// minute, "3 min 05 s" under an hour, "1 h 02 min" beyond. The page's
// script (formatDuration in app.js) writes the same.
func formatDuration(ms int64) string {
	switch {
	case ms < 60_000:
		return fmt.Sprintf("%.1f s", float64(ms)/1000)
	case ms < 3_600_000:
		return fmt.Sprintf("%d min %02d s", ms/60_000, ms/1000%60)
	}
	return fmt.Sprintf("%d h %02d min", ms/3_600_000, ms/60_000%60)
}

// formatTokens writes n with thousands separated by commas ("12,345"), as
// the page's script (formatTokens in app.js) does.
func formatTokens(n int) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// mark is the diff prefix of a code row's kind.
func mark(kind string) string {
	switch kind {
	case "add":
		return "+"
	case "del":
		return "-"
	}
	return " "
}

func short(s string) string {
	if len(s) > 8 {
		return s[:8]
	}
	return s
}
