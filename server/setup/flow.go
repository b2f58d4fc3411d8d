package setup

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/mergeguard/mergeguard/github/oauth"
	"github.com/mergeguard/mergeguard/server/access"
	"github.com/mergeguard/mergeguard/server/store"
)

// start is POST /setup: it checks the form, records a state bound to this
// browser and answers the page that posts the manifest to GitHub.
func (s *Setup) start(w http.ResponseWriter, r *http.Request) {
	if title, msg := s.off(); title != "" {
		s.message(w, r, http.StatusConflict, title, msg)
		return
	}
	f := Form{Owner: r.PostFormValue("owner"), Org: r.PostFormValue("org"), Name: r.PostFormValue("name"),
		PublicURL: r.PostFormValue("public_url"), WebURL: r.PostFormValue("web_url")}
	err := f.check()
	webURL, webErr := s.checkWebURL(f.WebURL)
	if err := errors.Join(err, webErr); err != nil {
		s.renderForm(w, r, http.StatusBadRequest, f, err)
		return
	}
	f.WebURL = webURL
	if err := s.checkCode(r.Context(), r.PostFormValue(codeField)); errors.Is(err, errWrongCode) {
		s.renderForm(w, r, http.StatusForbidden, f, err)
		return
	} else if err != nil {
		s.fail(w, r, err, "read the setup code")
		return
	}
	manifest, err := Manifest(s.d.Manifest, f)
	if err != nil {
		s.fail(w, r, err, "build the manifest")
		return
	}
	state, err := random()
	if err != nil {
		s.fail(w, r, err, "start")
		return
	}
	nonce, err := random()
	if err != nil {
		s.fail(w, r, err, "start")
		return
	}
	st := store.SetupState{StateHash: digest(state), BrowserHash: digest(nonce), WebURL: f.WebURL}
	if err := s.d.Store.CreateSetupState(r.Context(), st, stateTTL); err != nil {
		s.fail(w, r, err, "record the state")
		return
	}
	setNonceCookie(w, r, nonce)
	action := newAppURL(f, state)
	s.render(w, r, http.StatusOK, "continue", map[string]any{
		"Title": "Continue on GitHub", "Action": action, "Manifest": string(manifest), "Form": f,
	}, originOf(f.WebURL))
}

// originOf is scheme://host of an absolute URL.
func originOf(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return ""
	}
	return p.Scheme + "://" + p.Host
}

// callback is GET /setup/callback?code&state: GitHub created the App. It
// uses up the state (this browser's, not expired), exchanges the code,
// stores the credentials and sends the browser to install the App.
func (s *Setup) callback(w http.ResponseWriter, r *http.Request) {
	if title, msg := s.off(); title != "" {
		s.message(w, r, http.StatusConflict, title, msg)
		return
	}
	code, state := r.URL.Query().Get("code"), r.URL.Query().Get("state")
	if code == "" || state == "" {
		s.message(w, r, http.StatusBadRequest, "Setup link incomplete",
			"GitHub sends the browser here with a code and a state. This address has neither: start again at /setup.")
		return
	}
	c, err := r.Cookie(cookieName)
	if err != nil || c.Value == "" {
		s.message(w, r, http.StatusBadRequest, "Setup not started in this browser",
			"This browser has no setup cookie: the setup was started in another browser, or the cookie expired (after 10 minutes). Start again at /setup.")
		return
	}
	webURL, err := s.d.Store.TakeSetupState(r.Context(), digest(state), digest(c.Value))
	if err != nil {
		s.refuseState(w, r, err)
		return
	}
	clearNonceCookie(w, r)
	app, err := s.d.Convert(r.Context(), s.apiURL(webURL), code)
	if errors.Is(err, oauth.ErrManifestCode) {
		s.message(w, r, http.StatusBadRequest, "GitHub refused the code", err.Error()+". Start again at /setup.")
		return
	}
	if err != nil {
		s.d.Logger.Error().Err(err).Msg("setup: exchange the manifest code")
		s.message(w, r, http.StatusBadGateway, "GitHub could not be asked",
			"The App may have been created on GitHub, but its credentials could not be fetched (see the server log). "+
				"Delete the App in GitHub's settings if it exists, then start again at /setup.")
		return
	}
	install, ok := installURL(app.HTMLURL)
	if !ok {
		s.fail(w, r, errors.New("GitHub's answer has no usable html_url"), "exchange the manifest code")
		return
	}
	if err := s.d.Store.SaveAppCredentials(r.Context(), store.AppCredentials{
		AppID: app.ID, Slug: app.Slug, HTMLURL: app.HTMLURL, ClientID: app.ClientID,
		PrivateKey: app.PrivateKey, WebhookSecret: app.WebhookSecret, ClientSecret: app.ClientSecret,
	}); err != nil {
		s.fail(w, r, err, "store the App")
		return
	}
	s.d.Logger.Info().Int64("app_id", app.ID).Str("slug", app.Slug).Msg("setup: GitHub App created and stored")
	if s.d.Stored != nil {
		s.d.Stored(r.Context())
	}
	http.Redirect(w, r, install, http.StatusSeeOther)
}

// refuseState answers a state TakeSetupState refused: 400 with why.
func (s *Setup) refuseState(w http.ResponseWriter, r *http.Request, err error) {
	for _, refused := range []error{store.ErrSetupStateUnknown, store.ErrSetupStateForeign, store.ErrSetupStateExpired} {
		if errors.Is(err, refused) {
			msg := refused.Error()
			s.message(w, r, http.StatusBadRequest, "Setup link refused", strings.ToUpper(msg[:1])+msg[1:]+". Start again at /setup.")
			return
		}
	}
	s.fail(w, r, err, "check the state")
}

// apiURL is the REST API of the GitHub at webURL: the configured one for
// the configured web address, GitHub Enterprise Server's /api/v3/
// otherwise.
func (s *Setup) apiURL(webURL string) string {
	if strings.TrimSuffix(webURL, "/") == strings.TrimSuffix(s.d.WebURL, "/") {
		return s.d.APIURL
	}
	return strings.TrimSuffix(webURL, "/") + "/api/v3/"
}

// installURL is the App's installation page, when its page is an
// absolute http(s) address.
func installURL(htmlURL string) (string, bool) {
	u, err := url.Parse(htmlURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return "", false
	}
	return strings.TrimSuffix(u.String(), "/") + "/installations/new", true
}

// script is the continue page's script: it submits the form to GitHub at
// once (the page's button does the same without JavaScript).
func (s *Setup) script(w http.ResponseWriter, _ *http.Request) {
	b, _ := assets.ReadFile("setup.js") // embedded, always there
	w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	_, _ = w.Write(b) // the client went away; nothing to do
}

// message answers a page with a title and a message.
func (s *Setup) message(w http.ResponseWriter, r *http.Request, status int, title, msg string) {
	s.render(w, r, status, "message", map[string]any{"Title": title, "Message": msg}, "")
}

// fail logs err (which may name the database, never a secret) and answers
// 500 without it.
func (s *Setup) fail(w http.ResponseWriter, r *http.Request, err error, what string) {
	s.d.Logger.Error().Err(err).Msg("setup: " + what)
	s.message(w, r, http.StatusInternalServerError, "Setup failed", "Something went wrong ("+what+"); see the server log, then start again at /setup.")
}

// render writes page with data and the CSRF token. formTo is an extra
// origin forms may post to (GitHub, on the continue page).
func (s *Setup) render(w http.ResponseWriter, r *http.Request, status int, page string, data map[string]any, formTo string) {
	tok, err := access.CSRFToken(w, r)
	if err != nil {
		s.d.Logger.Error().Err(err).Msg("setup: render " + page)
		http.Error(w, "Something went wrong; see the server log.", http.StatusInternalServerError)
		return
	}
	data["CSRF"] = tok
	var b strings.Builder
	if err := s.pages[page].ExecuteTemplate(&b, "layout", data); err != nil {
		s.d.Logger.Error().Err(err).Msg("setup: render " + page)
		http.Error(w, "Something went wrong; see the server log.", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	w.Header().Set("Content-Security-Policy", "default-src 'self'; style-src 'self'; script-src 'self'; connect-src 'self'; form-action 'self'"+
		strings.TrimRight(" "+formTo, " ")+"; frame-ancestors 'none'")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(b.String())) // the client went away; nothing to do
}
