package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mergeguard/mergeguard/github/githubtest"
)

// TestQualityWithTheBinary follows four pull requests that commit a key
// through the real binary, a real database and the fake GitHub (a model
// that finds nothing; the secret scan reports the key): #1 merged with the
// key (unaddressed), #2 merged after a push removed it (addressed), #3
// merged after the key was dismissed through the API (dismissed), #4
// closed unmerged (abandoned). #1's closing is redelivered and an older,
// unmerged closing of #2 arrives last: neither changes anything.
// GET /api/repos/acme/shop/quality then reports 1 of 3 addressed.
func TestQualityWithTheBinary(t *testing.T) {
	t.Parallel()
	app, r, db := blindReplica(t)
	const key = "import os\nAWS_KEY = \"AKIAZ7VRSQ5TJN2XMY4W\"\n"
	prs := make([]githubtest.PR, 5)
	for n := 1; n <= 4; n++ {
		prs[n] = app.gh.AddPR(githubtest.PR{Owner: "acme", Repo: "shop", Number: n, Title: fmt.Sprint("Settings ", n),
			Base: map[string]string{"README.md": "Hello\n"}, Head: map[string]string{"README.md": "Hello\n", "deploy/cfg.py": key},
			HeadSHA: sha("quality", n), Diff: githubtest.AddedFileDiff("deploy/cfg.py", key)})
		reviewed(t, app, r.url, db, prs[n], fmt.Sprint("open-", n), "opened")
	}
	// #2: a push removes the key.
	files := map[string]string{"README.md": "Hello\n", "deploy/cfg.py": "import os\nAWS_KEY = os.environ[\"AWS_KEY\"]\n"}
	prs[2].HeadSHA = app.gh.Push("acme", "shop", 2, files, "read the key from the environment")
	reviewed(t, app, r.url, db, prs[2], "push-2", "synchronize")
	// #3: dismissed through the API.
	var fp string
	if err := db.QueryRow(t.Context(), `SELECT fingerprint FROM pr_findings WHERE repository = 'acme/shop' AND pr_number = 3`).Scan(&fp); err != nil {
		t.Fatal(err)
	}
	if code := callAPI(t, http.MethodPost, r.url+"/api/pulls/acme/shop/3/findings/"+fp+"/dismiss", nil); code != http.StatusOK {
		t.Fatalf("dismiss through the API: %d", code)
	}

	now := time.Now().UTC()
	closeAt := func(id string, pr githubtest.PR, merged bool, at time.Time) {
		t.Helper()
		app.mustDeliver(t, r.url, githubtest.Delivery{Event: "pull_request", ID: id, Payload: githubtest.SetFields(t, payload(t, pr, "closed"),
			map[string]any{"pull_request.merged": merged, "pull_request.closed_at": at.Format(time.RFC3339), "pull_request.state": "closed"})})
	}
	closeAt("close-1", prs[1], true, now.Add(-4*time.Hour))
	closeAt("close-2", prs[2], true, now.Add(-3*time.Hour))
	closeAt("close-3", prs[3], true, now.Add(-2*time.Hour))
	closeAt("close-4", prs[4], false, now.Add(-1*time.Hour))
	closeAt("close-1", prs[1], true, now.Add(-4*time.Hour))         // redelivered
	closeAt("close-2-older", prs[2], false, now.Add(-30*time.Hour)) // older, delivered last

	var rep struct {
		Rate struct {
			Addressed, Dismissed, Unaddressed, N int
		} `json:"addressed_rate"`
		Merged       int            `json:"merged_pull_requests"`
		Unmerged     int            `json:"closed_unmerged_pull_requests"`
		Abandoned    int            `json:"abandoned"`
		DismissedHow map[string]int `json:"dismissed_how"`
		BySource     []struct {
			Key string `json:"key"`
			N   int    `json:"n"`
		} `json:"by_source"`
	}
	if code := callAPI(t, http.MethodGet, r.url+"/api/repos/acme/shop/quality", &rep); code != http.StatusOK {
		t.Fatalf("GET quality: %d", code)
	}
	type summary struct {
		Addressed, Dismissed, Unaddressed, Merged, Unmerged, Abandoned int
		DismissedHow                                                   map[string]int
		Sources                                                        string
	}
	got := summary{rep.Rate.Addressed, rep.Rate.Dismissed, rep.Rate.Unaddressed, rep.Merged, rep.Unmerged, rep.Abandoned, rep.DismissedHow, fmt.Sprint(rep.BySource)}
	want := summary{1, 1, 1, 3, 1, 1, map[string]int{"api": 1}, "[{analyzer:secrets 3}]"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("quality of acme/shop (-want +got):\n%s", diff)
	}
}

// reviewed delivers a pull_request event for pr's head and waits for its
// review to succeed.
func reviewed(t *testing.T, app *fakeApp, url string, db *pgxpool.Pool, pr githubtest.PR, id, action string) {
	t.Helper()
	app.mustDeliver(t, url, githubtest.Delivery{Event: "pull_request", ID: id, Payload: payload(t, pr, action)})
	if run := waitRun(t, db, pr, pr.HeadSHA, 60*time.Second, "succeeded", "failed", "skipped"); run.Status != "succeeded" {
		t.Fatalf("%s: run %s (%s), want succeeded", id, run.Status, run.Error)
	}
}

// callAPI sends an API request with the token and decodes the answer into
// out (when not nil); it returns the status.
func callAPI(t *testing.T, method, url string, out any) int {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+e2eToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if out != nil && resp.StatusCode == http.StatusOK {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			t.Fatal(err)
		}
	}
	return resp.StatusCode
}
