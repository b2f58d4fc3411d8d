package setup

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/http"
	"time"
)

// stateTTL is how long a started setup can be finished.
const stateTTL = 10 * time.Minute

// cookieName holds the nonce of the browser that started a setup.
const cookieName = "mergeguard_setup"

// random returns 32 random bytes, base64url.
func random() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("random: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// digest is what the database keeps of a state or nonce: its SHA-256.
func digest(s string) []byte {
	h := sha256.Sum256([]byte(s))
	return h[:]
}

// setNonceCookie binds the setup to this browser. The cookie must come
// back on GitHub's redirect to /setup/callback, a top-level navigation
// from github.com: SameSite=Lax sends it there (Strict would not, being a
// cross-site navigation), while still keeping it off cross-site
// subrequests and POSTs. It is HttpOnly, limited to /setup and lives as
// long as the state.
func setNonceCookie(w http.ResponseWriter, r *http.Request, nonce string) {
	//nolint:gosec // Secure is set whenever the request came over TLS (a local MergeGuard is plain HTTP)
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: nonce, Path: "/setup", MaxAge: int(stateTTL / time.Second),
		HttpOnly: true, Secure: r.TLS != nil, SameSite: http.SameSiteLaxMode})
}

// clearNonceCookie deletes the cookie once the setup is done.
func clearNonceCookie(w http.ResponseWriter, r *http.Request) {
	//nolint:gosec // Secure is set whenever the request came over TLS (a local MergeGuard is plain HTTP)
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: "", Path: "/setup", MaxAge: -1,
		HttpOnly: true, Secure: r.TLS != nil, SameSite: http.SameSiteLaxMode})
}
