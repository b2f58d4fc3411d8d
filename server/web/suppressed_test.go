package web

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/memory"
	"github.com/mergeguard/mergeguard/server/access"
	"github.com/mergeguard/mergeguard/server/store"
)

// suppressedNit records a suppressed finding on repo#number of run runID:
// a title a model wrote (hostile HTML), one dismissal posted inline and
// one posted in the body.
func suppressedNit(t *testing.T, st *store.Store, repo string, number int, runID string) {
	t.Helper()
	f := review.Finding{FilePath: "a.go", LineStart: 4, LineEnd: 4, Severity: review.SeverityStyle, Category: review.CategoryQuality,
		Title: `Error string <b>capitalized</b>`, Fingerprint: "fp-nit"}
	matches := []memory.Match{
		{PRNumber: 2, Fingerprint: "d2", CommentID: 9001, By: "ann", How: review.DismissedCommand, Similarity: 0.734},
		{PRNumber: 5, Fingerprint: "d5", By: "bob", How: review.DismissedAPI, Similarity: 0.5},
	}
	if err := st.RecordSuppressed(t.Context(), repo, number, runID, "abcdef123456", []memory.Suppressed{{Finding: f, Matches: matches}}); err != nil {
		t.Fatal(err)
	}
}

// TestPullPageSuppressed: the pull request page lists what its reviews did
// not post, escaped, with links to the dismissals each matched (the
// comment on GitHub, or MergeGuard's page of a pull request), and a form
// with which the token holder revives one: refused without the CSRF
// token, recorded with it, shown revived after.
func TestPullPageSuppressed(t *testing.T) {
	t.Parallel() // each test has its own database and servers
	srv, st := newServer(t, "s3cret")
	run := finishPRRun(t, st, 7, "abcdef123456", store.Result{Status: store.StatusSucceeded})
	suppressedNit(t, st, "o/r", 7, run)
	b := newBrowser(t, srv)
	b.do("POST", "/signin", url.Values{"token": {"s3cret"}, access.CSRFField: {b.csrf()}}, nil)

	res, page := b.do("GET", "/repos/o/r/pulls/7", nil, nil)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET the pull page: %d", res.StatusCode)
	}
	for _, s := range []string{
		`<h2 id="suppressed">`,
		`<td class="title">Error string &lt;b&gt;capitalized&lt;/b&gt;</td>`,
		`<summary>2 dismissals</summary>`,
		`<a href="https://github.com/o/r/pull/2#discussion_r9001">#2</a> by ann <span class="muted">(command)</span> · 73% similar`,
		`<a href="/repos/o/r/pulls/5">#5</a> by bob <span class="muted">(api)</span> · 50% similar`,
		`<form method="post" action="/repos/o/r/pulls/7/revive">`,
		`<input type="hidden" name="fingerprint" value="fp-nit">`,
	} {
		if !strings.Contains(page, s) {
			t.Errorf("the page lacks %s", s)
		}
	}
	m := csrfField.FindStringSubmatch(page)
	if m == nil {
		t.Fatal("the page has no CSRF field")
	}
	for _, tc := range []struct {
		name string
		form url.Values
		want int
	}{
		{"without the CSRF token", url.Values{"fingerprint": {"fp-nit"}}, http.StatusForbidden},
		{"no fingerprint", url.Values{access.CSRFField: {m[1]}}, http.StatusBadRequest},
		{"a fingerprint with spaces", url.Values{access.CSRFField: {m[1]}, "fingerprint": {"fp nit"}}, http.StatusBadRequest},
		{"revived", url.Values{access.CSRFField: {m[1]}, "fingerprint": {"fp-nit"}}, http.StatusSeeOther},
	} {
		if res, body := b.do("POST", "/repos/o/r/pulls/7/revive", tc.form, nil); res.StatusCode != tc.want {
			t.Errorf("%s: %d, want %d:\n%s", tc.name, res.StatusCode, tc.want, body)
		}
	}
	if _, page := b.do("GET", "/repos/o/r/pulls/7", nil, nil); !strings.Contains(page, "revived by token holder") || strings.Contains(page, `class="link revive"`) {
		t.Errorf("after reviving, the page should say who revived it and offer no form")
	}
	if got, err := st.Suppressed(t.Context(), "o/r", 7); err != nil || len(got) != 1 || got[0].RevivedBy != "token holder" {
		t.Errorf("Suppressed = %+v, %v; want it revived by the token holder", got, err)
	}
}

// TestReviveNeedsWriteAccess: a person signed in with GitHub revives a
// suppressed finding only on a repository GitHub says they may push to
// (asked by its id); one who only reads it is refused (403), one who
// cannot read it finds nothing (404), and nothing is revived.
func TestReviveNeedsWriteAccess(t *testing.T) {
	t.Parallel() // each test has its own database and servers
	srv, _, st, runs := gitHubUIStore(t)
	for _, repo := range []string{"acme/widgets", "owned/tools", "acme/secret"} {
		suppressedNit(t, st, repo, 3, runs[repo])
	}
	b := newBrowser(t, srv)
	b.signInWithGitHub("/")
	_, page := b.do("GET", "/repos/acme/widgets/pulls/3", nil, nil)
	m := csrfField.FindStringSubmatch(page)
	if m == nil {
		t.Fatal("the page has no CSRF field")
	}
	form := url.Values{access.CSRFField: {m[1]}, "fingerprint": {"fp-nit"}}
	for repo, want := range map[string]int{"acme/widgets": http.StatusForbidden, "acme/secret": http.StatusNotFound, "owned/tools": http.StatusSeeOther} {
		if res, body := b.do("POST", "/repos/"+repo+"/pulls/3/revive", form, nil); res.StatusCode != want {
			t.Errorf("revive on %s: %d, want %d:\n%s", repo, res.StatusCode, want, body)
		}
		got, err := st.Suppressed(t.Context(), repo, 3)
		if err != nil || len(got) != 1 {
			t.Fatalf("Suppressed(%s) = %+v, %v", repo, got, err)
		}
		if revived := got[0].RevivedAt != nil; revived != (want == http.StatusSeeOther) || (revived && got[0].RevivedBy != "mona") {
			t.Errorf("%s: revived %t by %q", repo, revived, got[0].RevivedBy)
		}
	}
}
