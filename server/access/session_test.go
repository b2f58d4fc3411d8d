package access

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// memRegistry is a Registry in memory (the store's is tested with the
// store and end to end).
type memRegistry struct {
	mu   sync.Mutex
	live map[string]time.Time
}

func newRegistry() *memRegistry { return &memRegistry{live: map[string]time.Time{}} }

func (m *memRegistry) AddWebSession(_ context.Context, id []byte, _ string, expires time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.live[string(id)] = expires
	return nil
}

func (m *memRegistry) WebSessionLive(_ context.Context, id []byte) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.live[string(id)]
	return ok, nil
}

func (m *memRegistry) EndWebSession(_ context.Context, id []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.live, string(id))
	return nil
}

func (m *memRegistry) EndAllWebSessions(context.Context) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := int64(len(m.live))
	clear(m.live)
	return n, nil
}

func TestSessionsOpen(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	reg := newRegistry()
	at := func(secret, token string, when time.Time) *Sessions {
		s := NewSessions(secret, token, reg)
		s.now = func() time.Time { return when }
		return s
	}
	s := at("secret-key", "s3cret", now)
	token := must(s.TokenSession(t.Context(), time.Hour))
	gh := must(s.GitHubSession(t.Context(), "mona", 77, "ghu_token", time.Hour))
	forgotten := must(s.TokenSession(t.Context(), time.Hour))
	if err := reg.EndWebSession(t.Context(), idHash(must(s.unsealID(forgotten)))); err != nil {
		t.Fatal(err)
	}
	flip := func(v string, i int) string {
		raw, _ := base64.RawURLEncoding.DecodeString(v)
		raw[i] ^= 1
		return base64.RawURLEncoding.EncodeToString(raw)
	}
	tagAt := len(gh)*3/4 - 1 // the last byte of the decoded value
	tests := []struct {
		name     string
		sessions *Sessions
		value    string
		want     Viewer
		ok       bool
	}{
		{"token session", s, token, Viewer{Admin: true}, true},
		{"GitHub session", s, gh, Viewer{Login: "mona", UserID: 77, GitHubToken: "ghu_token"}, true},
		{"a flipped nonce byte", s, flip(gh, 0), Viewer{}, false},
		{"a flipped ciphertext byte", s, flip(gh, 20), Viewer{}, false},
		{"a flipped tag byte", s, flip(gh, tagAt), Viewer{}, false},
		{"cut short", s, gh[:10], Viewer{}, false},
		{"not base64", s, "!!!", Viewer{}, false},
		{"empty", s, "", Viewer{}, false},
		{"expired", at("secret-key", "s3cret", now.Add(time.Hour)), gh, Viewer{}, false},
		{"not yet expired", at("secret-key", "s3cret", now.Add(time.Hour-time.Second)), gh, Viewer{Login: "mona", UserID: 77, GitHubToken: "ghu_token"}, true},
		{"another key", at("other-key", "s3cret", now), gh, Viewer{}, false},
		{"token rotated", at("secret-key", "new-token", now), token, Viewer{}, false},
		{"token removed", at("secret-key", "", now), token, Viewer{}, false},
		{"not in the registry", s, forgotten, Viewer{}, false},
		{"GitHub session survives a token rotation", at("secret-key", "new-token", now), gh, Viewer{Login: "mona", UserID: 77, GitHubToken: "ghu_token"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.sessions.Open(t.Context(), tt.value)
			if (err == nil) != tt.ok {
				t.Fatalf("Open: %v, want ok %v", err, tt.ok)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("viewer (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSessionHidesTheGitHubToken: the user's token is neither readable in
// the cookie nor printed with the viewer.
func TestSessionHidesTheGitHubToken(t *testing.T) {
	s := NewSessions("secret-key", "", newRegistry())
	v := must(s.GitHubSession(t.Context(), "mona", 77, "ghu_visible_token", time.Hour))
	raw, err := base64.RawURLEncoding.DecodeString(v)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), "ghu_visible") || strings.Contains(string(raw), "mona") {
		t.Errorf("the cookie shows its content: %q", raw)
	}
	viewer, err := s.Open(t.Context(), v)
	if err != nil {
		t.Fatal(err)
	}
	if out := fmt.Sprintf("%v %+v %#v", viewer, viewer, viewer); strings.Contains(out, "ghu_visible") {
		t.Errorf("the viewer prints its token: %s", out)
	}
	if NewSessions("", "tok", newRegistry()) != nil || NewSessions("key", "tok", nil) != nil {
		t.Error("sessions without a secret or a registry: want none")
	}
}

// unsealID is the id inside a cookie's value.
func (s *Sessions) unsealID(value string) (string, error) {
	sess, err := s.unseal(value)
	return sess.ID, err
}

// TestSessionsRevoke: End revokes one session (another stays open);
// EndAll revokes every one; a cookie sealed without an id (before
// sessions were registered) opens nothing.
func TestSessionsRevoke(t *testing.T) {
	ctx := t.Context()
	s := NewSessions("secret-key", "s3cret", newRegistry())
	a, b, c := must(s.TokenSession(ctx, time.Hour)), must(s.TokenSession(ctx, time.Hour)), must(s.GitHubSession(ctx, "mona", 7, "ghu_x", time.Hour))
	old := must(s.seal(session{Kind: "token", Fingerprint: s.fingerprint("s3cret"), Expires: s.now().Add(time.Hour).Unix()}))
	open := func() []bool {
		var got []bool
		for _, v := range []string{a, b, c, old} {
			_, err := s.Open(ctx, v)
			got = append(got, err == nil)
		}
		return got
	}
	var steps [][]bool
	steps = append(steps, open())
	if err := s.End(ctx, a); err != nil {
		t.Fatal(err)
	}
	steps = append(steps, open())
	if n, err := s.EndAll(ctx); err != nil || n != 2 {
		t.Fatalf("EndAll = %d, %v; want 2", n, err)
	}
	steps = append(steps, open())
	if err := s.End(ctx, "garbage"); err != nil {
		t.Errorf("End of no session: %v", err)
	}
	want := [][]bool{{true, true, true, false}, {false, true, true, false}, {false, false, false, false}}
	if d := cmp.Diff(want, steps); d != "" {
		t.Errorf("sessions open after each step (-want +got):\n%s", d)
	}
}

func TestSessionCookieAttributes(t *testing.T) {
	public, err := NewPolicy("tok", "https://mergeguard.example.com")
	if err != nil {
		t.Fatal(err)
	}
	plain, err := NewPolicy("tok", "http://localhost:8080")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		policy Policy
		tls    bool
		secure bool
	}{
		{"plain HTTP, no public URL", Policy{Token: "tok"}, false, false},
		{"plain HTTP, http public URL", plain, false, false},
		{"TLS here", Policy{Token: "tok"}, true, true},
		{"TLS ends at a proxy, https public URL", public, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "/signin", nil)
			if tt.tls {
				r.TLS = &tls.ConnectionState{}
			}
			w := httptest.NewRecorder()
			SetCookie(w, SessionCookie, "v", time.Hour, tt.policy.SecureCookies(r))
			cs := w.Result().Cookies()
			if len(cs) != 1 {
				t.Fatalf("cookies %v, want one", cs)
			}
			c := cs[0]
			got := [...]any{c.Name, c.Path, c.HttpOnly, c.Secure, c.SameSite, c.MaxAge}
			want := [...]any{SessionCookie, "/", true, tt.secure, http.SameSiteStrictMode, 3600}
			if got != want {
				t.Errorf("cookie %v, want %v", got, want)
			}
		})
	}
}

func TestCheckCSRFForm(t *testing.T) {
	tok := strings.Repeat("ab", 32)
	tests := []struct {
		name, cookie, field string
		want                bool
	}{
		{"matching", tok, tok, true},
		{"no field", tok, "", false},
		{"wrong field", tok, strings.Repeat("cd", 32), false},
		{"no cookie", "", tok, false},
		{"malformed both", "x", "x", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := url.Values{CSRFField: {tt.field}}.Encode()
			r := httptest.NewRequest(http.MethodPost, "/signin", strings.NewReader(body))
			r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			if tt.cookie != "" {
				r.AddCookie(&http.Cookie{Name: CSRFCookie, Value: tt.cookie})
			}
			if err := CheckCSRFForm(r); (err == nil) != tt.want {
				t.Errorf("CheckCSRFForm = %v, want allowed=%v", err, tt.want)
			}
		})
	}
}
