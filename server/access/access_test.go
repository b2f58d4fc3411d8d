package access

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestPolicyAllow(t *testing.T) {
	tests := []struct {
		name        string
		token       string
		remote      string
		header      map[string]string
		cookie      string
		allowCookie bool
		// host is the Host header; empty means 127.0.0.1:8080.
		host string
		want bool
	}{
		{name: "no token, loopback", remote: "127.0.0.1:5555", want: true},
		{name: "no token, ipv6 loopback", remote: "[::1]:5555", want: true},
		{name: "no token, remote", remote: "203.0.113.9:5555", want: false},
		{name: "no token, loopback via proxy", remote: "127.0.0.1:5555", header: map[string]string{"X-Forwarded-For": "203.0.113.9"}, want: false},
		{name: "token, remote with bearer", token: "s3cret", remote: "203.0.113.9:1", header: map[string]string{"Authorization": "Bearer s3cret"}, want: true},
		{name: "token, remote with wrong bearer", token: "s3cret", remote: "203.0.113.9:1", header: map[string]string{"Authorization": "Bearer nope"}, want: false},
		{name: "token, remote without bearer", token: "s3cret", remote: "203.0.113.9:1", want: false},
		{name: "token, remote basic auth is not bearer", token: "s3cret", remote: "203.0.113.9:1", header: map[string]string{"Authorization": "Basic s3cret"}, want: false},
		{name: "token, cookie allowed", token: "s3cret", remote: "203.0.113.9:1", cookie: "s3cret", allowCookie: true, want: true},
		{name: "token, cookie not allowed for API", token: "s3cret", remote: "203.0.113.9:1", cookie: "s3cret", want: false},
		{name: "token set, loopback is not enough (a proxy on the same host)", token: "s3cret", remote: "127.0.0.1:1", want: false},
		{name: "token set, loopback with the token", token: "s3cret", remote: "127.0.0.1:1", header: map[string]string{"Authorization": "Bearer s3cret"}, want: true},
		{name: "token, lower-case scheme (RFC 7235)", token: "s3cret", remote: "203.0.113.9:1", header: map[string]string{"Authorization": "bearer s3cret"}, want: true},
		{name: "token, upper-case scheme", token: "s3cret", remote: "203.0.113.9:1", header: map[string]string{"Authorization": "BEARER s3cret"}, want: true},
		{name: "no token, loopback with a foreign Host (DNS rebinding)", remote: "127.0.0.1:5555", host: "evil.example:8080", want: false},
		{name: "no token, loopback as localhost", remote: "127.0.0.1:5555", host: "localhost:8080", want: true},
		{name: "no token, loopback as [::1]", remote: "[::1]:5555", host: "[::1]:8080", want: true},
		{name: "empty token never matches empty bearer", remote: "203.0.113.9:1", header: map[string]string{"Authorization": "Bearer "}, want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, "/api/review/x", nil)
			r.RemoteAddr = tt.remote
			r.Host = "127.0.0.1:8080"
			if tt.host != "" {
				r.Host = tt.host
			}
			for k, v := range tt.header {
				r.Header.Set(k, v)
			}
			if tt.cookie != "" {
				r.AddCookie(&http.Cookie{Name: CookieName, Value: tt.cookie})
			}
			if got := (Policy{Token: tt.token}).Allow(r, tt.allowCookie); got != tt.want {
				t.Errorf("Allow = %v, want %v", got, tt.want)
			}
		})
	}
}
