package oauth

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mergeguard/mergeguard/github"
	"github.com/mergeguard/mergeguard/github/githubtest"
)

// authorize follows the fake's authorize page as a browser would, without
// following the redirect, and returns the redirect's query.
func authorize(t *testing.T, o *Flow, clientID, redirectURI, state string) url.Values {
	t.Helper()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(o.AuthorizeURL(clientID, redirectURI, state))
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		t.Fatalf("authorize answered %s, want a redirect", resp.Status)
	}
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	return loc.Query()
}

func TestOAuthFlow(t *testing.T) {
	ctx := context.Background()
	gh := githubtest.New(t)
	gh.RequireAuth()
	const callback = "https://mergeguard.example.com/signin/github/callback"
	gh.SetOAuthApp("Iv1.client", "s3cret", "https://mergeguard.example.com/signin/github")
	mona := githubtest.User{Login: "mona", ID: 77}
	gh.SignInBrowser(mona)
	gh.SetPermission("acme", "widgets", "mona", "read")
	gh.SetPermission("acme", "secret", "someone", "write")
	gh.SetPublic("other", "open", true)
	gh.SetPermission("owned", "repo", "someone", "write")
	gh.SetOrgMember("owned", "mona", "admin")
	gh.SetOrgMember("acme", "mona", "member")
	o := New(gh.WebURL(), gh.URL(), github.ClientOptions{})

	q := authorize(t, o, "Iv1.client", callback, "st4te")
	if q.Get("state") != "st4te" || q.Get("code") == "" {
		t.Fatalf("authorize redirected with %v, want the state and a code", q)
	}
	if _, err := o.Exchange(ctx, "Iv1.client", "wrong", q.Get("code"), callback); !isOAuthError(err, "incorrect_client_credentials") {
		t.Errorf("wrong secret: %v, want incorrect_client_credentials", err)
	}
	if _, err := o.Exchange(ctx, "Iv1.client", "s3cret", q.Get("code"), callback+"/other"); !isOAuthError(err, "redirect_uri_mismatch") {
		t.Errorf("other redirect_uri: %v, want redirect_uri_mismatch", err)
	}
	token, err := o.Exchange(ctx, "Iv1.client", "s3cret", q.Get("code"), callback)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := o.Exchange(ctx, "Iv1.client", "s3cret", q.Get("code"), callback); !isOAuthError(err, "bad_verification_code") {
		t.Errorf("a code used twice: %v, want bad_verification_code", err)
	}
	login, id, err := o.User(ctx, token)
	if err != nil || login != "mona" || id != 77 {
		t.Errorf("User = %q, %d, %v; want mona, 77", login, id, err)
	}

	got := map[string]bool{}
	for _, r := range [][2]string{{"acme", "widgets"}, {"acme", "secret"}, {"other", "open"}, {"owned", "repo"}, {"acme", "missing"}} {
		ok, err := o.CanRead(ctx, token, r[0], r[1])
		if err != nil {
			t.Fatalf("CanRead %v: %v", r, err)
		}
		got[r[0]+"/"+r[1]] = ok
	}
	want := map[string]bool{"acme/widgets": true, "acme/secret": false, "other/open": true, "owned/repo": true, "acme/missing": false}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("CanRead (-want +got):\n%s", diff)
	}
	// By id: the repository of that id whatever its name, 404 (no) for a
	// private one the person cannot read and for an id that does not exist.
	gotID := map[string]bool{}
	for _, r := range [][2]string{{"acme", "widgets"}, {"acme", "secret"}, {"other", "open"}, {"owned", "repo"}} {
		ok, err := o.CanReadID(ctx, token, gh.RepoID(r[0], r[1]))
		if err != nil {
			t.Fatalf("CanReadID %v: %v", r, err)
		}
		gotID[r[0]+"/"+r[1]] = ok
	}
	if ok, err := o.CanReadID(ctx, token, 987654321); err != nil || ok {
		t.Errorf("CanReadID of an unknown id = %v, %v; want false", ok, err)
	}
	delete(want, "acme/missing")
	if diff := cmp.Diff(want, gotID); diff != "" {
		t.Errorf("CanReadID (-want +got):\n%s", diff)
	}
	// Write access by id: an organisation owner's, not a reader's, nor
	// anyone's on a public repository they have no role on, nor on one
	// they cannot read.
	gotWrite := map[string]bool{}
	for _, r := range [][2]string{{"acme", "widgets"}, {"acme", "secret"}, {"other", "open"}, {"owned", "repo"}} {
		ok, err := o.CanWriteID(ctx, token, gh.RepoID(r[0], r[1]))
		if err != nil {
			t.Fatalf("CanWriteID %v: %v", r, err)
		}
		gotWrite[r[0]+"/"+r[1]] = ok
	}
	wantWrite := map[string]bool{"acme/widgets": false, "acme/secret": false, "other/open": false, "owned/repo": true}
	if diff := cmp.Diff(wantWrite, gotWrite); diff != "" {
		t.Errorf("CanWriteID (-want +got):\n%s", diff)
	}
	for org, want := range map[string]bool{"owned": true, "acme": false, "nobody": false} {
		if got, err := o.OrgAdmin(ctx, token, org); err != nil || got != want {
			t.Errorf("OrgAdmin(%s) = %v, %v; want %v", org, got, err, want)
		}
	}
}

func TestOAuthAuthorizeRefusesForeignRedirect(t *testing.T) {
	gh := githubtest.New(t)
	gh.SetOAuthApp("Iv1.client", "s3cret", "https://mergeguard.example.com/signin/github")
	gh.SignInBrowser(githubtest.User{Login: "mona", ID: 77})
	o := New(gh.WebURL(), gh.URL(), github.ClientOptions{})
	q := authorize(t, o, "Iv1.client", "https://evil.example/signin/github/callback", "st4te")
	if q.Get("error") != "redirect_uri_mismatch" || q.Get("code") != "" {
		t.Errorf("authorize redirected with %v, want error=redirect_uri_mismatch and no code", q)
	}
}

func isOAuthError(err error, code string) bool {
	var oe *Error
	return errors.As(err, &oe) && oe.Code == code
}
