// Package access decides who may use MergeGuard's API and web UI and guards
// them against cross-site requests. Every request needs the API token, as
// a bearer token or through a sign-in session opened with it; there is no
// anonymous mode (serve generates a token when none is configured). People
// signed in with GitHub hold a session too (see Sessions); what they may
// see is decided elsewhere. Failed sign-ins are throttled (Throttle).
// State-changing requests must come from the server's own origin, and the
// web UI's carry a double-submit CSRF token.
package access

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// Policy authorises requests against an optional bearer token and the web
// UI's sign-in sessions. Make it with NewPolicy to trust the public URL's
// origin; the zero value and a literal with only Token set trust the
// request's own host only and know no sessions.
type Policy struct {
	// Token is the API token (MERGEGUARD_API_TOKEN, or the one serve
	// generated); empty lets no admin in.
	Token string

	origins     *http.CrossOriginProtection
	httpsPublic bool
	sessions    *Sessions
}

// NewPolicy returns the policy for token. publicURL (server.public_url,
// may be empty) is the address browsers reach the server at; its origin is
// trusted for state-changing requests besides the request's own host.
func NewPolicy(token, publicURL string) (Policy, error) {
	p := Policy{Token: token, origins: http.NewCrossOriginProtection()}
	if publicURL == "" {
		return p, nil
	}
	u, err := url.Parse(publicURL)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return Policy{}, fmt.Errorf("public URL %q is not an absolute URL", publicURL)
	}
	if err := p.origins.AddTrustedOrigin(u.Scheme + "://" + u.Host); err != nil {
		return Policy{}, fmt.Errorf("public URL %q: %w", publicURL, err)
	}
	p.httpsPublic = u.Scheme == "https"
	return p, nil
}

// WithSessions returns the policy accepting the sign-in sessions s opens
// (nil: none).
func (p Policy) WithSessions(s *Sessions) Policy {
	p.sessions = s
	return p
}

// Sessions returns the sessions the policy accepts, nil when none.
func (p Policy) Sessions() *Sessions { return p.sessions }

// SecureCookies reports whether cookies set in answer to r are Secure:
// when r came over TLS or the public URL is https (TLS ends at a proxy).
// A local MergeGuard is served over plain HTTP, where a browser would drop
// a Secure cookie from a non-localhost name.
func (p Policy) SecureCookies(r *http.Request) bool {
	return r.TLS != nil || p.httpsPublic
}

// Viewer returns who r comes from: an admin when it carries the token as
// "Authorization: Bearer <token>" (the scheme in any case); otherwise the
// viewer of its live session cookie. It returns false for anybody else,
// whatever address the request comes from: a reverse proxy on the same
// host connects from loopback on every client's behalf.
func (p Policy) Viewer(r *http.Request) (Viewer, bool) {
	if p.Token != "" {
		if scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " "); ok && strings.EqualFold(scheme, "Bearer") && p.equal(tok) {
			return Viewer{Admin: true}, true
		}
	}
	if p.sessions != nil {
		if c, err := r.Cookie(SessionCookie); err == nil {
			if v, err := p.sessions.Open(r.Context(), c.Value); err == nil {
				return v, true
			}
		}
	}
	return Viewer{}, false
}

// Allow reports whether r comes from an admin (see Viewer): a token
// holder or a token session.
func (p Policy) Allow(r *http.Request) bool {
	v, ok := p.Viewer(r)
	return ok && v.Admin
}

// CheckToken reports whether tok is the API token (compared in constant
// time); false when no token is configured.
func (p Policy) CheckToken(tok string) bool { return p.Token != "" && p.equal(tok) }

func (p Policy) equal(tok string) bool {
	return subtle.ConstantTimeCompare([]byte(strings.TrimSpace(tok)), []byte(p.Token)) == 1
}

// ErrCrossOrigin says a state-changing request came from another site.
var ErrCrossOrigin = errors.New("cross-origin request refused")

// CheckOrigin refuses a state-changing request (POST, PUT, PATCH, DELETE)
// that a browser sent from another origin: Sec-Fetch-Site other than
// same-origin or none, or an Origin whose host is neither the request's
// Host nor the public URL's. Requests without either header (curl,
// scripts) pass: no browser sent them on someone else's behalf.
func (p Policy) CheckOrigin(r *http.Request) error {
	c := p.origins
	if c == nil {
		c = new(http.CrossOriginProtection) // the zero value trusts the request's own host only
	}
	if err := c.Check(r); err != nil {
		return fmt.Errorf("%w: %w", ErrCrossOrigin, err)
	}
	return nil
}

// CSRFCookie holds the web UI's double-submit token; CSRFHeader carries it
// back on the UI's state-changing requests.
const (
	CSRFCookie = "mergeguard_csrf"
	CSRFHeader = "X-CSRF-Token"
)

// CSRFToken returns the request's CSRF token, issuing a new one in a
// cookie when it has none. Pages embed it so their scripts can send it in
// the CSRFHeader.
func CSRFToken(w http.ResponseWriter, r *http.Request) (string, error) {
	if c, err := r.Cookie(CSRFCookie); err == nil && validToken(c.Value) {
		return c.Value, nil
	}
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("csrf token: %w", err)
	}
	tok := hex.EncodeToString(b)
	// Secure only over TLS: a local MergeGuard is served over plain HTTP,
	// where a browser would drop a Secure cookie from a non-localhost name.
	http.SetCookie(w, &http.Cookie{Name: CSRFCookie, Value: tok, Path: "/", HttpOnly: true, //nolint:gosec // Secure is set whenever the request came over TLS
		Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode})
	return tok, nil
}

func validToken(s string) bool {
	_, err := hex.DecodeString(s)
	return len(s) == 64 && err == nil
}

// ErrCSRF says a browser's state-changing request lacks the CSRF token.
var ErrCSRF = errors.New("missing or wrong CSRF token")

// CheckCSRF checks the double-submit token of a state-changing request a
// browser sent (one with an Origin or Sec-Fetch-Site header, or cookies):
// the CSRFHeader must equal the CSRFCookie. Other requests (curl, scripts
// with the bearer token) carry no ambient credentials and pass.
func CheckCSRF(r *http.Request) error {
	if safeMethod(r.Method) {
		return nil
	}
	if r.Header.Get("Origin") == "" && r.Header.Get("Sec-Fetch-Site") == "" && r.Header.Get("Cookie") == "" {
		return nil
	}
	c, err := r.Cookie(CSRFCookie)
	if err != nil || !validToken(c.Value) {
		return ErrCSRF
	}
	if subtle.ConstantTimeCompare([]byte(r.Header.Get(CSRFHeader)), []byte(c.Value)) != 1 {
		return ErrCSRF
	}
	return nil
}

func safeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}

// CSRFField is the form field that carries the CSRF token in the web UI's
// HTML forms (sign-in and sign-out), which cannot send the CSRFHeader.
const CSRFField = "csrf_token"

// CheckCSRFForm checks the double-submit token of an HTML form post: the
// CSRFField must equal the CSRFCookie. Unlike CheckCSRF it passes no
// request without them, browser or not. It reads the form.
func CheckCSRFForm(r *http.Request) error {
	c, err := r.Cookie(CSRFCookie)
	if err != nil || !validToken(c.Value) {
		return ErrCSRF
	}
	if subtle.ConstantTimeCompare([]byte(r.PostFormValue(CSRFField)), []byte(c.Value)) != 1 {
		return ErrCSRF
	}
	return nil
}
