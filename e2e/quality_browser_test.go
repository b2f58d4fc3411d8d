package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/llm/llmtest"
	"github.com/mergeguard/mergeguard/server/store"
	"github.com/mergeguard/mergeguard/server/store/storetest"
)

// seedQualityPRs records 18 merged pull requests of acme/shop and acme/api
// over six weeks (three a week), reviewed by gpt-4o and qwen2.5-coder in
// turn, each with three findings whose outcomes cycle:
//
//	bug (the model's):       addressed unless i%3 == 0, else dismissed  12 of 18
//	security (the model's):  addressed when i%4 == 0, else left open     5 of 18
//	quality (shellcheck's):  addressed when i is odd, else dismissed     9 of 18
//
// that is 26 of 54 addressed (48.1%, 95% interval 35.4%-61.1%); and one
// pull request closed unmerged with its finding left open (abandoned).
func seedQualityPRs(t *testing.T, dbURL string) {
	t.Helper()
	st, err := store.Open(t.Context(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	entry := func(fp string, cat review.Category, sev review.Severity, agent string, addressed bool) review.LedgerEntry {
		e := review.LedgerEntry{Finding: review.Finding{FilePath: "a.go", LineStart: 1, LineEnd: 1, Side: review.SideRight,
			Severity: sev, Category: cat, Title: fp, VerificationStatus: review.Verified, Fingerprint: fp, Agent: agent},
			State: review.FindingOpen, FirstSeenSHA: "h1", LastSeenSHA: "h1"}
		if addressed {
			e.State, e.FixedSHA, e.LastSeenSHA = review.FindingFixed, "h2", "h2"
		}
		return e
	}
	dismissed := func(e review.LedgerEntry) review.LedgerEntry {
		if e.State == review.FindingOpen {
			e.State, e.StateHow, e.StateBy = review.FindingDismissed, review.DismissedThreadResolved, "alice"
		}
		return e
	}
	now := time.Now().UTC()
	for i := range 18 {
		pr := storetest.PR{Repository: "acme/shop", Number: i + 1, Model: "gpt-4o", Cost: 0.04, Merged: true, Took: 25 * time.Second,
			At: now.Add(-time.Duration(5-i/3)*7*24*time.Hour - time.Minute)}
		if i%2 == 1 { // an experiment arm: another model reviews acme/api
			pr.Repository, pr.Model, pr.Cost, pr.Arm, pr.Took = "acme/api", "qwen2.5-coder", 0.01, "qwen", 40*time.Second
		}
		pr.Ledger = []review.LedgerEntry{
			dismissed(entry("bug", review.CategoryBug, review.SeverityWarning, "bugs", i%3 != 0)),
			entry("sec", review.CategorySecurity, review.SeverityCritical, "security", i%4 == 0),
			dismissed(entry("sh", review.CategoryQuality, review.SeverityInfo, "analyzer:shellcheck", i%2 == 1)),
		}
		storetest.Closed(t, st, pr)
	}
	storetest.Closed(t, st, storetest.PR{Repository: "acme/shop", Number: 99, Model: "gpt-4o", At: now.Add(-time.Hour),
		Ledger: []review.LedgerEntry{entry("bug", review.CategoryBug, review.SeverityWarning, "bugs", false)}})
}

// TestQualityInBrowser loads the Quality page of a seeded database in
// Chromium: the headline rate, the bars of each chart, the navigation,
// no sideways scrolling on a phone, and no page error (a CSP violation of
// the inline SVG would be one).
// go test ./e2e/ -run QualityInBrowser -update rewrites docs/quality.png.
func TestQualityInBrowser(t *testing.T) {
	t.Parallel()
	chrome := chromePath(t)
	dbURL := storetest.URL(t)
	seedQualityPRs(t, dbURL) // before the server: its worker finds no queued run
	llm := llmtest.New(t, model)
	srv := startReplica(t, buildBinary(t), "serve", dbURL, serveOptions{env: map[string]string{
		"OPENAI_BASE_URL": llm.URL(), "OPENAI_API_KEY": "test", "MERGEGUARD_MODEL": "gpt-4o-mini",
	}})
	srv.waitReady(t)
	b := newBrowser(t, chrome)
	b.signIn(t, srv.url, e2eToken, "/quality")
	b.do(t, "open the Quality page", chromedp.WaitVisible(chromedp.ID("quality-rate")))

	type page struct {
		Rate, Interval string
		Marks          map[string][]string
		Nav            bool
	}
	got := page{
		Rate:     eval[string](t, b, `document.querySelector("#quality-rate .big").textContent`),
		Interval: eval[string](t, b, `document.querySelector("#quality-rate .muted").textContent`),
		Marks: eval[map[string][]string](t, b, `Object.fromEntries(Array.prototype.map.call(document.querySelectorAll("figure.chart"), function (f) {
  return [f.id, Array.prototype.map.call(f.querySelectorAll("svg g.row, svg g.week"), function (g) {
    var bar = g.querySelector("rect.bar");
    return (g.dataset.key || "other") + " n=" + g.dataset.n + (bar ? " w=" + bar.getAttribute("width") : "");
  })];
}))`),
		Nav: eval[bool](t, b, `!!document.querySelector('header.top nav a[href="/quality"]')`),
	}
	var weeks []string
	for k := 5; k >= 0; k-- {
		weeks = append(weeks, fmt.Sprintf("%s n=9", isoWeek(time.Now().UTC().Add(-time.Duration(k)*7*24*time.Hour-time.Minute))))
	}
	want := page{
		Rate: "48.1%", Interval: "95% interval 35.4%–61.1% · 26 of 54 findings", Nav: true,
		Marks: map[string][]string{
			"chart-week": weeks,
			// The bars' widths are the rates on a scale of 320.
			"chart-category":   {"bug n=18 w=213.3", "quality n=18 w=160", "security n=18 w=88.9"},
			"chart-source":     {"analyzer:shellcheck n=18 w=160", "gpt-4o n=18 w=195.6", "qwen2.5-coder n=18 w=106.7"},
			"chart-severity":   {"critical n=18 w=88.9", "info n=18 w=160", "warning n=18 w=213.3"},
			"chart-repository": {"acme/api n=27 w=177.8", "acme/shop n=27 w=130.4"},
			"chart-arm":        {"default n=27 w=130.4", "qwen n=27 w=177.8"},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the Quality page (-want +got):\n%s", diff)
	}
	b.screenshot(t, "quality.png")

	// A phone shows the same page without scrolling sideways.
	b.atPhoneWidth(t, "quality-rate", "Quality page")
	b.screenshot(t, "quality-mobile.png")
	if errs := b.pageErrors(); len(errs) > 0 {
		t.Errorf("the page reported errors:\n%s", strings.Join(errs, "\n"))
	}
}

// isoWeek is t's ISO week as the report names it ("2026-W48").
func isoWeek(t time.Time) string {
	y, w := t.ISOWeek()
	return fmt.Sprintf("%d-W%02d", y, w)
}
