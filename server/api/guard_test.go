package api

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rs/zerolog"

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/server/access"
	"github.com/mergeguard/mergeguard/server/events"
	"github.com/mergeguard/mergeguard/server/store"
	"github.com/mergeguard/mergeguard/server/store/storetest"
)

// post sends body to POST /api/review with exactly the given headers (no
// default Content-Type) and returns the status and the answer's headers.
func (f *fixture) post(t *testing.T, body string, header map[string]string, cookies ...*http.Cookie) (int, http.Header) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, f.srv.URL+"/api/review", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	for _, c := range cookies {
		req.AddCookie(c)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Body.Close(); err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, res.Header
}

func (f *fixture) runCount(t *testing.T) int {
	t.Helper()
	runs, err := f.store.ListRuns(t.Context(), store.RunFilter{})
	if err != nil {
		t.Fatal(err)
	}
	return len(runs)
}

// TestCreateRefusesCrossSiteRequests replays what a page of another site
// can make a browser send to a MergeGuard whose authority it carries (as
// asHolder adds it), and what the web UI itself sends.
func TestCreateRefusesCrossSiteRequests(t *testing.T) {
	t.Parallel() // each test has its own database and servers
	f := newFixture(t, "")
	body := `{"diff_text":` + jsonString(sampleDiff) + `}`
	host := strings.TrimPrefix(f.srv.URL, "http://")
	csrf := strings.Repeat("c0", 32)
	csrfCookie := &http.Cookie{Name: access.CSRFCookie, Value: csrf}
	tests := []struct {
		name    string
		header  map[string]string
		cookies []*http.Cookie
		code    int
	}{
		// An auto-submitted <form enctype="text/plain">: no preflight.
		{"cross-site text/plain form", map[string]string{"Content-Type": "text/plain", "Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"}, nil, http.StatusForbidden},
		{"cross-site form, old browser", map[string]string{"Content-Type": "text/plain", "Origin": "https://evil.example"}, nil, http.StatusForbidden},
		{"cross-site urlencoded form", map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Sec-Fetch-Site": "cross-site"}, nil, http.StatusForbidden},
		{"cross-site JSON with the cookie", map[string]string{"Content-Type": "application/json", "Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site", access.CSRFHeader: csrf}, []*http.Cookie{csrfCookie}, http.StatusForbidden},
		{"same-site sibling", map[string]string{"Content-Type": "application/json", "Origin": "http://127.0.0.1:1", "Sec-Fetch-Site": "same-site"}, nil, http.StatusForbidden},
		// Without browser headers the content type still has to be JSON.
		{"text/plain from a script", map[string]string{"Content-Type": "text/plain"}, nil, http.StatusUnsupportedMediaType},
		{"no content type", nil, nil, http.StatusUnsupportedMediaType},
		// The UI's own request needs its CSRF token.
		{"same-origin without CSRF token", map[string]string{"Content-Type": "application/json", "Origin": "http://" + host, "Sec-Fetch-Site": "same-origin"}, nil, http.StatusForbidden},
		{"same-origin with a wrong CSRF token", map[string]string{"Content-Type": "application/json", "Origin": "http://" + host, "Sec-Fetch-Site": "same-origin", access.CSRFHeader: strings.Repeat("d1", 32)}, []*http.Cookie{csrfCookie}, http.StatusForbidden},
		{"same-origin with the CSRF token", map[string]string{"Content-Type": "application/json; charset=utf-8", "Origin": "http://" + host, "Sec-Fetch-Site": "same-origin", access.CSRFHeader: csrf}, []*http.Cookie{csrfCookie}, http.StatusAccepted},
		{"script with JSON", map[string]string{"Content-Type": "application/json"}, nil, http.StatusAccepted},
	}
	want := 0
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _ := f.post(t, body, tt.header, tt.cookies...)
			if code != tt.code {
				t.Errorf("status %d, want %d", code, tt.code)
			}
		})
		if tt.code == http.StatusAccepted {
			want++
		}
	}
	if got := f.runCount(t); got != want {
		t.Errorf("%d runs stored, want %d (only the accepted requests)", got, want)
	}
}

// TestCreateRejectsMalformedBodies covers bodies that used to get further
// than they should: a NUL in the diff (500 from Postgres before), data
// after the JSON object, and an oversized body sent without a length.
func TestCreateRejectsMalformedBodies(t *testing.T) {
	t.Parallel() // each test has its own database and servers
	f := newFixture(t, "")
	valid := `{"diff_text":` + jsonString(sampleDiff) + `}`
	nul := `{"diff_text":` + jsonString(strings.Replace(sampleDiff, "// added", "// a\x00b", 1)) + `}`
	tests := []struct {
		name, body string
		code       int
		errHas     string
	}{
		{"NUL in diff_text", nul, 400, "NUL"},
		{"second JSON object", valid + `{"diff_text":"x"}`, 400, "after the JSON object"},
		{"trailing garbage", valid + `garbage`, 400, "invalid JSON"},
		{"trailing whitespace is fine", valid + "\n\t ", 202, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out := f.do(t, http.MethodPost, "/api/review", tt.body, nil)
			msg, _ := out["error"].(string)
			if code != tt.code || !strings.Contains(msg, tt.errHas) {
				t.Errorf("got %d %q, want %d containing %q", code, msg, tt.code, tt.errHas)
			}
		})
	}
	if got := f.runCount(t); got != 1 {
		t.Errorf("%d runs stored, want 1", got)
	}
}

// TestCreateRefusesGitHubURLOnOtherHosts: the App would review acme/priv#3
// on its own GitHub whatever host the URL names. The API takes
// github.web_url as loaded (config.Load; Validate refuses an empty one).
func TestCreateRefusesGitHubURLOnOtherHosts(t *testing.T) {
	t.Parallel() // each test has its own database and servers
	st := storetest.New(t)
	for _, tt := range []struct {
		web, url string
		code     int
	}{
		{config.Default().GitHub.WebURL, "https://anything.invalid/acme/priv/pull/3", http.StatusBadRequest},
		{config.Default().GitHub.WebURL, "https://github.com/acme/priv/pull/3", http.StatusAccepted},
		{"https://ghe.example.com/", "https://github.com/acme/priv/pull/3", http.StatusBadRequest},
		{"https://ghe.example.com/", "https://ghe.example.com/acme/priv/pull/3", http.StatusAccepted},
	} {
		a := New(Deps{Config: testAPI(), Store: st, PullRequests: fakePRs{}, Hub: events.NewHub(), Logger: zerolog.Nop(), GitHubWebURL: tt.web, Access: holder})
		mux := http.NewServeMux()
		a.Register(mux)
		srv := httptest.NewServer(asHolder(mux))
		f := &fixture{srv: srv, store: st}
		code, out := f.do(t, http.MethodPost, "/api/review", `{"github_url":`+jsonString(tt.url)+`}`, nil)
		srv.Close()
		if code != tt.code {
			t.Errorf("web %q, github_url %q: %d %v, want %d", tt.web, tt.url, code, out, tt.code)
		}
	}
}

// TestGetRedactsInternalAddresses stores a run failed with errors naming
// internal services: the API shows them without the addresses.
func TestGetRedactsInternalAddresses(t *testing.T) {
	t.Parallel() // each test has its own database and servers
	st := storetest.New(t)
	f := quietFixture(t, st, st)
	tests := []struct{ stored, want string }{
		{`llm: Post "http://10.1.2.3:8000/v1/chat/completions": dial tcp 10.1.2.3:8000: connect: connection refused`,
			`llm: Post "[url]": dial tcp [address]: connect: connection refused`},
		{`github: GET https://ghe.corp.example/api/v3/repos/o/r/pulls/3: 502 Bad Gateway`,
			`github: GET [url]: 502 Bad Gateway`},
		{`store: failed to connect to host=db.internal user=mg database=mg: dial tcp [fd00::5]:5432: i/o timeout`,
			`store: failed to connect to host=[address] user=mg database=mg: dial tcp [address]: i/o timeout`},
		{`dial tcp: lookup llm.internal on 127.0.0.53:53: no such host`,
			`dial tcp: lookup [address] on [address]: no such host`},
		{`budget: review used 120000 tokens, over the limit of 100000`,
			`budget: review used 120000 tokens, over the limit of 100000`},
	}
	for _, tt := range tests {
		run := runningRun(t, st)
		if err := st.FinishRun(t.Context(), run.ID, "w1", store.Result{Status: store.StatusFailed, Error: tt.stored}); err != nil {
			t.Fatal(err)
		}
		code, out := f.do(t, http.MethodGet, "/api/review/"+run.ID, "", nil)
		if code != http.StatusOK {
			t.Fatalf("GET = %d %v", code, out)
		}
		if diff := cmp.Diff(tt.want, out["error"]); diff != "" {
			t.Errorf("error of %q (-want +got):\n%s", tt.stored, diff)
		}
		got, err := st.GetRun(context.WithoutCancel(t.Context()), run.ID)
		if err != nil || got.Error != tt.stored {
			t.Errorf("stored error %q (%v), want it kept whole", got.Error, err)
		}
	}
}
