// Package githubtest is a fake GitHub API for tests: an httptest server that
// answers the REST and GraphQL routes MergeGuard uses the way GitHub does —
// same paths, JSON shapes (built from GitHub's own OpenAPI examples in
// testdata/examples), pagination with Link headers, 404/406/422 bodies,
// secondary rate limits — and keeps state: repositories, pull requests with
// their diffs, trees, blobs and tarballs, reviews, review and issue
// comments, reactions, permissions and installation tokens.
//
// Every request is recorded (Calls, CallCount) so that tests can count API
// calls and read what was posted. Failures, slow or late answers and reset
// connections are injected per route (FailNext, Inject). The package also signs webhook payloads like
// GitHub (see Delivery) and serves the real payloads in testdata/webhooks.
//
// Routes are named like GitHub's OpenAPI description, "METHOD /path/{param}"
// (see the Route constants); they are also the server's ServeMux patterns.
package githubtest

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	gh "github.com/google/go-github/v60/github"
	"github.com/shurcooL/githubv4"
)

// Routes served by the fake, named as in GitHub's OpenAPI description.
const (
	RouteAccessToken        = "POST /app/installations/{installation_id}/access_tokens"
	RouteRateLimit          = "GET /rate_limit"
	RouteApp                = "GET /app"
	RouteUser               = "GET /user"
	RoutePull               = "GET /repos/{owner}/{repo}/pulls/{pull_number}"
	RouteUpdatePull         = "PATCH /repos/{owner}/{repo}/pulls/{pull_number}"
	RoutePullFiles          = "GET /repos/{owner}/{repo}/pulls/{pull_number}/files"
	RoutePullCommits        = "GET /repos/{owner}/{repo}/pulls/{pull_number}/commits"
	RouteReviews            = "GET /repos/{owner}/{repo}/pulls/{pull_number}/reviews"
	RouteCreateReview       = "POST /repos/{owner}/{repo}/pulls/{pull_number}/reviews"
	RouteDeleteReview       = "DELETE /repos/{owner}/{repo}/pulls/{pull_number}/reviews/{review_id}"
	RouteDismissReview      = "PUT /repos/{owner}/{repo}/pulls/{pull_number}/reviews/{review_id}/dismissals"
	RouteReviewComments     = "GET /repos/{owner}/{repo}/pulls/{pull_number}/comments"
	RouteCommentsOfReview   = "GET /repos/{owner}/{repo}/pulls/{pull_number}/reviews/{review_id}/comments"
	RouteTree               = "GET /repos/{owner}/{repo}/git/trees/{tree_sha}"
	RouteBlob               = "GET /repos/{owner}/{repo}/git/blobs/{file_sha}"
	RouteContents           = "GET /repos/{owner}/{repo}/contents/{path...}"
	RouteTarball            = "GET /repos/{owner}/{repo}/tarball/{ref...}"
	RouteIssueComments      = "GET /repos/{owner}/{repo}/issues/{issue_number}/comments"
	RouteCreateIssueComment = "POST /repos/{owner}/{repo}/issues/{issue_number}/comments"
	RouteCreateReaction     = "POST /repos/{owner}/{repo}/issues/comments/{comment_id}/reactions"
	RoutePermission         = "GET /repos/{owner}/{repo}/collaborators/{username}/permission"
	RouteGraphQL            = "POST /graphql"
	RouteCompare            = "GET /repos/{owner}/{repo}/compare/{basehead...}"
	RouteCreateCheck        = "POST /repos/{owner}/{repo}/check-runs"
	RouteUpdateCheck        = "PATCH /repos/{owner}/{repo}/check-runs/{check_run_id}"
	RouteGetCheck           = "GET /repos/{owner}/{repo}/check-runs/{check_run_id}"
	RouteListChecks         = "GET /repos/{owner}/{repo}/commits/{ref}/check-runs"
	RouteReplyComment       = "POST /repos/{owner}/{repo}/pulls/{pull_number}/comments/{comment_id}/replies"
	// RouteCodeload is where tarball requests redirect to, like
	// codeload.github.com; it is not part of the REST API.
	RouteCodeload = "GET /_codeload/{owner}/{repo}/legacy.tar.gz/{sha}"
)

//go:embed testdata/examples testdata/webhooks
var testdata embed.FS

// Call is one request the fake received.
type Call struct {
	// Route is the matched route (a Route constant), empty when no route
	// matched (the fake answered 404).
	Route  string
	Method string
	Path   string
	Query  url.Values
	Header http.Header
	Body   []byte
	// Status is the HTTP status the fake answered; 0 when it reset the
	// connection instead (Failure.Reset).
	Status int
	// Time is when the request arrived.
	Time time.Time
}

// Failure is an injected answer for a route. See Inject.
type Failure struct {
	// Status is the status to answer; 0 answers normally after Delay.
	Status int
	// Header is added to the answer (e.g. Retry-After).
	Header http.Header
	// Body replaces the default body, GitHub's for the status: a secondary
	// rate-limit message for 403 and 429, {"message":...} otherwise.
	Body string
	// Delay is waited before answering (or until the request is cancelled).
	Delay time.Duration
	// Processed makes the fake do the request's work before waiting and
	// answering, like a GitHub 502 after the review was created; with
	// Delay alone, the work is done at once and its answer comes late (a
	// client that timed out never sees it).
	Processed bool
	// Reset drops the connection without answering, as a TCP reset (after
	// Delay, and after the work when Processed is set). The call is
	// recorded with Status 0.
	Reset bool
	// Hangup closes the connection without answering, as a proxy that
	// gives up does: the client reads EOF. Like Reset otherwise.
	Hangup bool
}

// Server is a fake GitHub API. Create it with New; it is safe for
// concurrent use.
type Server struct {
	t   testing.TB
	srv *httptest.Server

	// callsMu guards calls; handlers write answers while holding mu.
	callsMu sync.Mutex
	calls   []*Call

	mu          sync.Mutex
	repos       map[string]*repo
	failures    map[string][]Failure
	nextID      int64
	bot         User
	tokens      map[string]int64 // installation token → installation id
	requireAuth bool
	appKey      *appKey
	// manifestApps are the Apps created from manifests (manifest.go).
	manifestApps []*ManifestApp
	treeLimit    int
	oauth        *oauthState // oauth.go
	// examples are the decoded response examples, read-only: handlers
	// change copies (example).
	examples map[string]map[string]any
}

// New starts a fake GitHub API, closed when the test ends. Reviews and
// comments are created as the App's bot user, "mergeguard[bot]" unless
// SetBot says otherwise.
func New(t testing.TB) *Server {
	t.Helper()
	examples, err := loadExamples()
	if err != nil {
		t.Fatalf("githubtest: %v", err)
	}
	s := &Server{
		t:        t,
		examples: examples,
		repos:    make(map[string]*repo),
		failures: make(map[string][]Failure),
		nextID:   1000,
		bot:      User{Login: "mergeguard[bot]", ID: 9001, Type: "Bot"},
		tokens:   make(map[string]int64),
	}
	mux := http.NewServeMux()
	for route, h := range s.routes() {
		mux.Handle(route, s.wrap(route, h))
	}
	mux.HandleFunc("POST /api/graphql", s.wrap(RouteGraphQL, s.graphql)) // GitHub Enterprise's path
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.record(r, "", body).status(http.StatusNotFound)
		writeNotFound(w, "https://docs.github.com/rest")
	})
	s.srv = httptest.NewServer(mux)
	t.Cleanup(s.srv.Close)
	return s
}

func (s *Server) routes() map[string]http.HandlerFunc {
	return map[string]http.HandlerFunc{
		RouteAccessToken:                s.accessToken,
		RouteRateLimit:                  s.rateLimit,
		RouteApp:                        s.app,
		RouteUser:                       s.user,
		RoutePull:                       s.pull,
		RouteUpdatePull:                 s.updatePull,
		RoutePullFiles:                  s.pullFiles,
		RoutePullCommits:                s.pullCommits,
		RouteReviews:                    s.listReviews,
		RouteCreateReview:               s.createReview,
		RouteDeleteReview:               s.deleteReview,
		RouteDismissReview:              s.dismissReview,
		RouteReviewComments:             s.listReviewComments,
		RouteCommentsOfReview:           s.listCommentsOfReview,
		RouteTree:                       s.tree,
		RouteBlob:                       s.blob,
		RouteContents:                   s.contents,
		RouteTarball:                    s.tarball,
		RouteCodeload:                   s.codeload,
		RouteIssueComments:              s.listIssueComments,
		RouteCreateIssueComment:         s.createIssueComment,
		RouteCreateReaction:             s.createReaction,
		RouteListReviewCommentReactions: s.listReviewReactions,
		RoutePermission:                 s.permission,
		RouteGraphQL:                    s.graphql,
		RouteCompare:                    s.compare,
		RouteCreateCheck:                s.createCheck,
		RouteUpdateCheck:                s.updateCheck,
		RouteGetCheck:                   s.getCheck,
		RouteListChecks:                 s.listChecks,
		RouteReplyComment:               s.replyComment,
		RouteNewAppFromManifest:         s.newAppFromManifest,
		RouteNewOrgAppFromManifest:      s.newAppFromManifest,
		RouteManifestConversion:         s.manifestConversion,
		RouteOAuthAuthorize:             s.oauthAuthorize,
		RouteOAuthAccessToken:           s.oauthAccessToken,
		RouteRepo:                       s.getRepo,
		RouteRepoByID:                   s.getRepoByID,
		RouteOrgMembership:              s.orgMembership,
	}
}

// URL returns the REST API base URL, with the trailing slash go-github
// needs (githubapp.Config.V3APIURL).
func (s *Server) URL() string { return s.srv.URL + "/" }

// GraphQLURL returns the GraphQL endpoint (githubapp.Config.V4APIURL).
func (s *Server) GraphQLURL() string { return s.srv.URL + "/graphql" }

// Client returns an unauthenticated go-github client for the fake.
func (s *Server) Client() *gh.Client {
	c := gh.NewClient(s.srv.Client())
	u, _ := url.Parse(s.URL())
	c.BaseURL, c.UploadURL = u, u
	return c
}

// V4Client returns an unauthenticated GraphQL client for the fake.
func (s *Server) V4Client() *githubv4.Client {
	return githubv4.NewEnterpriseClient(s.GraphQLURL(), s.srv.Client())
}

// SetBot sets the user the App acts as: the author of the reviews, review
// comments, issue comments and reactions the fake creates.
func (s *Server) SetBot(u User) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.bot = u
}

// RequireAuth makes every REST and GraphQL route except the token route
// answer 401 unless the request carries an installation token the fake
// issued.
func (s *Server) RequireAuth() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requireAuth = true
}

// AddToken makes the fake accept token as a plain token (a personal access
// token or GitHub Actions' GITHUB_TOKEN) when RequireAuth is on; it acts as
// the bot user (SetBot), which GET /user answers.
func (s *Server) AddToken(token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokens[token] = 0
}

// FailNext makes the next request to route answer status with header, as
// Inject(route, Failure{Status: status, Header: header}).
func (s *Server) FailNext(route string, status int, header http.Header) {
	s.Inject(route, Failure{Status: status, Header: header})
}

// Inject queues f for route: the next request to route gets it. Queue
// several to fail several requests in a row.
func (s *Server) Inject(route string, f Failure) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failures[route] = append(s.failures[route], f)
}

// Calls returns every request received so far, in order. A call is
// recorded before its answer is sent.
func (s *Server) Calls() []Call {
	s.callsMu.Lock()
	defer s.callsMu.Unlock()
	out := make([]Call, len(s.calls))
	for i, c := range s.calls {
		out[i] = *c
	}
	return out
}

// CallCount returns how many requests route received; an empty route
// counts the requests no route matched.
func (s *Server) CallCount(route string) int {
	n := 0
	for _, c := range s.Calls() {
		if c.Route == route {
			n++
		}
	}
	return n
}

// CallsTo returns the requests route received, in order.
func (s *Server) CallsTo(route string) []Call {
	var out []Call
	for _, c := range s.Calls() {
		if c.Route == route {
			out = append(out, c)
		}
	}
	return out
}

// ResetCalls forgets the recorded calls.
func (s *Server) ResetCalls() {
	s.callsMu.Lock()
	defer s.callsMu.Unlock()
	s.calls = nil
}

// APICallCount returns how many REST and GraphQL API requests were made,
// leaving out installation-token requests, the App lookup made once at start
// and archive downloads (which
// GitHub serves from codeload, outside the API).
func (s *Server) APICallCount() int {
	n := 0
	for _, c := range s.Calls() {
		if c.Route != RouteAccessToken && c.Route != RouteCodeload && c.Route != RouteApp {
			n++
		}
	}
	return n
}

// record stores a call, answered 200 until its recorder says otherwise.
func (s *Server) record(r *http.Request, route string, body []byte) *recorded {
	c := &Call{
		Route:  route,
		Method: r.Method,
		Path:   r.URL.Path,
		Query:  r.URL.Query(),
		Header: r.Header.Clone(),
		Body:   body,
		Status: http.StatusOK,
		Time:   time.Now(),
	}
	s.callsMu.Lock()
	defer s.callsMu.Unlock()
	s.calls = append(s.calls, c)
	return &recorded{s: s, c: c}
}

// recorded sets the answered status of a recorded call.
type recorded struct {
	s *Server
	c *Call
}

func (r *recorded) status(code int) {
	r.s.callsMu.Lock()
	defer r.s.callsMu.Unlock()
	r.c.Status = code
}

// wrap records the call, applies injected failures and delays, checks
// authentication, then runs h.
func (s *Server) wrap(route string, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		rec := &statusRecorder{ResponseWriter: w, call: s.record(r, route, body)}
		// The App routes check the JWT themselves; the manifest flow is
		// unauthenticated; the OAuth pages are on the web host.
		authorized := route == RouteAccessToken || route == RouteApp || route == RouteCodeload || manifestRoute(route) ||
			route == RouteOAuthAuthorize || route == RouteOAuthAccessToken || s.authorized(r)

		f, injected := s.nextFailure(route)
		var done *httptest.ResponseRecorder // the answer of work done ahead (Processed)
		if injected && f.Processed && authorized {
			done = httptest.NewRecorder()
			h(done, r)
		}
		if injected && f.Delay > 0 {
			select {
			case <-time.After(f.Delay):
			case <-r.Context().Done():
				rec.call.status(499) // the client went away
				return
			}
		}
		switch {
		case injected && (f.Reset || f.Hangup):
			rec.call.status(0)
			s.dropConn(w, f.Reset)
		case !authorized:
			writeJSON(rec, http.StatusUnauthorized, map[string]any{
				"message":           "Bad credentials",
				"documentation_url": "https://docs.github.com/rest",
			})
		case injected && f.Status != 0:
			writeFailure(rec, f)
		case done != nil:
			replay(rec, done)
		default:
			h(rec, r)
		}
	}
}

// dropConn closes the connection of w without an answer: with a TCP reset
// when reset is set (the client reads ECONNRESET), else the client reads
// EOF.
func (s *Server) dropConn(w http.ResponseWriter, reset bool) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		s.t.Errorf("githubtest: drop the connection: %v", err)
		return
	}
	if tc, ok := conn.(*net.TCPConn); ok && reset {
		_ = tc.SetLinger(0) // close with RST, not FIN
	}
	_ = conn.Close()
}

// replay sends an answer recorded earlier.
func replay(w http.ResponseWriter, done *httptest.ResponseRecorder) {
	maps.Copy(w.Header(), done.Header())
	w.WriteHeader(done.Code)
	_, _ = w.Write(done.Body.Bytes())
}

func (s *Server) nextFailure(route string) (Failure, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.failures[route]
	if len(q) == 0 {
		return Failure{}, false
	}
	s.failures[route] = q[1:]
	return q[0], true
}

func (s *Server) authorized(r *http.Request) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.requireAuth {
		return true
	}
	_, known := s.tokens[bearer(r)]
	_, user := s.userOfLocked(r)
	return known || user
}

// bearer is the token of a request's Authorization header, "" for none.
func bearer(r *http.Request) string {
	auth := r.Header.Get("Authorization")
	for _, prefix := range []string{"token ", "Bearer ", "bearer "} {
		if tok, ok := strings.CutPrefix(auth, prefix); ok {
			return tok
		}
	}
	return ""
}

func writeFailure(w http.ResponseWriter, f Failure) {
	for k, vs := range f.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	body := f.Body
	if body == "" {
		switch f.Status {
		case http.StatusForbidden, http.StatusTooManyRequests:
			body = mustJSON(map[string]any{
				"message":           "You have exceeded a secondary rate limit. Please wait a few minutes before you try again. If you reach out to GitHub Support for help, please include the request ID 0000:0000:0000000:0000000:00000000.",
				"documentation_url": "https://docs.github.com/free-pro-team@latest/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits",
				"status":            strconv.Itoa(f.Status),
			})
		default:
			body = mustJSON(map[string]any{"message": http.StatusText(f.Status), "status": strconv.Itoa(f.Status)})
		}
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(f.Status)
	_, _ = io.WriteString(w, body)
}

// statusRecorder records the status of an answer before sending it.
type statusRecorder struct {
	http.ResponseWriter
	call *recorded
}

func (r *statusRecorder) WriteHeader(code int) {
	r.call.status(code)
	r.ResponseWriter.WriteHeader(code)
}

// id returns a fresh object id.
func (s *Server) id() int64 {
	s.nextID++
	return s.nextID
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// mustJSON marshals maps of plain values, which cannot fail.
func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// writeNotFound answers GitHub's 404.
func writeNotFound(w http.ResponseWriter, doc string) {
	writeJSON(w, http.StatusNotFound, map[string]any{
		"message":           "Not Found",
		"documentation_url": doc,
		"status":            "404",
	})
}

// writeUnprocessable answers GitHub's 422 with string errors, the form
// GitHub uses for review validation (REVIEW_RULES.md §2).
func writeUnprocessable(w http.ResponseWriter, doc string, errs ...string) {
	writeJSON(w, http.StatusUnprocessableEntity, map[string]any{
		"message":           "Unprocessable Entity",
		"errors":            errs,
		"documentation_url": doc,
		"status":            "422",
	})
}

// paginate answers one page of items as GitHub does: per_page (default 30,
// at most 100) and page query parameters, and a Link header with next,
// last, first and prev relations.
func paginate[T any](w http.ResponseWriter, r *http.Request, items []T) {
	start, end := pageBounds(w, r, len(items))
	out := items[start:end]
	if out == nil {
		out = []T{}
	}
	writeJSON(w, http.StatusOK, out)
}

// pageBounds returns the bounds of the page a request asks for in a list
// of n items (per_page, default 30, at most 100; page) and sets the Link
// header with next, last, first and prev relations.
func pageBounds(w http.ResponseWriter, r *http.Request, n int) (start, end int) {
	perPage, _ := strconv.Atoi(r.URL.Query().Get("per_page"))
	if perPage <= 0 {
		perPage = 30
	}
	perPage = min(perPage, 100)
	page, _ := strconv.Atoi(r.URL.Query().Get("page"))
	page = max(page, 1)
	last := max((n+perPage-1)/perPage, 1)
	link := func(p int, rel string) string {
		u := *r.URL
		u.Scheme, u.Host = "http", r.Host
		q := u.Query()
		q.Set("page", strconv.Itoa(p))
		q.Set("per_page", strconv.Itoa(perPage))
		u.RawQuery = q.Encode()
		return fmt.Sprintf("<%s>; rel=%q", u.String(), rel)
	}
	var links []string
	if page < last {
		links = append(links, link(page+1, "next"), link(last, "last"))
	}
	if page > 1 {
		links = append(links, link(1, "first"), link(page-1, "prev"))
	}
	if len(links) > 0 {
		w.Header().Set("Link", strings.Join(links, ", "))
	}
	start = min((page-1)*perPage, n)
	return start, min(start+perPage, n)
}

// loadExamples decodes GitHub's OpenAPI response examples in
// testdata/examples, by file name (the first item of a list example).
func loadExamples() (map[string]map[string]any, error) {
	entries, err := testdata.ReadDir("testdata/examples")
	if err != nil {
		return nil, fmt.Errorf("read examples: %w", err)
	}
	out := make(map[string]map[string]any, len(entries))
	for _, e := range entries {
		b, err := testdata.ReadFile("testdata/examples/" + e.Name())
		var v any
		if err == nil {
			err = json.Unmarshal(b, &v)
		}
		if err != nil {
			return nil, fmt.Errorf("decode example %s: %w", e.Name(), err)
		}
		if list, ok := v.([]any); ok && len(list) > 0 {
			v = list[0]
		}
		m, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("decode example %s: not a JSON object", e.Name())
		}
		out[e.Name()] = m
	}
	return out, nil
}

// example returns a fresh copy of one of the response examples, which the
// caller may change.
func (s *Server) example(name string) map[string]any {
	m, ok := s.examples[name]
	if !ok {
		s.t.Errorf("githubtest: no example %s", name)
		return map[string]any{}
	}
	return copyJSON(m)
}

// copyJSON returns a deep copy of decoded JSON: maps and slices are
// copied, strings, numbers, booleans and nil are immutable.
func copyJSON[T any](v T) T {
	switch v := any(v).(type) {
	case map[string]any:
		m := make(map[string]any, len(v))
		for k, x := range v {
			m[k] = copyJSON(x)
		}
		return any(m).(T)
	case []any:
		l := make([]any, len(v))
		for i, x := range v {
			l[i] = copyJSON(x)
		}
		return any(l).(T)
	}
	return v
}
