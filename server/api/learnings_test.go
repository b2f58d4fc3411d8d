package api

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/server/access"
)

// call sends a learnings request (a JSON body when body is not "") and
// returns the status and the decoded answer (nil for none).
func (f *fixture) call(t *testing.T, method, path, body string, header map[string]string, cookies ...*http.Cookie) (int, any) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, f.srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
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
	b, err := io.ReadAll(res.Body)
	if err := errors.Join(err, res.Body.Close()); err != nil {
		t.Fatal(err)
	}
	var out any
	if len(b) > 0 {
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatalf("%s %s: %d %q is not JSON: %v", method, path, res.StatusCode, b, err)
		}
	}
	return res.StatusCode, maskTimes(out)
}

// TestLearningsRoutes walks a learning through the routes: created,
// listed, read, changed, refused when invalid, deleted.
func TestLearningsRoutes(t *testing.T) {
	t.Parallel() // each test has its own database and servers
	f := newFixture(t, "")
	seeded, err := f.store.AddLearning(t.Context(), review.Learning{Repository: "o/r", Instruction: "proposed in a thread",
		Status: review.LearningProposed, PRNumber: 7, ThreadCommentID: 501, Fingerprint: "fp-a", Author: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	id := func(v any) string {
		m, _ := v.(map[string]any)
		return jsonText(t, m["id"])
	}
	seededID := jsonText(t, seeded.ID)
	steps := []struct {
		name, method, path, body string
		code                     int
		want                     string // JSON; "" for no body
	}{
		{"create", "POST", "/api/repos/o/r/learnings", `{"instruction": "  panics are fine in cmd/\r\n", "path": "cmd/**"}`, 201,
			`{"id": "NEW", "repository": "o/r", "instruction": "panics are fine in cmd/", "path": "cmd/**", "status": "active",
			  "author": "api", "updated_by": "api", "created_at": "<time>", "updated_at": "<time>"}`},
		{"list", "GET", "/api/repos/O/R/learnings", "", 200,
			`{"repository": "O/R", "learnings": [
			  {"id": "SEEDED", "repository": "o/r", "instruction": "proposed in a thread", "status": "proposed", "pr_number": 7,
			   "thread_comment_id": 501, "fingerprint": "fp-a", "author": "alice", "updated_by": "alice", "created_at": "<time>", "updated_at": "<time>"},
			  {"id": "NEW", "repository": "o/r", "instruction": "panics are fine in cmd/", "path": "cmd/**", "status": "active",
			   "author": "api", "updated_by": "api", "created_at": "<time>", "updated_at": "<time>"}]}`},
		{"list the proposed", "GET", "/api/repos/o/r/learnings?status=proposed", "", 200,
			`{"repository": "o/r", "learnings": [
			  {"id": "SEEDED", "repository": "o/r", "instruction": "proposed in a thread", "status": "proposed", "pr_number": 7,
			   "thread_comment_id": 501, "fingerprint": "fp-a", "author": "alice", "updated_by": "alice", "created_at": "<time>", "updated_at": "<time>"}]}`},
		{"list another repository", "GET", "/api/repos/o/other/learnings", "", 200, `{"repository": "o/other", "learnings": []}`},
		{"activate the proposed", "PATCH", "/api/repos/o/r/learnings/SEEDED", `{"status": "active"}`, 200,
			`{"id": "SEEDED", "repository": "o/r", "instruction": "proposed in a thread", "status": "active", "pr_number": 7,
			  "thread_comment_id": 501, "fingerprint": "fp-a", "author": "alice", "updated_by": "api", "created_at": "<time>", "updated_at": "<time>"}`},
		{"edit and clear the path", "PATCH", "/api/repos/o/r/learnings/NEW", `{"instruction": "panics are fine", "path": ""}`, 200,
			`{"id": "NEW", "repository": "o/r", "instruction": "panics are fine", "status": "active",
			  "author": "api", "updated_by": "api", "created_at": "<time>", "updated_at": "<time>"}`},
		{"get", "GET", "/api/repos/o/r/learnings/NEW", "", 200,
			`{"id": "NEW", "repository": "o/r", "instruction": "panics are fine", "status": "active",
			  "author": "api", "updated_by": "api", "created_at": "<time>", "updated_at": "<time>"}`},
		{"an invalid glob", "PATCH", "/api/repos/o/r/learnings/NEW", `{"path": "../etc/*"}`, 400,
			`{"error": "invalid learning: path \"../etc/*\" has a \"..\" segment"}`},
		{"an unknown status", "PATCH", "/api/repos/o/r/learnings/NEW", `{"status": "maybe"}`, 400,
			`{"error": "invalid learning: status \"maybe\" is not proposed, active or inactive"}`},
		{"nothing to change", "PATCH", "/api/repos/o/r/learnings/NEW", `{}`, 400,
			`{"error": "give instruction, path or status to change"}`},
		{"deactivate", "PATCH", "/api/repos/o/r/learnings/NEW", `{"status": "inactive"}`, 200,
			`{"id": "NEW", "repository": "o/r", "instruction": "panics are fine", "status": "inactive",
			  "author": "api", "updated_by": "api", "created_at": "<time>", "updated_at": "<time>"}`},
		{"delete", "DELETE", "/api/repos/o/r/learnings/NEW", "", 204, ""},
		{"get the deleted", "GET", "/api/repos/o/r/learnings/NEW", "", 404, `{"error": "o/r has no learning NEW"}`},
		{"delete the deleted", "DELETE", "/api/repos/o/r/learnings/NEW", "", 404, `{"error": "o/r has no learning NEW"}`},
		{"patch the deleted", "PATCH", "/api/repos/o/r/learnings/NEW", `{"status": "active"}`, 404, `{"error": "o/r has no learning NEW"}`},
		{"another repository's", "GET", "/api/repos/o/other/learnings/SEEDED", "", 404, `{"error": "o/other has no learning SEEDED"}`},
	}
	newID := ""
	for _, st := range steps {
		path := strings.ReplaceAll(strings.ReplaceAll(st.path, "SEEDED", seededID), "NEW", newID)
		code, got := f.call(t, st.method, path, st.body, nil)
		if st.name == "create" {
			newID = id(got)
		}
		if code != st.code {
			t.Errorf("%s: %s %s = %d %v, want %d", st.name, st.method, path, code, got, st.code)
		}
		var want any
		if st.want != "" {
			w := strings.ReplaceAll(strings.ReplaceAll(st.want, `"SEEDED"`, seededID), `"NEW"`, newID) // the ids
			w = strings.ReplaceAll(strings.ReplaceAll(w, "SEEDED", seededID), "NEW", newID)            // in messages
			if err := json.Unmarshal([]byte(w), &want); err != nil {
				t.Fatalf("%s: want: %v", st.name, err)
			}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: answer (-want +got):\n%s", st.name, diff)
		}
	}
}

func jsonText(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestLearningsRefusals: bad paths, queries and bodies are 400 (415 when
// not JSON, 413 when too large), and nothing is stored.
func TestLearningsRefusals(t *testing.T) {
	t.Parallel() // each test has its own database and servers
	f := newFixture(t, "")
	tests := []struct {
		name, method, path, body string
		header                   map[string]string
		code                     int
		err                      string
	}{
		{"a bad owner", "GET", "/api/repos/o%20x/r/learnings", "", nil, 400, `"o x" is not a GitHub owner`},
		{"a bad name", "POST", "/api/repos/o/%3Cb%3E/learnings", `{"instruction": "x"}`, nil, 400, `"<b>" is not a GitHub repository name`},
		{"a bad status filter", "GET", "/api/repos/o/r/learnings?status=all", "", nil, 400, `status "all" is not proposed, active or inactive`},
		{"a bad id", "GET", "/api/repos/o/r/learnings/x1", "", nil, 400, `"x1" is not a learning id`},
		{"a zero id", "DELETE", "/api/repos/o/r/learnings/0", "", nil, 400, `"0" is not a learning id`},
		{"a signed id", "PATCH", "/api/repos/o/r/learnings/+1", `{"status": "active"}`, nil, 400, `"+1" is not a learning id`},
		{"no instruction", "POST", "/api/repos/o/r/learnings", `{"path": "cmd/**"}`, nil, 400, "invalid learning: instruction is empty"},
		{"a long instruction", "POST", "/api/repos/o/r/learnings", `{"instruction": "` + strings.Repeat("x", 501) + `"}`, nil, 400,
			"invalid learning: instruction has 501 characters, more than 500"},
		{"a control character", "POST", "/api/repos/o/r/learnings", `{"instruction": "a\u001bb"}`, nil, 400,
			"invalid learning: instruction holds the control character U+001B"},
		{"an absolute path", "POST", "/api/repos/o/r/learnings", `{"instruction": "x", "path": "/etc/*"}`, nil, 400,
			`invalid learning: path "/etc/*" starts with "/": globs are relative to the repository`},
		{"a bad glob", "POST", "/api/repos/o/r/learnings", `{"instruction": "x", "path": "a/[b"}`, nil, 400,
			`invalid learning: path "a/[b" is not a valid glob`},
		{"created inactive", "POST", "/api/repos/o/r/learnings", `{"instruction": "x", "status": "inactive"}`, nil, 400,
			`status "inactive": a new learning is active or proposed`},
		{"an unknown field", "POST", "/api/repos/o/r/learnings", `{"instruction": "x", "author": "mallory"}`, nil, 400,
			`invalid JSON body: json: unknown field "author"`},
		{"not JSON", "POST", "/api/repos/o/r/learnings", `instruction=x`, map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, 415,
			"the body must be JSON, sent with Content-Type: application/json"},
		{"too large", "POST", "/api/repos/o/r/learnings", `{"instruction": "` + strings.Repeat("x", 20<<10) + `"}`, nil, 413,
			"body larger than 16384 bytes"},
	}
	for _, tt := range tests {
		code, got := f.call(t, tt.method, tt.path, tt.body, tt.header)
		if code != tt.code {
			t.Errorf("%s: %d, want %d", tt.name, code, tt.code)
		}
		if diff := cmp.Diff(map[string]any{"error": tt.err}, got); diff != "" {
			t.Errorf("%s: answer (-want +got):\n%s", tt.name, diff)
		}
	}
	if ls, err := f.store.Learnings(t.Context(), "o/r", ""); err != nil || len(ls) != 0 {
		t.Errorf("learnings after refusals: %v, %v; want none", ls, err)
	}
}

// TestLearningsGuard: the routes need the token, and a browser's
// state-changing request needs the CSRF token: the web UI's page sends it,
// another site cannot.
func TestLearningsGuard(t *testing.T) {
	t.Parallel() // each test has its own database and servers
	f := newFixture(t, "s3cret")
	l, err := f.store.AddLearning(t.Context(), review.Learning{Repository: "o/r", Instruction: "x", Status: review.LearningActive, Author: "a"})
	if err != nil {
		t.Fatal(err)
	}
	path := "/api/repos/o/r/learnings/" + jsonText(t, l.ID)
	auth := "Bearer s3cret"
	host := strings.TrimPrefix(f.srv.URL, "http://")
	csrf := strings.Repeat("ab", 32)
	csrfCookie := &http.Cookie{Name: access.CSRFCookie, Value: csrf}
	browser := map[string]string{"Authorization": auth, "Origin": "http://" + host, "Sec-Fetch-Site": "same-origin"}
	with := func(h map[string]string, k, v string) map[string]string {
		out := map[string]string{k: v}
		for a, b := range h {
			out[a] = b
		}
		return out
	}
	tests := []struct {
		name, method string
		header       map[string]string
		cookies      []*http.Cookie
		code         int
	}{
		{"list without the token", "GET", nil, nil, 401},
		{"patch without the token", "PATCH", nil, nil, 401},
		{"patch from another site", "PATCH", with(map[string]string{"Authorization": auth, "Origin": "https://evil.example"}, "Sec-Fetch-Site", "cross-site"), nil, 403},
		{"browser patch without the CSRF token", "PATCH", browser, []*http.Cookie{csrfCookie}, 403},
		{"browser delete without the CSRF token", "DELETE", browser, []*http.Cookie{csrfCookie}, 403},
		{"browser patch with a wrong CSRF token", "PATCH", with(browser, access.CSRFHeader, strings.Repeat("cd", 32)), []*http.Cookie{csrfCookie}, 403},
		{"browser patch with the CSRF token", "PATCH", with(browser, access.CSRFHeader, csrf), []*http.Cookie{csrfCookie}, 200},
		{"a script with the token", "GET", map[string]string{"Authorization": auth}, nil, 200},
	}
	changed := false
	for _, tt := range tests {
		p, body := path, ""
		if tt.method == "PATCH" {
			body = `{"status": "inactive"}`
		}
		if tt.name == "list without the token" {
			p = "/api/repos/o/r/learnings"
		}
		code, _ := f.call(t, tt.method, p, body, tt.header, tt.cookies...)
		if code != tt.code {
			t.Errorf("%s: %d, want %d", tt.name, code, tt.code)
		}
		got, err := f.store.Learning(t.Context(), "o/r", l.ID)
		if err != nil {
			t.Fatalf("%s: the learning is gone: %v", tt.name, err)
		}
		changed = changed || (tt.code == 200 && tt.method == "PATCH")
		if (got.Status == review.LearningInactive) != changed {
			t.Errorf("%s: status %s after %d, want it changed only by an allowed patch", tt.name, got.Status, code)
		}
	}
}
