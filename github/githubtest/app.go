package githubtest

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/palantir/go-githubapp/githubapp"
)

const docAccessToken = "https://docs.github.com/rest/apps/apps#create-an-installation-access-token-for-an-app"

// testKeyBits is the size of the App keys AppConfig generates: the
// smallest crypto/rsa accepts. GitHub's own are 2048 bits, but a 2048-bit
// key takes about five times as long to generate, and nearly every test of
// a package with a database generates one.
const testKeyBits = 1024

// appPrivateKey is the private key of every App AppConfig makes in a test
// binary, generated once: a key costs tens of milliseconds of CPU (more
// under the race detector), and a package with a database makes a fake
// per test. The key is no secret of any test; each fake still accepts
// only JWTs for the integration id it was configured with.
var appPrivateKey = sync.OnceValues(func() (*rsa.PrivateKey, error) {
	return rsa.GenerateKey(rand.Reader, testKeyBits)
})

// appKey is the App identity AppConfig generated; the token route checks
// JWTs against it.
type appKey struct {
	integrationID int64
	public        *rsa.PublicKey
}

// AppConfig returns a go-githubapp configuration for an App of the fake:
// its REST and GraphQL URLs, integrationID, a webhook secret and an RSA
// private key (appPrivateKey). From then on, installation tokens are issued
// only for JWTs signed with that key for that App.
func (s *Server) AppConfig(integrationID int64) githubapp.Config {
	s.t.Helper()
	key, err := appPrivateKey()
	if err != nil {
		s.t.Fatalf("githubtest: generate App key: %v", err)
	}
	s.mu.Lock()
	s.appKey = &appKey{integrationID: integrationID, public: &key.PublicKey}
	s.mu.Unlock()
	var c githubapp.Config
	c.V3APIURL, c.V4APIURL = s.URL(), s.GraphQLURL()
	c.App.IntegrationID = integrationID
	c.App.WebhookSecret = "githubtest-webhook-secret"
	c.App.PrivateKey = string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}))
	return c
}

// Tokens returns how many installation tokens the fake issued.
func (s *Server) Tokens() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.tokens)
}

func (s *Server) accessToken(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id, err := strconv.ParseInt(r.PathValue("installation_id"), 10, 64)
	if err != nil {
		writeNotFound(w, docAccessToken)
		return
	}
	jwt, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || s.checkJWT(jwt) != nil {
		writeJSON(w, http.StatusUnauthorized, map[string]any{
			"message":           "A JSON web token could not be decoded",
			"documentation_url": "https://docs.github.com/rest",
			"status":            "401",
		})
		return
	}
	token := fmt.Sprintf("ghs_githubtest_%d_%d", id, len(s.tokens)+1)
	s.tokens[token] = id
	m := s.example("installation-token.json")
	m["token"], m["expires_at"] = token, time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	writeJSON(w, http.StatusCreated, m)
}

// checkJWT verifies an App JWT: RS256, signed with the AppConfig key,
// issued by its integration id, not expired. Without AppConfig any
// well-formed JWT passes.
func (s *Server) checkJWT(token string) error {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return fmt.Errorf("not a JWT")
	}
	var header struct {
		Alg string `json:"alg"`
	}
	var claims struct {
		Iss any   `json:"iss"`
		Exp int64 `json:"exp"`
	}
	for i, v := range []any{&header, &claims} {
		b, err := base64.RawURLEncoding.DecodeString(parts[i])
		if err != nil {
			return err
		}
		if err := json.Unmarshal(b, v); err != nil {
			return err
		}
	}
	if s.appKey == nil {
		return nil
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return err
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	switch {
	case header.Alg != "RS256":
		return fmt.Errorf("alg %s", header.Alg)
	case rsa.VerifyPKCS1v15(s.appKey.public, crypto.SHA256, sum[:], sig) != nil:
		return fmt.Errorf("bad signature")
	case fmt.Sprint(claims.Iss) != strconv.FormatInt(s.appKey.integrationID, 10):
		return fmt.Errorf("issuer %v", claims.Iss)
	case time.Unix(claims.Exp, 0).Before(time.Now()):
		return fmt.Errorf("expired")
	}
	return nil
}

const docApp = "https://docs.github.com/rest/apps/apps#get-the-authenticated-app"

// app answers GET /app, the authenticated App, for a request signed with
// the App's JWT (an installation token is refused, as on GitHub). Its slug
// is the bot login's name without "[bot]".
func (s *Server) app(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	jwt, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || s.checkJWT(jwt) != nil {
		writeJSON(w, http.StatusUnauthorized, map[string]any{
			"message":           "A JSON web token could not be decoded",
			"documentation_url": docApp,
			"status":            "401",
		})
		return
	}
	m := s.example("integration.json")
	m["slug"] = strings.TrimSuffix(s.bot.Login, "[bot]")
	if s.appKey != nil {
		m["id"] = s.appKey.integrationID
	}
	writeJSON(w, http.StatusOK, m)
}

// user answers GET /user, the authenticated user: the user of a user
// token (UserToken, the OAuth flow), else the bot user (SetBot),
// whom every other token of the fake acts as, except an installation token,
// which GitHub refuses here (403, "Resource not accessible by
// integration"), as it refuses Actions' GITHUB_TOKEN.
func (s *Server) user(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if u, ok := s.userOfLocked(r); ok {
		writeJSON(w, http.StatusOK, s.userJSON(u))
		return
	}
	if s.tokens[bearer(r)] > 0 {
		writeJSON(w, http.StatusForbidden, map[string]any{"message": "Resource not accessible by integration",
			"documentation_url": "https://docs.github.com/rest/users/users#get-the-authenticated-user", "status": "403"})
		return
	}
	writeJSON(w, http.StatusOK, s.userJSON(s.bot))
}

func (s *Server) rateLimit(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, s.example("rate-limit-overview.json"))
}
