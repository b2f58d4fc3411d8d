package access

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/mergeguard/mergeguard/config"
)

// SessionCookie is the web UI's sign-in session cookie.
const SessionCookie = "mergeguard_session"

// Session lifetimes: a token session lasts a working day; a GitHub session
// as long as GitHub's user tokens (eight hours when they expire).
const (
	TokenSessionTTL  = 12 * time.Hour
	GitHubSessionTTL = 8 * time.Hour
)

// Viewer is who a web UI request comes from.
type Viewer struct {
	// Admin is a holder of the API token (bearer, or a session opened
	// with it), or a local request when no token is configured: it sees
	// everything and may change what the UI changes.
	Admin bool
	// Login and UserID name a person signed in with GitHub.
	Login  string
	UserID int64
	// GitHubToken is that person's GitHub user token, with which GitHub is
	// asked what they may read. A config.Secret: it never prints.
	GitHubToken config.Secret
}

// Name is how the UI names the viewer.
func (v Viewer) Name() string {
	if v.Login != "" {
		return v.Login
	}
	return "token holder"
}

// session is what a session cookie holds, sealed.
type session struct {
	// Kind is "token" or "github".
	Kind string `json:"k"`
	// Fingerprint binds a token session to the API token it was opened
	// with: rotating the token ends those sessions.
	Fingerprint string `json:"f,omitempty"`
	Login       string `json:"l,omitempty"`
	UserID      int64  `json:"i,omitempty"`
	Token       string `json:"t,omitempty"`
	Expires     int64  `json:"e"`
}

// Sessions seals and opens session cookies. The cookie is the session's
// JSON sealed with AES-256-GCM (authenticated encryption: a changed byte
// fails to open, and the GitHub token inside cannot be read) under a key
// derived from configuration alone, so that every replica opens the
// sessions of every other.
type Sessions struct {
	aead     cipher.AEAD
	tokenMAC []byte // HMAC key of API token fingerprints
	token    string
	now      func() time.Time
}

// NewSessions derives the session keys from secret (database.secret_key, or
// the API token when that is empty) with HMAC-SHA256; token is the API
// token, which token sessions are bound to. It returns nil when secret is
// empty: nobody can sign in then.
func NewSessions(secret, token string) *Sessions {
	if secret == "" {
		return nil
	}
	key := derive(secret, "mergeguard session encryption v1")
	block, _ := aes.NewCipher(key) // a 32-byte key never fails
	aead, _ := cipher.NewGCM(block)
	return &Sessions{aead: aead, tokenMAC: derive(secret, "mergeguard token fingerprint v1"), token: token, now: time.Now}
}

func derive(secret, purpose string) []byte {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(purpose))
	return m.Sum(nil)
}

func (s *Sessions) fingerprint(token string) string {
	m := hmac.New(sha256.New, s.tokenMAC)
	m.Write([]byte(token))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:16])
}

// ErrBadSession says a session cookie is forged, damaged, expired or was
// opened with an API token that changed since.
var ErrBadSession = errors.New("invalid or expired session")

// TokenSession returns the cookie value of a session opened with the API
// token, valid for ttl.
func (s *Sessions) TokenSession(ttl time.Duration) (string, error) {
	return s.seal(session{Kind: "token", Fingerprint: s.fingerprint(s.token), Expires: s.now().Add(ttl).Unix()})
}

// GitHubSession returns the cookie value of a session of the GitHub user
// login (id) with their user token, valid for ttl.
func (s *Sessions) GitHubSession(login string, id int64, token string, ttl time.Duration) (string, error) {
	return s.seal(session{Kind: "github", Login: login, UserID: id, Token: token, Expires: s.now().Add(ttl).Unix()})
}

func (s *Sessions) seal(sess session) (string, error) {
	plain, err := json.Marshal(sess)
	if err != nil {
		return "", fmt.Errorf("seal session: %w", err)
	}
	nonce := make([]byte, s.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", fmt.Errorf("seal session: %w", err)
	}
	sealed := s.aead.Seal(nonce, nonce, plain, []byte(SessionCookie))
	return base64.RawURLEncoding.EncodeToString(sealed), nil
}

// Open returns the viewer of a session cookie's value.
func (s *Sessions) Open(value string) (Viewer, error) {
	raw, err := base64.RawURLEncoding.DecodeString(value)
	n := s.aead.NonceSize()
	if err != nil || len(raw) < n {
		return Viewer{}, ErrBadSession
	}
	plain, err := s.aead.Open(nil, raw[:n], raw[n:], []byte(SessionCookie))
	if err != nil {
		return Viewer{}, ErrBadSession
	}
	var sess session
	if err := json.Unmarshal(plain, &sess); err != nil || s.now().Unix() >= sess.Expires {
		return Viewer{}, ErrBadSession
	}
	switch sess.Kind {
	case "token":
		if s.token == "" || subtle.ConstantTimeCompare([]byte(sess.Fingerprint), []byte(s.fingerprint(s.token))) != 1 {
			return Viewer{}, ErrBadSession
		}
		return Viewer{Admin: true}, nil
	case "github":
		if sess.Login == "" || sess.UserID <= 0 || sess.Token == "" {
			return Viewer{}, ErrBadSession
		}
		return Viewer{Login: sess.Login, UserID: sess.UserID, GitHubToken: config.Secret(sess.Token)}, nil
	}
	return Viewer{}, ErrBadSession
}

// SetCookie sets the session cookie to value for ttl: HttpOnly,
// SameSite=Strict, Path=/, and Secure when secure is set.
func SetCookie(w http.ResponseWriter, name, value string, ttl time.Duration, secure bool) {
	http.SetCookie(w, &http.Cookie{Name: name, Value: value, Path: "/", MaxAge: int(ttl / time.Second), //nolint:gosec // Secure whenever the browser reaches us over TLS (see Policy.SecureCookies)
		HttpOnly: true, Secure: secure, SameSite: http.SameSiteStrictMode})
}

// ClearCookie removes the cookie name (set with SetCookie).
func ClearCookie(w http.ResponseWriter, name string, secure bool) {
	http.SetCookie(w, &http.Cookie{Name: name, Value: "", Path: "/", MaxAge: -1, //nolint:gosec // Secure as SetCookie
		HttpOnly: true, Secure: secure, SameSite: http.SameSiteStrictMode})
}
