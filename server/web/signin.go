package web

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/mergeguard/mergeguard/server/access"
)

// OAuthApp provides the GitHub App's OAuth client: from configuration
// (StaticOAuthApp) or from the credentials the App's manifest flow stored.
// ok is false when there is none: "Sign in with GitHub" is then off.
type OAuthApp interface {
	OAuthApp(ctx context.Context) (clientID, clientSecret string, ok bool, err error)
}

// StaticOAuthApp is an OAuth client known from configuration
// (github.oauth); the zero value is none.
type StaticOAuthApp struct {
	ClientID, ClientSecret string
}

// OAuthApp returns the client, ok when both parts are set.
func (s StaticOAuthApp) OAuthApp(context.Context) (string, string, bool, error) {
	return s.ClientID, s.ClientSecret, s.ClientID != "" && s.ClientSecret != "", nil
}

// GitHub is what sign-in and visibility ask GitHub (oauth.Flow).
type GitHub interface {
	Readers
	// AuthorizeURL is GitHub's page that asks the person to authorize the
	// App and sends them back to redirectURI with a code and state.
	AuthorizeURL(clientID, redirectURI, state string) string
	// Exchange trades a code for the person's user token.
	Exchange(ctx context.Context, clientID, clientSecret, code, redirectURI string) (string, error)
	// User returns the login and id of the token's person.
	User(ctx context.Context, token string) (string, int64, error)
	// CanWriteID reports whether the token's person may push to the
	// repository of GitHub id id.
	CanWriteID(ctx context.Context, token string, id int64) (bool, error)
}

// Cookie and form limits of sign-in.
const (
	// stateCookie binds a GitHub sign-in's state to the browser that
	// started it, for stateTTL, on the callback's path only.
	stateCookie = "mergeguard_oauth_state"
	stateTTL    = 10 * time.Minute
	// maxFormBytes caps the sign-in and sign-out form bodies.
	maxFormBytes = 16 << 10
	// githubTimeout bounds the GitHub calls of one sign-in or page.
	githubTimeout = 15 * time.Second
	// linkCookie carries the token of a sign-in link (/signin?token=...)
	// from the link to the confirming form, for linkTTL, on /signin only,
	// so that the token leaves the address bar at once.
	linkCookie = "mergeguard_signin_link"
	linkTTL    = 5 * time.Minute
	// maxTokenBytes bounds a token taken from a link.
	maxTokenBytes = 512
)

// registerSignIn adds the sign-in routes to mux.
func (u *UI) registerSignIn(mux *http.ServeMux) {
	mux.HandleFunc("GET /signin", u.signInPage)
	mux.HandleFunc("POST /signin", u.signIn)
	mux.HandleFunc("POST /signout", u.signOut)
	mux.Handle("GET /operator", u.guard(u.operator))
	mux.HandleFunc("POST /operator/signout-all", u.signOutEveryone)
	mux.HandleFunc("GET /signin/github", u.signInGitHub)
	mux.HandleFunc("GET /signin/github/callback", u.gitHubCallback)
}

// SafeNext returns next when it is a path of this site ("/..."), and "/"
// otherwise: no scheme, no host, no "//" or "/\" (which browsers read as
// another host), no control characters. It keeps sign-in from sending a
// browser elsewhere (an open redirect).
func SafeNext(next string) string {
	if next == "" || next[0] != '/' || len(next) > 2048 || strings.HasPrefix(next, "//") || strings.ContainsAny(next, "\\") {
		return "/"
	}
	for _, c := range next {
		if c < 0x20 || c == 0x7f {
			return "/"
		}
	}
	p, err := url.Parse(next)
	if err != nil || p.Scheme != "" || p.Host != "" || p.User != nil || p.Opaque != "" {
		return "/"
	}
	return next
}

// signInData is the sign-in page's data.
func (u *UI) signInData(r *http.Request, next, errMsg string) map[string]any {
	v, signedIn := u.d.Access.Viewer(r)
	return map[string]any{
		"Title":      "Sign in",
		"Next":       SafeNext(next),
		"Error":      errMsg,
		"TokenSet":   u.d.Access.Token != "",
		"SessionsOn": u.d.Access.Sessions() != nil,
		"GitHub":     u.gitHubOn(r.Context()),
		"SignedIn":   signedIn,
		"Who":        v,
		"Link":       hasLink(r),
	}
}

// hasLink reports whether the browser followed a sign-in link and has not
// used it yet.
func hasLink(r *http.Request) bool {
	c, err := r.Cookie(linkCookie)
	return err == nil && c.Value != ""
}

// gitHubOn reports whether "Sign in with GitHub" is offered.
func (u *UI) gitHubOn(ctx context.Context) bool {
	if u.d.GitHub == nil || u.d.OAuthApp == nil || u.d.PublicURL == "" || u.d.Access.Sessions() == nil {
		return false
	}
	_, _, ok, err := u.d.OAuthApp.OAuthApp(ctx)
	if err != nil {
		u.d.Logger.Warn().Err(err).Msg("web: read the GitHub App's OAuth client")
	}
	return ok && err == nil
}

// signInPage is GET /signin. Opened from the sign-in link the server logs
// (?token=...), it keeps the token in a short-lived cookie and redirects
// to itself without it, so the token leaves the address bar and the next
// pages' history at once; the page then asks to confirm with a button (a
// form post with the CSRF token): a link someone else sent signs nobody
// in by being opened (login CSRF).
func (u *UI) signInPage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if tok := q.Get("token"); tok != "" {
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("Referrer-Policy", "no-referrer")
		if len(tok) <= maxTokenBytes {
			// SameSite=Lax: the link is often opened from a terminal or
			// another site, a top-level navigation Strict would not carry.
			http.SetCookie(w, &http.Cookie{Name: linkCookie, Value: url.QueryEscape(tok), Path: "/signin", MaxAge: int(linkTTL / time.Second), //nolint:gosec // Secure whenever the browser reaches us over TLS; Lax on purpose (above)
				HttpOnly: true, Secure: u.d.Access.SecureCookies(r), SameSite: http.SameSiteLaxMode})
		}
		http.Redirect(w, r, "/signin?next="+url.QueryEscape(SafeNext(q.Get("next"))), http.StatusSeeOther)
		return
	}
	u.renderStatus(w, r, http.StatusOK, "signin", u.signInData(r, q.Get("next"), ""))
}

// takeLink returns the token a sign-in link left, and clears it: a link's
// cookie is used once.
func (u *UI) takeLink(w http.ResponseWriter, r *http.Request) string {
	c, err := r.Cookie(linkCookie)
	if err != nil {
		return ""
	}
	http.SetCookie(w, &http.Cookie{Name: linkCookie, Value: "", Path: "/signin", MaxAge: -1, //nolint:gosec // as set in signInPage
		HttpOnly: true, Secure: u.d.Access.SecureCookies(r), SameSite: http.SameSiteLaxMode})
	tok, err := url.QueryUnescape(c.Value)
	if err != nil {
		return ""
	}
	return tok
}

// checkForm refuses a cross-site form post and one without the CSRF
// token (403), reading at most maxFormBytes of it.
func (u *UI) checkForm(w http.ResponseWriter, r *http.Request) bool {
	if err := u.d.Access.CheckOrigin(r); err != nil {
		http.Error(w, "Cross-site request refused.", http.StatusForbidden)
		return false
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := access.CheckCSRFForm(r); err != nil {
		http.Error(w, "Missing or wrong CSRF token: reload the page and try again.", http.StatusForbidden)
		return false
	}
	return true
}

// signIn opens a token session: the form's token (or, confirming a
// sign-in link, the link's) must be the API token. Failed attempts are
// throttled per client address and overall (429 with Retry-After).
func (u *UI) signIn(w http.ResponseWriter, r *http.Request) {
	if !u.checkForm(w, r) {
		return
	}
	next := r.PostFormValue("next")
	token := r.PostFormValue("token")
	if link := u.takeLink(w, r); token == "" && r.PostFormValue("link") != "" {
		token = link
	}
	sessions := u.d.Access.Sessions()
	if sessions == nil || u.d.Access.Token == "" {
		u.renderStatus(w, r, http.StatusNotFound, "signin", u.signInData(r, next, "Signing in with a token is off: this server has no API token or no key for sessions."))
		return
	}
	addr := access.ClientAddr(r)
	if wait := u.throttle.Wait(addr); wait > 0 {
		secs := int(math.Ceil(wait.Seconds()))
		w.Header().Set("Retry-After", strconv.Itoa(secs))
		u.renderStatus(w, r, http.StatusTooManyRequests, "signin", u.signInData(r, next,
			"Too many wrong tokens: try again in "+strconv.Itoa(secs)+" s."))
		return
	}
	if !u.d.Access.CheckToken(token) {
		u.throttle.Fail(addr)
		u.renderStatus(w, r, http.StatusUnauthorized, "signin", u.signInData(r, next, "That is not the API token."))
		return
	}
	u.throttle.Succeed(addr)
	value, err := sessions.TokenSession(r.Context(), access.TokenSessionTTL)
	if err != nil {
		u.fail(w, err, "open a session")
		return
	}
	access.SetCookie(w, access.SessionCookie, value, access.TokenSessionTTL, u.d.Access.SecureCookies(r))
	http.Redirect(w, r, SafeNext(next), http.StatusSeeOther)
}

// signOut ends the browser's session, on the server too: a copy of the
// cookie opens nothing afterwards.
func (u *UI) signOut(w http.ResponseWriter, r *http.Request) {
	if !u.checkForm(w, r) {
		return
	}
	if c, err := r.Cookie(access.SessionCookie); err == nil && u.d.Access.Sessions() != nil {
		if err := u.d.Access.Sessions().End(r.Context(), c.Value); err != nil {
			u.fail(w, err, "end the session")
			return
		}
	}
	access.ClearCookie(w, access.SessionCookie, u.d.Access.SecureCookies(r))
	http.Redirect(w, r, "/signin", http.StatusSeeOther)
}

// oauthState is what the state cookie holds.
type oauthState struct {
	State string `json:"s"`
	Next  string `json:"n"`
}

// callbackURL is the GitHub sign-in's redirect_uri.
func (u *UI) callbackURL() string {
	return strings.TrimRight(u.d.PublicURL, "/") + "/signin/github/callback"
}

// signInGitHub sends the browser to GitHub with a fresh state, kept in a
// cookie of the callback's path to bind it to this browser.
func (u *UI) signInGitHub(w http.ResponseWriter, r *http.Request) {
	if !u.gitHubOn(r.Context()) {
		u.notFound(w, r, "Signing in with GitHub is not configured here.")
		return
	}
	clientID, _, _, err := u.d.OAuthApp.OAuthApp(r.Context())
	if err != nil {
		u.fail(w, err, "read the OAuth client")
		return
	}
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		u.fail(w, err, "make a sign-in state")
		return
	}
	st := oauthState{State: hex.EncodeToString(b), Next: SafeNext(r.URL.Query().Get("next"))}
	raw, err := json.Marshal(st)
	if err != nil {
		u.fail(w, err, "make a sign-in state")
		return
	}
	// SameSite=Lax: GitHub's redirect back is a cross-site navigation,
	// which does not carry Strict cookies.
	http.SetCookie(w, &http.Cookie{Name: stateCookie, Value: base64.RawURLEncoding.EncodeToString(raw), Path: "/signin/github", //nolint:gosec // Secure whenever the browser reaches us over TLS; Lax on purpose (above)
		MaxAge: int(stateTTL / time.Second), HttpOnly: true, Secure: u.d.Access.SecureCookies(r), SameSite: http.SameSiteLaxMode})
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, u.d.GitHub.AuthorizeURL(clientID, u.callbackURL(), st.State), http.StatusFound)
}

// takeState reads and clears the state cookie: a state is used once.
func (u *UI) takeState(w http.ResponseWriter, r *http.Request) (oauthState, bool) {
	c, err := r.Cookie(stateCookie)
	http.SetCookie(w, &http.Cookie{Name: stateCookie, Value: "", Path: "/signin/github", MaxAge: -1, //nolint:gosec // as the state cookie set in signInGitHub
		HttpOnly: true, Secure: u.d.Access.SecureCookies(r), SameSite: http.SameSiteLaxMode})
	if err != nil {
		return oauthState{}, false
	}
	raw, err := base64.RawURLEncoding.DecodeString(c.Value)
	var st oauthState
	if err != nil || json.Unmarshal(raw, &st) != nil || len(st.State) != 64 {
		return oauthState{}, false
	}
	got := r.URL.Query().Get("state")
	return st, subtle.ConstantTimeCompare([]byte(got), []byte(st.State)) == 1
}

// gitHubCallback ends a GitHub sign-in: the state must be this browser's,
// the code is exchanged for the person's user token, and a session of
// theirs is opened.
func (u *UI) gitHubCallback(w http.ResponseWriter, r *http.Request) {
	st, ok := u.takeState(w, r)
	if !ok || !u.gitHubOn(r.Context()) {
		u.renderStatus(w, r, http.StatusBadRequest, "signin", u.signInData(r, "/", "That sign-in link is stale or was not started in this browser: sign in again."))
		return
	}
	if e := r.URL.Query().Get("error"); e != "" {
		msg := "GitHub did not sign you in (" + e + ")."
		if e == "access_denied" {
			msg = "You did not authorize MergeGuard on GitHub."
		}
		u.renderStatus(w, r, http.StatusUnauthorized, "signin", u.signInData(r, st.Next, msg))
		return
	}
	login, id, token, err := u.exchange(r.Context(), r.URL.Query().Get("code"))
	if err != nil {
		u.d.Logger.Warn().Err(err).Msg("web: GitHub sign-in failed")
		u.renderStatus(w, r, http.StatusBadGateway, "signin", u.signInData(r, st.Next, "Signing in with GitHub failed; try again."))
		return
	}
	value, err := u.d.Access.Sessions().GitHubSession(r.Context(), login, id, token, access.GitHubSessionTTL)
	if err != nil {
		u.fail(w, err, "open a session")
		return
	}
	access.SetCookie(w, access.SessionCookie, value, access.GitHubSessionTTL, u.d.Access.SecureCookies(r))
	u.d.Logger.Info().Str("login", login).Int64("user_id", id).Msg("web: signed in with GitHub")
	// A page, not a redirect: the navigation from it is same-site, so the
	// new SameSite=Strict cookie goes with it.
	u.renderStatus(w, r, http.StatusOK, "signedin", map[string]any{"Title": "Signed in", "Login": login, "Next": SafeNext(st.Next),
		"Viewer": access.Viewer{Login: login, UserID: id}})
}

// exchange trades the code for the person's token and identity.
func (u *UI) exchange(ctx context.Context, code string) (login string, id int64, token string, err error) {
	if code == "" {
		return "", 0, "", errors.New("no code in the callback")
	}
	ctx, cancel := context.WithTimeout(ctx, githubTimeout)
	defer cancel()
	clientID, secret, _, err := u.d.OAuthApp.OAuthApp(ctx)
	if err != nil {
		return "", 0, "", err
	}
	token, err = u.d.GitHub.Exchange(ctx, clientID, secret, code, u.callbackURL())
	if err != nil {
		return "", 0, "", err
	}
	login, id, err = u.d.GitHub.User(ctx, token)
	return login, id, token, err
}

// operator is the token holder's page: what only they may do.
func (u *UI) operator(w http.ResponseWriter, r *http.Request) {
	if !viewerOf(r).Admin {
		u.notFound(w, r, "This page is for the API token's holder.")
		return
	}
	u.render(w, r, "operator", map[string]any{"Title": "Operator", "SessionsOn": u.d.Access.Sessions() != nil})
}

// signOutEveryone revokes every sign-in session (token and GitHub), the
// caller's too; a token holder only, from the operator page's form.
func (u *UI) signOutEveryone(w http.ResponseWriter, r *http.Request) {
	if !u.checkForm(w, r) {
		return
	}
	v, ok := u.d.Access.Viewer(r)
	if !ok || !v.Admin {
		http.Error(w, "Only the API token's holder may sign everyone out.", http.StatusForbidden)
		return
	}
	sessions := u.d.Access.Sessions()
	if sessions == nil {
		http.Redirect(w, r, "/operator", http.StatusSeeOther)
		return
	}
	n, err := sessions.EndAll(r.Context())
	if err != nil {
		u.fail(w, err, "sign everyone out")
		return
	}
	u.d.Logger.Warn().Int64("sessions", n).Msg("web: signed everyone out")
	access.ClearCookie(w, access.SessionCookie, u.d.Access.SecureCookies(r))
	http.Redirect(w, r, "/signin", http.StatusSeeOther)
}
