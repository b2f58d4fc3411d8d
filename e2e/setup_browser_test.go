package e2e

import (
	"bytes"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/mergeguard/mergeguard/github/githubtest"
	"github.com/mergeguard/mergeguard/server/store/storetest"
)

// setupLayout lists what runs together on the setup form: a box (the
// fieldset, a label, the button) overlapping the next, or a label whose
// field is beside its text rather than under it.
const setupLayout = `(function () {
  var bad = [];
  var boxes = Array.prototype.filter.call(document.querySelectorAll("#setup-form > *"), function (e) { return e.type !== "hidden"; });
  for (var i = 0; i + 1 < boxes.length; i++) {
    var a = boxes[i].getBoundingClientRect(), b = boxes[i + 1].getBoundingClientRect();
    if (a.bottom > b.top + 0.5) bad.push(boxes[i].textContent.trim().slice(0, 30) + " overlaps " + boxes[i + 1].textContent.trim().slice(0, 30));
  }
  document.querySelectorAll("#setup-form > label").forEach(function (l) {
    var f = l.querySelector("input"), lr = l.getBoundingClientRect(), fr = f.getBoundingClientRect();
    if (fr.top < lr.top + 10 || fr.width < 200) bad.push(l.textContent.trim().slice(0, 30) + ": its field is not under it at full width");
  });
  return bad;
})()`

// TestSetupInBrowser clicks through /setup in Chromium: the form, the page
// that posts the manifest to (fake) GitHub by itself, GitHub's redirect to
// the callback, and the App's installation page. The pages' Content
// Security Policy must let the form post to GitHub and follow the
// redirect back.
func TestSetupInBrowser(t *testing.T) {
	t.Parallel()
	chrome := chromePath(t)
	gh := githubtest.New(t)
	srv := startReplica(t, buildBinary(t), "serve", storetest.URL(t), serveOptions{env: map[string]string{
		"MERGEGUARD_SECRET_KEY": base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32)),
		"GITHUB_WEB_URL":        gh.WebURL(), "GITHUB_V3_API_URL": gh.URL(), "GITHUB_V4_API_URL": gh.GraphQLURL(),
		"MERGEGUARD_WORKERS": "0",
	}})
	srv.waitReady(t)
	b := newBrowser(t, chrome)
	b.signIn(t, srv.url, e2eToken, "/setup")

	b.do(t, "open /setup",
		chromedp.Navigate(srv.url+"/setup"),
		chromedp.WaitVisible(chromedp.ID("setup-form")))
	if got := eval[string](t, b, `document.querySelector('input[name="public_url"]').value`); got != srv.url {
		t.Errorf("the public URL is prefilled with %q, want the address opened, %s", got, srv.url)
	}
	if got := eval[string](t, b, `document.querySelector('input[name="web_url"]').value`); got != gh.WebURL() {
		t.Errorf("GitHub's web URL is prefilled with %q, want %s", got, gh.WebURL())
	}
	checkNav(t, b)
	if bad := eval[[]string](t, b, setupLayout); len(bad) > 0 {
		t.Errorf("the setup form's boxes run together:\n%s", strings.Join(bad, "\n"))
	}
	b.screenshot(t, "setup-form.png")
	b.do(t, "submit the form",
		chromedp.SetValue(chromedp.CSS(`input[name="org"]`), "acme"),
		chromedp.SetValue(chromedp.CSS(`input[name="setup_code"]`), srv.logField(t, "setup_code")),
		chromedp.Click(chromedp.CSS(`#setup-form button[type="submit"]`)))

	install := gh.WebURL() + "apps/mergeguard/installations/new"
	// The page navigates by itself three times (GitHub, the callback, the
	// installation page): ask for its address until it is the last.
	var loc string
	for deadline := time.Now().Add(30 * time.Second); loc != install; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the browser did not reach the installation page (at %s; page errors %q)", loc, b.pageErrors())
		}
		if l, err := chromedp.Run(b.ctx, chromedp.Location()); err == nil {
			loc = l
		}
	}
	apps := gh.ManifestApps()
	if len(apps) != 1 || apps[0].Org != "acme" || !apps[0].Converted {
		t.Fatalf("the fake's Apps: %+v, want one of acme, converted", apps)
	}
	for _, e := range b.pageErrors() {
		// The fake GitHub has no installation page nor favicon: its 404s
		// are not MergeGuard's.
		if !strings.Contains(e, gh.WebURL()) {
			t.Errorf("page error: %s", e)
		}
	}
}
