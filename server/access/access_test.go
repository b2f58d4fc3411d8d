package access

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func must(v string, err error) string {
	if err != nil {
		panic(err)
	}
	return v
}

func TestPolicyAllow(t *testing.T) {
	tests := []struct {
		name   string
		token  string
		remote string
		host   string
		header map[string]string
		cookie string
		want   bool
	}{
		// No anonymous mode: without a token nothing passes, whatever the
		// address and host (a same-host proxy connects from loopback).
		{name: "no token, loopback", remote: "127.0.0.1:5555", host: "localhost:8080", want: false},
		{name: "no token, loopback by address", remote: "127.0.0.1:5555", host: "127.0.0.1:8080", want: false},
		{name: "no token, ipv6 loopback", remote: "[::1]:5555", host: "[::1]:8080", want: false},
		{name: "no token, DNS rebinding host", remote: "127.0.0.1:5555", host: "evil.example:8080", want: false},
		{name: "no token, remote", remote: "203.0.113.9:5555", host: "localhost", want: false},
		{name: "token, remote with bearer", token: "s3cret", remote: "203.0.113.9:1", header: map[string]string{"Authorization": "Bearer s3cret"}, want: true},
		{name: "token, lower-case scheme", token: "s3cret", remote: "203.0.113.9:1", header: map[string]string{"Authorization": "bearer s3cret"}, want: true},
		{name: "token, upper-case scheme", token: "s3cret", remote: "203.0.113.9:1", header: map[string]string{"Authorization": "BEARER s3cret"}, want: true},
		{name: "token, remote with wrong bearer", token: "s3cret", remote: "203.0.113.9:1", header: map[string]string{"Authorization": "Bearer nope"}, want: false},
		{name: "token, remote without bearer", token: "s3cret", remote: "203.0.113.9:1", want: false},
		{name: "token, remote basic auth is not bearer", token: "s3cret", remote: "203.0.113.9:1", header: map[string]string{"Authorization": "Basic s3cret"}, want: false},
		{name: "token, session", token: "s3cret", remote: "203.0.113.9:1", cookie: "session", want: true},
		{name: "token, raw token as the session cookie", token: "s3cret", remote: "203.0.113.9:1", cookie: "s3cret", want: false},
		{name: "token, session of another token", token: "s3cret", remote: "203.0.113.9:1", cookie: "other", want: false},
		{name: "token, GitHub session is no admin", token: "s3cret", remote: "203.0.113.9:1", cookie: "github", want: false},
		// A reverse proxy on the same host without X-Forwarded-For.
		{name: "token set, loopback needs it too", token: "s3cret", remote: "127.0.0.1:1", host: "localhost:8080", want: false},
		{name: "token set, loopback with it", token: "s3cret", remote: "127.0.0.1:1", host: "localhost:8080", header: map[string]string{"Authorization": "Bearer s3cret"}, want: true},
		{name: "empty token never matches empty bearer", remote: "203.0.113.9:1", header: map[string]string{"Authorization": "Bearer "}, want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, "/api/review/x", nil)
			r.RemoteAddr = tt.remote
			r.Host = tt.host
			for k, v := range tt.header {
				r.Header.Set(k, v)
			}
			reg := newRegistry()
			sessions := NewSessions("key", tt.token, reg)
			switch tt.cookie {
			case "":
			case "session":
				r.AddCookie(&http.Cookie{Name: SessionCookie, Value: must(sessions.TokenSession(t.Context(), time.Hour))})
			case "other":
				r.AddCookie(&http.Cookie{Name: SessionCookie, Value: must(NewSessions("key", "other", reg).TokenSession(t.Context(), time.Hour))})
			case "github":
				r.AddCookie(&http.Cookie{Name: SessionCookie, Value: must(sessions.GitHubSession(t.Context(), "mona", 7, "ghu_x", time.Hour))})
			default:
				r.AddCookie(&http.Cookie{Name: SessionCookie, Value: tt.cookie})
			}
			if got := (Policy{Token: tt.token}).WithSessions(sessions).Allow(r); got != tt.want {
				t.Errorf("Allow = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestCheckOrigin(t *testing.T) {
	p, err := NewPolicy("", "https://mergeguard.example.com/")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, method, host string
		header             map[string]string
		want               bool
	}{
		{"curl, no browser headers", "POST", "localhost:8080", nil, true},
		{"same origin by Origin", "POST", "localhost:8080", map[string]string{"Origin": "http://localhost:8080"}, true},
		{"same origin by fetch metadata", "POST", "localhost:8080", map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": "http://localhost:8080"}, true},
		{"typed in the address bar", "POST", "localhost:8080", map[string]string{"Sec-Fetch-Site": "none"}, true},
		{"cross-site form", "POST", "localhost:8080", map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"}, false},
		{"cross-site without Origin", "POST", "localhost:8080", map[string]string{"Sec-Fetch-Site": "cross-site"}, false},
		{"same-site sibling", "POST", "localhost:8080", map[string]string{"Sec-Fetch-Site": "same-site", "Origin": "http://localhost:9999"}, false},
		{"old browser, other origin", "POST", "localhost:8080", map[string]string{"Origin": "https://evil.example"}, false},
		{"old browser, other origin, DELETE", "DELETE", "localhost:8080", map[string]string{"Origin": "https://evil.example"}, false},
		{"old browser, other origin, PUT", "PUT", "localhost:8080", map[string]string{"Origin": "https://evil.example"}, false},
		{"old browser, other origin, PATCH", "PATCH", "localhost:8080", map[string]string{"Origin": "https://evil.example"}, false},
		{"behind a proxy, public URL origin", "POST", "127.0.0.1:8080", map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": "https://mergeguard.example.com"}, true},
		{"behind a proxy, old browser, public URL origin", "POST", "127.0.0.1:8080", map[string]string{"Origin": "https://mergeguard.example.com"}, true},
		{"cross-site GET is safe", "GET", "localhost:8080", map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(tt.method, "/api/review", nil)
			r.Host = tt.host
			for k, v := range tt.header {
				r.Header.Set(k, v)
			}
			err := p.CheckOrigin(r)
			if (err == nil) != tt.want {
				t.Errorf("CheckOrigin = %v, want allowed=%v", err, tt.want)
			}
			if err != nil && !errors.Is(err, ErrCrossOrigin) {
				t.Errorf("error %v is not ErrCrossOrigin", err)
			}
		})
	}
}

func TestNewPolicyRejectsBadPublicURL(t *testing.T) {
	for _, bad := range []string{"mergeguard.example.com", "://x", "/relative"} {
		if _, err := NewPolicy("", bad); err == nil {
			t.Errorf("NewPolicy(%q) accepted it", bad)
		}
	}
}

func TestCSRF(t *testing.T) {
	// A page load issues the token, once.
	w := httptest.NewRecorder()
	page := httptest.NewRequest(http.MethodGet, "/new", nil)
	tok, err := CSRFToken(w, page)
	if err != nil {
		t.Fatal(err)
	}
	cookies := w.Result().Cookies()
	if len(cookies) != 1 || cookies[0].Name != CSRFCookie || cookies[0].Value != tok || !cookies[0].HttpOnly ||
		cookies[0].SameSite != http.SameSiteStrictMode {
		t.Fatalf("issued cookies %+v, want one HttpOnly SameSite=Strict %s=%s", cookies, CSRFCookie, tok)
	}
	again := httptest.NewRequest(http.MethodGet, "/new", nil)
	again.AddCookie(cookies[0])
	w2 := httptest.NewRecorder()
	if tok2, err := CSRFToken(w2, again); err != nil || tok2 != tok || len(w2.Result().Cookies()) != 0 {
		t.Errorf("second page load: token %q (%v), cookies %v; want the same token, no new cookie", tok2, err, w2.Result().Cookies())
	}

	other := strings.Repeat("ab", 32)
	tests := []struct {
		name   string
		method string
		header map[string]string
		cookie string
		want   bool
	}{
		{"script without browser headers", "POST", nil, "", true},
		{"browser, token matches", "POST", map[string]string{"Origin": "http://localhost", CSRFHeader: tok}, tok, true},
		{"browser, no header", "POST", map[string]string{"Origin": "http://localhost"}, tok, false},
		{"browser, wrong header", "POST", map[string]string{"Sec-Fetch-Site": "same-origin", CSRFHeader: other}, tok, false},
		{"browser, no cookie", "POST", map[string]string{"Origin": "http://localhost", CSRFHeader: tok}, "", false},
		{"cookie only, no header", "POST", nil, tok, false},
		{"browser, malformed cookie and header", "POST", map[string]string{"Origin": "http://localhost", CSRFHeader: "x"}, "x", false},
		{"browser GET needs none", "GET", map[string]string{"Origin": "http://localhost"}, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(tt.method, "/api/review", nil)
			for k, v := range tt.header {
				r.Header.Set(k, v)
			}
			if tt.cookie != "" {
				r.AddCookie(&http.Cookie{Name: CSRFCookie, Value: tt.cookie})
			}
			if err := CheckCSRF(r); (err == nil) != tt.want {
				t.Errorf("CheckCSRF = %v, want allowed=%v", err, tt.want)
			}
		})
	}
}
