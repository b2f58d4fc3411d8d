package e2e

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/mergeguard/mergeguard/github/githubtest"
	"github.com/mergeguard/mergeguard/server/store/storetest"
)

// logField returns the first value of field in the replica's JSON log, ""
// when no line has it.
func (r *replica) logField(t *testing.T, field string) string {
	t.Helper()
	b, err := os.ReadFile(r.log)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		var m map[string]any
		if json.Unmarshal(sc.Bytes(), &m) == nil {
			if v, ok := m[field].(string); ok {
				return v
			}
		}
	}
	return ""
}

// plainForwarder is a reverse proxy on this host as `proxy_pass
// http://127.0.0.1:PORT` configures nginx: it connects from loopback, sends
// the upstream's own address as Host and adds no forwarding header (the
// Rewrite hook of httputil.ReverseProxy adds none unless asked).
func plainForwarder(t *testing.T, upstream string) *httptest.Server {
	t.Helper()
	target, err := url.Parse(upstream)
	if err != nil {
		t.Fatal(err)
	}
	proxy := &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
		pr.SetURL(target)
		for _, h := range []string{"X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Proto", "Forwarded", "X-Real-Ip"} {
			pr.Out.Header.Del(h)
		}
	}}
	srv := httptest.NewServer(proxy)
	t.Cleanup(srv.Close)
	return srv
}

var signInCSRF = regexp.MustCompile(`name="csrf_token" value="([0-9a-f]{64})"`)

// TestProxyGivesStrangersNothing runs the real binary without
// MERGEGUARD_API_TOKEN behind a plain forwarder on loopback: anonymous
// requests to the API, the UI, the operator page and /setup get 401
// (health and readiness stay open); the sign-in link serve logged signs a
// browser in through the proxy; a copy of its cookie is dead after
// sign-out; 300 wrong tokens are throttled.
func TestProxyGivesStrangersNothing(t *testing.T) {
	t.Parallel()
	gh := githubtest.New(t)
	r := startReplica(t, buildBinary(t), "serve", storetest.URL(t), serveOptions{noToken: true, env: map[string]string{
		"MERGEGUARD_SECRET_KEY": base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{5}, 32)),
		"GITHUB_WEB_URL":        gh.WebURL(), "GITHUB_V3_API_URL": gh.URL(), "GITHUB_V4_API_URL": gh.GraphQLURL(),
		"MERGEGUARD_WORKERS": "0",
	}})
	r.waitReady(t)
	proxy := plainForwarder(t, r.url)

	stranger := setupBrowser(t)
	for _, tt := range []struct {
		method, path string
		want         int
	}{
		{http.MethodGet, "/api/review/00000000-0000-0000-0000-000000000000", http.StatusUnauthorized},
		{http.MethodGet, "/api/repos/acme/widgets/learnings", http.StatusUnauthorized},
		{http.MethodGet, "/", http.StatusUnauthorized},
		{http.MethodGet, "/new", http.StatusUnauthorized},
		{http.MethodGet, "/operator", http.StatusUnauthorized},
		{http.MethodGet, "/setup", http.StatusUnauthorized},
		{http.MethodPost, "/setup", http.StatusUnauthorized},
		{http.MethodGet, "/healthz", http.StatusOK},
		{http.MethodGet, "/readyz", http.StatusOK},
	} {
		var form url.Values
		if tt.method == http.MethodPost {
			form = url.Values{"owner": {"user"}, "name": {"Mine"}, "public_url": {"https://evil.example"}, "web_url": {"https://evil.example"}}
		}
		if resp, page := send(t, stranger, tt.method, proxy.URL+tt.path, form); resp.StatusCode != tt.want {
			t.Errorf("anonymous %s %s through the proxy = %d, want %d:\n%s", tt.method, tt.path, resp.StatusCode, tt.want, page)
		}
	}
	if code := r.logField(t, "setup_code"); code == "" {
		t.Errorf("serve logged no setup code")
	}

	link := r.logField(t, "signin_url")
	u, err := url.Parse(link)
	if err != nil || u.Query().Get("token") == "" {
		t.Fatalf("serve logged no sign-in link (%q)", link)
	}
	// The operator opens the link through the proxy: the token leaves the
	// address at once, a confirming post signs in.
	browser := setupBrowser(t)
	resp, _ := send(t, browser, http.MethodGet, proxy.URL+u.RequestURI(), nil)
	if resp.StatusCode != http.StatusSeeOther || strings.Contains(resp.Header.Get("Location"), "token") {
		t.Fatalf("GET the sign-in link = %d to %q, want 303 without the token", resp.StatusCode, resp.Header.Get("Location"))
	}
	_, page := send(t, browser, http.MethodGet, proxy.URL+resp.Header.Get("Location"), nil)
	csrf := signInCSRF.FindStringSubmatch(page)
	if csrf == nil || !strings.Contains(page, `id="signin-link-form"`) {
		t.Fatalf("the sign-in page after the link has no confirming form:\n%s", page)
	}
	resp, _ = send(t, browser, http.MethodPost, proxy.URL+"/signin", url.Values{"csrf_token": {csrf[1]}, "link": {"1"}, "next": {"/setup"}})
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/setup" {
		t.Fatalf("confirming the link = %d to %q, want 303 to /setup", resp.StatusCode, resp.Header.Get("Location"))
	}
	var session *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == "mergeguard_session" {
			session = c
		}
	}
	if resp, page := send(t, browser, http.MethodGet, proxy.URL+"/setup", nil); resp.StatusCode != http.StatusOK || !strings.Contains(page, `name="setup_code"`) {
		t.Errorf("signed in, GET /setup = %d, want the form asking for the setup code:\n%s", resp.StatusCode, page)
	}

	// Sign-out revokes: the copied cookie opens nothing afterwards.
	_, page = send(t, browser, http.MethodGet, proxy.URL+"/", nil)
	if csrf = signInCSRF.FindStringSubmatch(page); csrf == nil || session == nil {
		t.Fatalf("signed in, the home page has no sign-out form (session %v)", session)
	}
	send(t, browser, http.MethodPost, proxy.URL+"/signout", url.Values{"csrf_token": {csrf[1]}})
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, proxy.URL+"/", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.AddCookie(session)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.Body.Close() != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("the copied session cookie after sign-out: %v, %v; want 401", resp.StatusCode, err)
	}

	// 300 wrong tokens from one client: 401 up to the limit, then 429.
	guesser := setupBrowser(t)
	_, page = send(t, guesser, http.MethodGet, proxy.URL+"/signin", nil)
	csrf = signInCSRF.FindStringSubmatch(page)
	codes := map[int]int{}
	for range 300 {
		resp, _ := send(t, guesser, http.MethodPost, proxy.URL+"/signin", url.Values{"csrf_token": {csrf[1]}, "token": {"guess"}})
		codes[resp.StatusCode]++
		if resp.StatusCode == http.StatusTooManyRequests && resp.Header.Get("Retry-After") == "" {
			t.Fatal("429 without Retry-After")
		}
	}
	t.Logf("300 wrong tokens at POST /signin: %d × 401, %d × 429", codes[401], codes[429])
	if codes[http.StatusUnauthorized] != 10 || codes[http.StatusTooManyRequests] != 290 {
		t.Errorf("300 wrong tokens: %v, want 10 × 401 and 290 × 429", codes)
	}
}
