package githubtest

import (
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Routes of the OAuth web flow (on GitHub's web host, not the API) and of
// what a user token may ask.
const (
	RouteOAuthAuthorize   = "GET /login/oauth/authorize"
	RouteOAuthAccessToken = "POST /login/oauth/access_token"
	RouteRepo             = "GET /repos/{owner}/{repo}"
	RouteRepoByID         = "GET /repositories/{id}"
	RouteOrgMembership    = "GET /user/memberships/orgs/{org}"
)

const (
	docOAuthErrors   = "https://docs.github.com/apps/managing-oauth-apps/troubleshooting-oauth-app-access-token-request-errors/"
	docRepo          = "https://docs.github.com/rest/repos/repos#get-a-repository"
	docRepoByID      = "https://docs.github.com/rest"
	docOrgMembership = "https://docs.github.com/rest/orgs/members#get-an-organization-membership-for-the-authenticated-user"
	// oauthCodeTTL is how long GitHub honours an authorization code.
	oauthCodeTTL = 10 * time.Minute
)

// oauthState is the fake's OAuth client, the person signed in to its web
// pages, the codes and user tokens it issued, organisation memberships
// and public repositories. Guarded by Server.mu.
type oauthState struct {
	clientID, clientSecret, callback string
	browser                          *User
	codes                            map[string]oauthCode
	users                            map[string]User              // user token → user
	orgs                             map[string]map[string]string // lower(org) → lower(login) → role
	public                           map[string]bool              // repoKey → public
	issued                           int
}

type oauthCode struct {
	user        User
	redirectURI string
	expires     time.Time
}

// oauthLocked returns the OAuth state, creating it. s.mu must be held.
func (s *Server) oauthLocked() *oauthState {
	if s.oauth == nil {
		s.oauth = &oauthState{codes: map[string]oauthCode{}, users: map[string]User{},
			orgs: map[string]map[string]string{}, public: map[string]bool{}}
	}
	return s.oauth
}

// SetOAuthApp sets the App's OAuth client: its client id and secret and
// its callback URL ("" accepts any redirect_uri).
func (s *Server) SetOAuthApp(clientID, clientSecret, callbackURL string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o := s.oauthLocked()
	o.clientID, o.clientSecret, o.callback = clientID, clientSecret, callbackURL
}

// SignInBrowser makes u the person signed in to the fake's web pages: the
// authorize page authorizes the App as u at once (as GitHub does for an
// App the person authorized before). Without it the page asks to sign in.
func (s *Server) SignInBrowser(u User) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if u.Type == "" {
		u.Type = "User"
	}
	s.oauthLocked().browser = &u
}

// UserToken issues a user token of u, as the OAuth flow would.
func (s *Server) UserToken(u User) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.issueUserTokenLocked(u)
}

func (s *Server) issueUserTokenLocked(u User) string {
	o := s.oauthLocked()
	o.issued++
	tok := fmt.Sprintf("ghu_githubtest_%d_%d", u.ID, o.issued)
	o.users[tok] = u
	return tok
}

// SetOrgMember makes login a member of organisation org with role "admin"
// (an owner) or "member".
func (s *Server) SetOrgMember(org, login, role string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o := s.oauthLocked()
	k := strings.ToLower(org)
	if o.orgs[k] == nil {
		o.orgs[k] = map[string]string{}
	}
	o.orgs[k][strings.ToLower(login)] = role
}

// SetPublic makes a repository public (anybody can read it) or private,
// the default: then only users with a role on it (SetPermission) and the
// owners of its organisation can.
func (s *Server) SetPublic(owner, repoName string, public bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.repoLocked(owner, repoName)
	s.oauthLocked().public[repoKey(owner, repoName)] = public
}

// userOfLocked returns the user a request's user token belongs to.
func (s *Server) userOfLocked(r *http.Request) (User, bool) {
	if s.oauth == nil {
		return User{}, false
	}
	u, ok := s.oauth.users[bearer(r)]
	return u, ok
}

// oauthAuthorize is GitHub's authorize page: for the signed-in person it
// redirects to the redirect_uri (or the registered callback) with a code
// and the state; a redirect_uri outside the callback is sent back with
// error=redirect_uri_mismatch, as GitHub does.
func (s *Server) oauthAuthorize(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o := s.oauthLocked()
	q := r.URL.Query()
	if o.clientID == "" || q.Get("client_id") != o.clientID {
		http.Error(w, "Not Found", http.StatusNotFound) // GitHub's 404 page
		return
	}
	redirect := q.Get("redirect_uri")
	if redirect == "" {
		redirect = o.callback
	}
	back := url.Values{"state": {q.Get("state")}}
	if o.callback != "" && !underCallback(redirect, o.callback) {
		back.Set("error", "redirect_uri_mismatch")
		back.Set("error_description", "The redirect_uri is not associated with this application.")
		back.Set("error_uri", docOAuthErrors+"#redirect-uri-mismatch")
		http.Redirect(w, r, withQuery(o.callback, back), http.StatusFound)
		return
	}
	if o.browser == nil {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = fmt.Fprintf(w, "<!doctype html><title>Sign in to GitHub</title><h1>Sign in to GitHub</h1><p>to continue to %s</p>",
			html.EscapeString(o.clientID))
		return
	}
	code := fmt.Sprintf("githubtest_code_%d", s.id())
	o.codes[code] = oauthCode{user: *o.browser, redirectURI: q.Get("redirect_uri"), expires: time.Now().Add(oauthCodeTTL)}
	back.Set("code", code)
	http.Redirect(w, r, withQuery(redirect, back), http.StatusFound)
}

// underCallback reports whether redirect is allowed by the callback URL:
// the same scheme, host and port, and a path at or under the callback's.
func underCallback(redirect, callback string) bool {
	ru, err1 := url.Parse(redirect)
	cu, err2 := url.Parse(callback)
	if err1 != nil || err2 != nil {
		return false
	}
	return ru.Scheme == cu.Scheme && strings.EqualFold(ru.Host, cu.Host) &&
		(ru.Path == cu.Path || strings.HasPrefix(ru.Path, strings.TrimSuffix(cu.Path, "/")+"/"))
}

func withQuery(u string, q url.Values) string {
	sep := "?"
	if strings.Contains(u, "?") {
		sep = "&"
	}
	return u + sep + q.Encode()
}

// oauthAccessToken exchanges a code for a user token. Parameters come as
// a form, JSON or the query, as GitHub takes them; errors are answered
// with status 200 and an "error" field, as GitHub does.
func (s *Server) oauthAccessToken(w http.ResponseWriter, r *http.Request) {
	params, err := oauthParams(r)
	if err != nil {
		http.Error(w, "Bad Request", http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	o := s.oauthLocked()
	answer := func(v map[string]any) { oauthAnswer(w, r, v) }
	if o.clientID == "" || params.Get("client_id") != o.clientID || params.Get("client_secret") != o.clientSecret {
		answer(oauthErr("incorrect_client_credentials", "The client_id and/or client_secret passed are incorrect.", "#incorrect-client-credentials"))
		return
	}
	code, ok := o.codes[params.Get("code")]
	if !ok || time.Now().After(code.expires) {
		answer(oauthErr("bad_verification_code", "The code passed is incorrect or expired.", "#bad-verification-code"))
		return
	}
	if ru := params.Get("redirect_uri"); ru != "" && code.redirectURI != "" && ru != code.redirectURI {
		answer(oauthErr("redirect_uri_mismatch", "The redirect_uri MUST match the registered callback URL for this application.", "#redirect-uri-mismatch"))
		return
	}
	delete(o.codes, params.Get("code")) // a code is used once
	answer(map[string]any{
		"access_token": s.issueUserTokenLocked(code.user), "expires_in": 28800,
		"refresh_token": fmt.Sprintf("ghr_githubtest_%d", s.id()), "refresh_token_expires_in": 15811200,
		"scope": "", "token_type": "bearer",
	})
}

func oauthErr(code, desc, anchor string) map[string]any {
	return map[string]any{"error": code, "error_description": desc, "error_uri": docOAuthErrors + anchor}
}

func oauthParams(r *http.Request) (url.Values, error) {
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		var m map[string]string
		if err := json.NewDecoder(r.Body).Decode(&m); err != nil {
			return nil, err
		}
		v := url.Values{}
		for k, x := range m {
			v.Set(k, x)
		}
		return v, nil
	}
	if err := r.ParseForm(); err != nil {
		return nil, err
	}
	return r.Form, nil
}

// oauthAnswer answers JSON when asked for it, GitHub's form encoding
// otherwise.
func oauthAnswer(w http.ResponseWriter, r *http.Request, v map[string]any) {
	if strings.Contains(r.Header.Get("Accept"), "json") {
		writeJSON(w, http.StatusOK, v)
		return
	}
	form := url.Values{}
	for k, x := range v {
		form.Set(k, fmt.Sprint(x))
	}
	w.Header().Set("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
	_, _ = w.Write([]byte(form.Encode()))
}

// getRepo answers GET /repos/{owner}/{repo}. Asked with a user token, a
// private repository the user has no role on (and whose organisation they
// do not own) is 404, as GitHub hides it; other tokens read every
// repository.
func (s *Server) getRepo(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp, ok := s.requestRepo(w, r, docRepo)
	if !ok {
		return
	}
	s.answerRepoLocked(w, r, rp, docRepo)
}

// getRepoByID answers GET /repositories/{id} (undocumented by name in
// GitHub's REST reference but served, and what go-github's GetByID asks):
// the repository of that id whatever its name now, with the same 404 as
// getRepo for an unknown id or a private repository the user cannot read.
func (s *Server) getRepoByID(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	var rp *repo
	for _, x := range s.repos {
		if err == nil && x.id == id {
			rp = x
		}
	}
	if rp == nil {
		writeNotFound(w, docRepoByID)
		return
	}
	s.answerRepoLocked(w, r, rp, docRepoByID)
}

// RepoID is the id the fake gave repository owner/name (creating it).
func (s *Server) RepoID(owner, name string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.repoLocked(owner, name).id
}

// answerRepoLocked writes rp as GitHub's repository JSON, or 404 (with
// doc) when r's user token cannot read it. s.mu must be held.
func (s *Server) answerRepoLocked(w http.ResponseWriter, r *http.Request, rp *repo, doc string) {
	public := s.oauth != nil && s.oauth.public[repoKey(rp.owner, rp.name)]
	m := s.repoJSON(rp)
	m["private"] = !public
	m["visibility"] = map[bool]string{true: "public", false: "private"}[public]
	if u, isUser := s.userOfLocked(r); isUser {
		role := s.roleLocked(rp, u.Login)
		if role == "" && !public {
			writeNotFound(w, doc)
			return
		}
		m["permissions"] = permissions(role)
	}
	writeJSON(w, http.StatusOK, m)
}

// roleLocked is login's role on the repository: its own, admin for an
// owner of the repository's organisation, "" for none.
func (s *Server) roleLocked(rp *repo, login string) string {
	if s.oauth != nil && s.oauth.orgs[strings.ToLower(rp.owner)][strings.ToLower(login)] == "admin" {
		return "admin"
	}
	if role := rp.roles[strings.ToLower(login)]; role != "none" {
		return role
	}
	return ""
}

func permissions(role string) map[string]bool {
	rank := map[string]int{"read": 1, "triage": 2, "write": 3, "maintain": 4, "admin": 5}[role]
	return map[string]bool{"pull": rank >= 1, "triage": rank >= 2, "push": rank >= 3, "maintain": rank >= 4, "admin": rank >= 5}
}

// orgMembership answers GET /user/memberships/orgs/{org} for a user
// token: the membership, or 404 for a non-member; other tokens are
// refused (403), as GitHub refuses installation tokens here.
func (s *Server) orgMembership(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	u, ok := s.userOfLocked(r)
	if !ok {
		writeJSON(w, http.StatusForbidden, map[string]any{"message": "Resource not accessible by integration",
			"documentation_url": docOrgMembership, "status": "403"})
		return
	}
	org := r.PathValue("org")
	role, member := s.oauth.orgs[strings.ToLower(org)][strings.ToLower(u.Login)]
	if !member {
		writeNotFound(w, docOrgMembership)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"url":              s.URL() + "orgs/" + org + "/memberships/" + u.Login,
		"state":            "active",
		"role":             role,
		"organization_url": s.URL() + "orgs/" + org,
		"organization":     map[string]any{"login": org, "id": 4242, "url": s.URL() + "orgs/" + org},
		"user":             s.userJSON(u),
	})
}

// RenameRepo renames (or transfers) repository owner/name to
// newOwner/newName, keeping its id, roles and visibility, as GitHub does;
// the old name is then free for another repository (GitHub redirects it
// only until one takes it).
func (s *Server) RenameRepo(owner, name, newOwner, newName string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp := s.repoLocked(owner, name)
	delete(s.repos, repoKey(owner, name))
	rp.owner, rp.name = newOwner, newName
	s.repos[repoKey(newOwner, newName)] = rp
	if s.oauth != nil {
		o := s.oauth
		o.public[repoKey(newOwner, newName)] = o.public[repoKey(owner, name)]
		delete(o.public, repoKey(owner, name))
	}
}
