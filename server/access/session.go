package access

import (
	"context"
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
	// with it): it sees everything and may change what the UI changes.
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
	// ID names the session in the Registry (random, base64url): a
	// session the registry no longer knows is over.
	ID string `json:"s"`
}

// Registry keeps the live sessions by the SHA-256 of their ids, so that
// a session ends everywhere when it is signed out (*store.Store, in the
// database every replica shares). It is asked on every request that
// carries a session cookie: one primary-key lookup, no cache, so a
// sign-out takes effect at once.
type Registry interface {
	AddWebSession(ctx context.Context, idHash []byte, kind string, expires time.Time) error
	WebSessionLive(ctx context.Context, idHash []byte) (bool, error)
	EndWebSession(ctx context.Context, idHash []byte) error
	EndAllWebSessions(ctx context.Context) (int64, error)
}

// Sessions seals and opens session cookies. The cookie is the session's
// JSON sealed with AES-256-GCM (authenticated encryption: a changed byte
// fails to open, and the GitHub token inside cannot be read) under a key
// derived from configuration alone, so that every replica opens the
// sessions of every other; the session's id must also be live in the
// Registry, so that signing out revokes it.
type Sessions struct {
	aead     cipher.AEAD
	tokenMAC []byte // HMAC key of API token fingerprints
	token    string
	reg      Registry
	now      func() time.Time
}

// NewSessions derives the session keys from secret (database.secret_key, or
// the API token when that is empty) with HMAC-SHA256; token is the API
// token, which token sessions are bound to; reg keeps the live sessions.
// It returns nil when secret is empty or reg is nil: nobody can sign in
// then.
func NewSessions(secret, token string, reg Registry) *Sessions {
	if secret == "" || reg == nil {
		return nil
	}
	key := derive(secret, "mergeguard session encryption v1")
	block, _ := aes.NewCipher(key) // a 32-byte key never fails
	aead, _ := cipher.NewGCM(block)
	return &Sessions{aead: aead, tokenMAC: derive(secret, "mergeguard token fingerprint v1"), token: token, reg: reg, now: time.Now}
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

// TokenSession opens a session with the API token, valid for ttl, and
// returns its cookie value.
func (s *Sessions) TokenSession(ctx context.Context, ttl time.Duration) (string, error) {
	return s.start(ctx, session{Kind: "token", Fingerprint: s.fingerprint(s.token), Expires: s.now().Add(ttl).Unix()})
}

// GitHubSession opens a session of the GitHub user login (id) with their
// user token, valid for ttl, and returns its cookie value.
func (s *Sessions) GitHubSession(ctx context.Context, login string, id int64, token string, ttl time.Duration) (string, error) {
	return s.start(ctx, session{Kind: "github", Login: login, UserID: id, Token: token, Expires: s.now().Add(ttl).Unix()})
}

// start gives sess a fresh id, records it in the registry and seals it.
func (s *Sessions) start(ctx context.Context, sess session) (string, error) {
	id := make([]byte, 32)
	if _, err := rand.Read(id); err != nil {
		return "", fmt.Errorf("open session: %w", err)
	}
	sess.ID = base64.RawURLEncoding.EncodeToString(id)
	if err := s.reg.AddWebSession(ctx, idHash(sess.ID), sess.Kind, time.Unix(sess.Expires, 0)); err != nil {
		return "", fmt.Errorf("open session: %w", err)
	}
	return s.seal(sess)
}

// idHash is what the registry keeps of a session id.
func idHash(id string) []byte {
	h := sha256.Sum256([]byte(id))
	return h[:]
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

// Open returns the viewer of a session cookie's value: sealed by these
// keys, not expired, and still live in the registry.
func (s *Sessions) Open(ctx context.Context, value string) (Viewer, error) {
	sess, err := s.unseal(value)
	if err != nil {
		return Viewer{}, err
	}
	live, err := s.reg.WebSessionLive(ctx, idHash(sess.ID))
	if err != nil {
		return Viewer{}, fmt.Errorf("open session: %w", err)
	}
	if !live {
		return Viewer{}, ErrBadSession
	}
	return s.viewer(sess)
}

// End revokes the session of a cookie's value (sign-out); a value that
// does not open is no session, and ending it is no error.
func (s *Sessions) End(ctx context.Context, value string) error {
	sess, err := s.unseal(value)
	if err != nil {
		return nil
	}
	return s.reg.EndWebSession(ctx, idHash(sess.ID))
}

// EndAll revokes every session and returns how many were live.
func (s *Sessions) EndAll(ctx context.Context) (int64, error) {
	return s.reg.EndAllWebSessions(ctx)
}

// unseal opens a cookie's value: sealed by these keys, with an id, not
// expired.
func (s *Sessions) unseal(value string) (session, error) {
	raw, err := base64.RawURLEncoding.DecodeString(value)
	n := s.aead.NonceSize()
	if err != nil || len(raw) < n {
		return session{}, ErrBadSession
	}
	plain, err := s.aead.Open(nil, raw[:n], raw[n:], []byte(SessionCookie))
	if err != nil {
		return session{}, ErrBadSession
	}
	var sess session
	if err := json.Unmarshal(plain, &sess); err != nil || s.now().Unix() >= sess.Expires || sess.ID == "" {
		return session{}, ErrBadSession
	}
	return sess, nil
}

// viewer is who an open session is.
func (s *Sessions) viewer(sess session) (Viewer, error) {
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
