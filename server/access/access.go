// Package access decides who may use MergeGuard's API and web UI: holders of
// the API token, and — only when the request really comes from this machine —
// local users without one.
package access

import (
	"crypto/subtle"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// CookieName is the cookie the web UI keeps the API token in, so that page
// navigations (which cannot send an Authorization header) are authorised.
const CookieName = "mergeguard_token"

// Policy authorises requests against an optional bearer token.
type Policy struct {
	// Token is MERGEGUARD_API_TOKEN; empty means only local requests pass.
	Token string
}

// Allow reports whether r may proceed. With a token configured, only a
// request carrying it passes ("Authorization: Bearer <token>", the scheme
// in any case as RFC 7235 says, or the UI cookie when allowCookie is set):
// a reverse proxy on the same host makes every request look local. Without
// a token, only local requests pass (Local).
func (p Policy) Allow(r *http.Request, allowCookie bool) bool {
	if p.Token == "" {
		return Local(r)
	}
	if scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " "); ok && strings.EqualFold(scheme, "Bearer") && p.equal(tok) {
		return true
	}
	if allowCookie {
		if c, err := r.Cookie(CookieName); err == nil {
			if v, err := url.QueryUnescape(c.Value); err == nil && p.equal(v) {
				return true
			}
		}
	}
	return false
}

func (p Policy) equal(tok string) bool {
	return subtle.ConstantTimeCompare([]byte(strings.TrimSpace(tok)), []byte(p.Token)) == 1
}

// Local reports whether r comes from a loopback address, was not forwarded
// by a proxy that says so (X-Forwarded-For, Forwarded, X-Real-Ip), and
// names a loopback host (localhost, 127.0.0.1 or [::1], any port): a page
// of another site whose name resolves to 127.0.0.1 (DNS rebinding) sends
// its own name as Host.
func Local(r *http.Request) bool {
	if r.Header.Get("X-Forwarded-For") != "" || r.Header.Get("Forwarded") != "" || r.Header.Get("X-Real-Ip") != "" {
		return false
	}
	if !loopbackHost(r.Host) {
		return false
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// loopbackHost reports whether a Host header names this machine by a
// loopback name or address.
func loopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	switch strings.ToLower(host) {
	case "localhost", "127.0.0.1", "::1":
		return true
	}
	return false
}
