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

// Allow reports whether r may proceed. A request passes when it carries the
// token (as "Authorization: Bearer <token>", or as the UI cookie when
// allowCookie is set) or when it comes from loopback without proxy headers.
func (p Policy) Allow(r *http.Request, allowCookie bool) bool {
	if p.Token != "" {
		if tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && p.equal(tok) {
			return true
		}
		if allowCookie {
			if c, err := r.Cookie(CookieName); err == nil {
				if v, err := url.QueryUnescape(c.Value); err == nil && p.equal(v) {
					return true
				}
			}
		}
	}
	return Local(r)
}

func (p Policy) equal(tok string) bool {
	return subtle.ConstantTimeCompare([]byte(strings.TrimSpace(tok)), []byte(p.Token)) == 1
}

// Local reports whether r comes from a loopback address and was not
// forwarded by a proxy (a reverse proxy on the same host connects from
// loopback but adds X-Forwarded-For or Forwarded).
func Local(r *http.Request) bool {
	if r.Header.Get("X-Forwarded-For") != "" || r.Header.Get("Forwarded") != "" || r.Header.Get("X-Real-Ip") != "" {
		return false
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
