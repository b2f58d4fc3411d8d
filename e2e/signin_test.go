package e2e

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"

	"github.com/mergeguard/mergeguard/github/githubtest"
	"github.com/mergeguard/mergeguard/review/llm/llmtest"
	"github.com/mergeguard/mergeguard/server/store"
	"github.com/mergeguard/mergeguard/server/store/storetest"
)

// behindProxy makes every request of the browser's tab carry
// X-Forwarded-For, as through an ingress: none of them is local.
func (b *browser) behindProxy(t *testing.T) {
	t.Helper()
	b.do(t, "send X-Forwarded-For", chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		if _, err := cdp.Call(ctx, tg, network.Enable, network.EnableParams{}); err != nil {
			return err
		}
		_, err := cdp.Call(ctx, tg, network.SetExtraHTTPHeaders,
			network.SetExtraHTTPHeadersParams{Headers: network.Headers{"X-Forwarded-For": "203.0.113.5"}})
		return err
	}))
}

// waitFor evaluates js until it is true, through navigations (which end
// an evaluation's context).
func (b *browser) waitFor(t *testing.T, what, js string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](js))
		if err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			body, _ := chromedp.Run(b.ctx, chromedp.Evaluate[string](`location.href + "\n" + (document.body ? document.body.innerText : "")`))
			t.Fatalf("%s: not within %s (%v)\npage:\n%s", what, timeout, err, body)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestSignInWithTokenInBrowser: behind an ingress, a browser signs in with
// the API token on the sign-in page, starts a review, follows it live and
// signs out.
func TestSignInWithTokenInBrowser(t *testing.T) {
	t.Parallel()
	chrome := chromePath(t)
	diffText, err := os.ReadFile(filepath.Join("testdata", "review.diff"))
	if err != nil {
		t.Fatal(err)
	}
	llm := llmtest.New(t, model)
	srv := startReplica(t, buildBinary(t), "serve", storetest.URL(t), serveOptions{env: map[string]string{
		"OPENAI_BASE_URL": llm.URL(), "OPENAI_API_KEY": "test", "MERGEGUARD_MODEL": "gpt-4o-mini",
		"MERGEGUARD_API_TOKEN": "e2e-token-0123456789",
	}})
	srv.waitReady(t)
	b := newBrowser(t, chrome)
	b.behindProxy(t)

	b.do(t, "open the list", chromedp.Navigate(srv.url+"/new"), chromedp.WaitVisible(chromedp.ID("signin")))
	b.do(t, "go to the sign-in page", chromedp.Click(chromedp.ID("signin")), chromedp.WaitVisible(chromedp.ID("token")))
	b.do(t, "a wrong token", chromedp.SetValue(chromedp.ID("token"), "wrong"), chromedp.Click(chromedp.ID("signin-submit")),
		chromedp.WaitVisible(chromedp.ID("signin-error")))
	b.do(t, "the token", chromedp.SetValue(chromedp.ID("token"), "e2e-token-0123456789"), chromedp.Click(chromedp.ID("signin-submit")),
		chromedp.WaitVisible(chromedp.ID("diff_text")))
	if loc, _ := chromedp.Run(b.ctx, chromedp.Location()); loc != srv.url+"/new" {
		t.Errorf("after signing in the browser is at %s, want %s/new (where it started)", loc, srv.url)
	}
	if got := eval[string](t, b, `document.cookie`); strings.Contains(got, "mergeguard_session") || strings.Contains(got, "e2e-token") {
		t.Errorf("scripts can read the session or the token: %q", got)
	}

	b.do(t, "submit a diff",
		chromedp.SetValue(chromedp.ID("diff_text"), string(diffText)),
		chromedp.Click(chromedp.ID("submit-review")),
		chromedp.WaitVisible(chromedp.ID("stages")))
	b.waitFor(t, "the verdict shown", `!document.getElementById("verdict").hidden`, 45*time.Second)
	if got := eval[string](t, b, `document.getElementById("verdict-value").textContent`); got != "request_changes" {
		t.Errorf("verdict = %q, want request_changes", got)
	}

	b.do(t, "sign out", chromedp.Click(chromedp.ID("signout-btn")), chromedp.WaitVisible(chromedp.ID("token")))
	b.do(t, "the list again", chromedp.Navigate(srv.url+"/"), chromedp.WaitVisible(chromedp.ID("signin")))
	if errs := b.pageErrors(); slices.ContainsFunc(errs, func(e string) bool { return !strings.Contains(e, "401") }) {
		t.Errorf("the pages reported errors:\n%s", strings.Join(errs, "\n"))
	}
}

// TestGitHubSignInInBrowser: a person signs in with GitHub (the fake's
// OAuth pages) and sees the runs of the repositories they can read only.
func TestGitHubSignInInBrowser(t *testing.T) {
	t.Parallel()
	chrome := chromePath(t)
	gh := githubtest.New(t)
	gh.RequireAuth()
	addr := freeAddr(t)
	public := "http://" + addr
	gh.SetOAuthApp("Iv1.e2e", "e2e-oauth-secret", public+"/signin/github/callback")
	gh.SignInBrowser(githubtest.User{Login: "mona", ID: 77})
	gh.SetPermission("acme", "widgets", "mona", "read")
	gh.SetPermission("acme", "secret", "hubot", "admin")
	gh.SetOrgMember("owned", "mona", "admin")
	gh.SetPermission("owned", "tools", "hubot", "admin")

	dbURL := storetest.URL(t)
	runs := addRuns(t, dbURL, gh, "acme/widgets", "acme/secret", "owned/tools", "")
	srv := startReplica(t, buildBinary(t), "serve", dbURL, serveOptions{addr: addr, env: map[string]string{
		"MERGEGUARD_API_TOKEN": "e2e-token-0123456789", "MERGEGUARD_SECRET_KEY": "ZTJlLXNlY3JldC1rZXktMDEyMzQ1Njc4OS1hYmNkZWY=", // 32 bytes, base64
		"MERGEGUARD_PUBLIC_URL": public, "MERGEGUARD_WORKERS": "0",
		"GITHUB_WEB_URL": gh.WebURL(), "GITHUB_V3_API_URL": gh.URL(),
		"GITHUB_OAUTH_CLIENT_ID": "Iv1.e2e", "GITHUB_OAUTH_CLIENT_SECRET": "e2e-oauth-secret",
	}})
	srv.waitReady(t)
	b := newBrowser(t, chrome)
	b.behindProxy(t)

	b.do(t, "open a review", chromedp.Navigate(srv.url+"/"), chromedp.WaitVisible(chromedp.ID("signin")))
	b.do(t, "go to the sign-in page", chromedp.Click(chromedp.ID("signin")), chromedp.WaitVisible(chromedp.ID("signin-github")))
	b.do(t, "sign in with GitHub", chromedp.Click(chromedp.ID("signin-github")))
	b.waitFor(t, "back on the list, signed in", `location.pathname === "/" && document.getElementById("who") !== null`, 20*time.Second)
	if got := eval[string](t, b, `document.getElementById("who").textContent`); got != "mona" {
		t.Errorf("signed in as %q, want mona", got)
	}
	listed := eval[[]string](t, b, `Array.from(new Set(Array.from(document.querySelectorAll('a[href^="/reviews/"]')).map(a => a.getAttribute("href"))))`)
	want := []string{"/reviews/" + runs["acme/widgets"], "/reviews/" + runs["owned/tools"]}
	slices.Sort(listed)
	slices.Sort(want)
	if diff := cmp.Diff(want, listed); diff != "" {
		t.Errorf("reviews listed (-want +got):\n%s", diff)
	}
	for repo, wantTitle := range map[string]string{"acme/secret": "Not found", "": "Not found", "acme/widgets": "Review"} {
		b.do(t, "open the review of "+repo, chromedp.Navigate(srv.url+"/reviews/"+runs[repo]), chromedp.WaitVisible(chromedp.CSS("main h1")))
		if got := eval[string](t, b, `document.querySelector("main h1").textContent`); !strings.HasPrefix(got, wantTitle) {
			t.Errorf("review of %q: heading %q, want %q", repo, got, wantTitle)
		}
	}
}

// addRuns queues a pull-request run of each repository, with gh's id of
// it as the webhook gives it ("" queues a diff run), and returns their ids
// by repository.
func addRuns(t *testing.T, dbURL string, gh *githubtest.Server, repos ...string) map[string]string {
	t.Helper()
	st, err := store.Open(t.Context(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ids := map[string]string{}
	for _, repo := range repos {
		nr := store.NewRun{Mode: store.ModePR, Trigger: store.TriggerWebhook, InstallationID: 1, Repository: repo, PRNumber: 3, HeadSHA: "abc"}
		if owner, name, ok := strings.Cut(repo, "/"); ok {
			nr.RepositoryID = gh.RepoID(owner, name)
		}
		if repo == "" {
			text := "diff --git a/x b/x\n"
			nr = store.NewRun{Mode: store.ModeDiff, Trigger: store.TriggerAPI, DiffText: &text}
		}
		run, err := st.EnqueueRun(t.Context(), nr)
		if err != nil {
			t.Fatal(err)
		}
		ids[repo] = run.ID
	}
	return ids
}
