package e2e

import (
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mergeguard/mergeguard/github/githubtest"
	"github.com/mergeguard/mergeguard/review/llm/llmtest"
	"github.com/mergeguard/mergeguard/review/quality"
	"github.com/mergeguard/mergeguard/server/store/storetest"
)

// The kinds of finding the pull requests of TestQualityOfAStreamWithTheBinary
// carry, one each: the file that brings it, the fix a push makes, and the
// finding's place, severity and source.
var qualityKinds = []struct {
	title, path, code, fixed string
	line                     int
	severity, source         string
}{
	{"Division by zero", "mathx/div.go", divGo, "package mathx\n\n// Div divides a by b, or gives 0.\nfunc Div(a, b int) int {\n\tif b == 0 {\n\t\treturn 0\n\t}\n\treturn a / b\n}\n",
		4, "warning", modelSource},
	{"SQL injection", "store/users.go", usersGo, fixedUsersGo, 10, "critical", modelSource},
	{"Possible secret committed", "deploy/cfg.py", "import os\nAWS_KEY = \"AKIAZ7VRSQ5TJN2XMY4W\"\n", "import os\nAWS_KEY = os.environ[\"AWS_KEY\"]\n",
		2, "critical", "analyzer:secrets"},
}

// modelSource is the source of the model's findings in the quality
// report: the model the replicas are configured with, at the prompt's version.
const modelSource = "gpt-4o-mini@prompt-v1"

// The routes a finding takes to its outcome in the stream, and what each
// counts as: left open and merged, fixed by a push, dismissed by each of
// the four routes, or left open on a pull request closed unmerged.
var qualityRoutes = []struct{ name, outcome, how string }{
	{"open", "unaddressed", ""},
	{"fixed", "addressed", ""},
	{"api", "dismissed", "api"},
	{"resolved", "dismissed", "thread_resolved"},
	{"ignore", "dismissed", "command"},
	{"thumbs", "dismissed", "feedback"},
	{"abandoned", "abandoned", ""},
}

// qualityPR is one pull request of the stream.
type qualityPR struct {
	pr          githubtest.PR
	kind, route int
}

// TestQualityOfAStreamWithTheBinary follows 35 pull requests over two
// repositories through the real binary, a real database, the fake GitHub
// and a model that reports what it sees. Each carries one finding of
// three kinds (two from the model, warning and critical; a key from the
// secret scan) and takes one of seven routes: merged with it open, fixed
// by a push, dismissed through the API, by resolving its thread, by
// /mergeguard ignore or by a writer's 👎, or closed unmerged. The pull
// requests close in a shuffled order; five closings are redelivered and
// five older, unmerged closings arrive last: neither changes anything.
// The quality API then gives exactly the counts the routes make, by
// repository, severity and source.
func TestQualityOfAStreamWithTheBinary(t *testing.T) {
	t.Parallel()
	app := newFakeApp(t)
	model := llmtest.New(t, codeModel)
	dbURL := storetest.Empty(t)
	r := startReplica(t, buildBinary(t), "replica", dbURL, serveOptions{env: app.serveEnv(model.URL(), 4), config: workerConfig(5 * time.Second)})
	r.waitReady(t)
	db := openDB(t, dbURL)
	repos := []string{"shop", "api"}
	for _, repo := range repos {
		app.gh.SetPermission("acme", repo, "alice", "write")
	}

	stream := make([]*qualityPR, 35)
	for i := range stream {
		k := qualityKinds[i%len(qualityKinds)]
		files := map[string]string{"README.md": "Hello\n", k.path: k.code}
		stream[i] = &qualityPR{kind: i % len(qualityKinds), route: i % len(qualityRoutes), pr: app.gh.AddPR(githubtest.PR{
			Owner: "acme", Repo: repos[i%len(repos)], Number: 1 + i, Title: fmt.Sprint("Change ", i),
			Base: map[string]string{"README.md": "Hello\n"}, Head: files, HeadSHA: sha("stream", i),
			Diff: githubtest.AddedFileDiff(k.path, k.code)})}
		app.mustDeliver(t, r.url, githubtest.Delivery{Event: "pull_request", ID: fmt.Sprint("open-", i), Payload: payload(t, stream[i].pr, "opened")})
	}
	for _, q := range stream {
		succeeded(t, db, q.pr)
	}
	var pushed []*qualityPR
	for _, q := range stream {
		if followRoute(t, app, db, r.url, q) {
			pushed = append(pushed, q)
		}
	}
	for _, q := range pushed {
		succeeded(t, db, q.pr)
	}
	waitFor(t, 60*time.Second, "every dismissal in the ledger", func() bool { return undecided(t, db, stream) == 0 })
	closeStream(t, app, r.url, stream)

	want, got := expectedQuality(stream), map[string]map[string]quality.Rate{}
	for _, path := range []string{"/api/quality", "/api/repos/acme/shop/quality", "/api/repos/acme/api/quality"} {
		var rep quality.Report
		if code := callAPI(t, http.MethodGet, r.url+path, &rep); code != http.StatusOK {
			t.Fatalf("GET %s: %d", path, code)
		}
		got[path] = rateOf(rep)
		if path == "/api/quality" {
			got["dismissed how"] = counts(rep.DismissedHow)
			got["pull requests"] = map[string]quality.Rate{"abandoned": {N: rep.Abandoned}, "merged": {N: rep.Merged}, "unmerged": {N: rep.ClosedUnmerged}}
		}
	}
	if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(quality.Rate{}, "Low", "High")); diff != "" {
		t.Errorf("quality of the stream (-want +got):\n%s", diff)
	}
}

// succeeded waits for the review of pr's head to succeed.
func succeeded(t *testing.T, db *pgxpool.Pool, pr githubtest.PR) {
	t.Helper()
	if run := waitRun(t, db, pr, pr.HeadSHA, 90*time.Second, "succeeded", "failed", "skipped"); run.Status != "succeeded" {
		t.Fatalf("%s/%s#%d: run %s (%s), want succeeded", pr.Owner, pr.Repo, pr.Number, run.Status, run.Error)
	}
}

// followRoute does what q's route does before the close; it reports
// whether it pushed (a review to wait for).
func followRoute(t *testing.T, app *fakeApp, db *pgxpool.Pool, url string, q *qualityPR) bool {
	t.Helper()
	alice := githubtest.User{Login: "alice", ID: 5, Type: "User"}
	k, pr := qualityKinds[q.kind], &q.pr
	push := func(path, content string) bool {
		files := maps.Clone(pr.Head)
		files[path] = content
		pr.HeadSHA = app.gh.Push(pr.Owner, pr.Repo, pr.Number, files, "push")
		app.mustDeliver(t, url, githubtest.Delivery{Event: "pull_request", ID: fmt.Sprint("push-", pr.Repo, pr.Number), Payload: payload(t, *pr, "synchronize")})
		return true
	}
	th := findingThread(t, app, *pr, k.title)
	switch qualityRoutes[q.route].name {
	case "fixed":
		return push(k.path, k.fixed)
	case "thumbs": // a writer's 👎 is read before the next review
		app.gh.React(pr.Owner, pr.Repo, th.Comments[0].ID, alice, "-1")
		return push("README.md", "Hello again\n")
	case "api":
		var fp string
		if err := db.QueryRow(t.Context(), `SELECT fingerprint FROM pr_findings WHERE repository = $1 AND pr_number = $2`,
			pr.Owner+"/"+pr.Repo, pr.Number).Scan(&fp); err != nil {
			t.Fatal(err)
		}
		if code := callAPI(t, http.MethodPost, fmt.Sprintf("%s/api/pulls/%s/%s/%d/findings/%s/dismiss", url, pr.Owner, pr.Repo, pr.Number, fp), nil); code != http.StatusOK {
			t.Fatalf("dismiss through the API: %d", code)
		}
	case "resolved":
		app.gh.ResolveThread(pr.Owner, pr.Repo, pr.Number, th.ID, alice.Login)
		app.mustDeliver(t, url, githubtest.Delivery{Event: "pull_request_review_thread", ID: fmt.Sprint("resolve-", pr.Repo, pr.Number),
			Payload: app.gh.ThreadEvent(pr.Owner, pr.Repo, pr.Number, th.ID, "resolved", alice.Login, installationID)})
	case "ignore":
		id := app.gh.Reply(pr.Owner, pr.Repo, pr.Number, th.Comments[0].ID, alice, "/mergeguard ignore")
		app.mustDeliver(t, url, githubtest.Delivery{Event: "pull_request_review_comment", ID: fmt.Sprint("ignore-", pr.Repo, pr.Number),
			Payload: githubtest.SetFields(t, githubtest.Payload(t, "pull_request_review_comment/created.payload.json"), map[string]any{
				"comment.id": id, "comment.in_reply_to_id": th.Comments[0].ID, "comment.body": "/mergeguard ignore", "comment.path": k.path,
				"comment.line": k.line, "comment.user.login": alice.Login, "comment.user.type": alice.Type,
				"sender.login": alice.Login, "sender.type": alice.Type,
				"pull_request.number": pr.Number, "pull_request.head.sha": pr.HeadSHA,
				"repository.name": pr.Repo, "repository.full_name": pr.Owner + "/" + pr.Repo, "repository.owner.login": pr.Owner,
				"installation.id": installationID,
			})})
	}
	return false
}

// findingThread is the review thread of pr whose first comment names title.
func findingThread(t *testing.T, app *fakeApp, pr githubtest.PR, title string) githubtest.Thread {
	t.Helper()
	for _, th := range app.gh.Threads(pr.Owner, pr.Repo, pr.Number) {
		if strings.Contains(th.Comments[0].Body, title) {
			return th
		}
	}
	t.Fatalf("%s/%s#%d: no thread of %q", pr.Owner, pr.Repo, pr.Number, title)
	return githubtest.Thread{}
}

// undecided counts the pull requests of the stream whose finding a person
// dismissed but whose ledger entry does not say so yet.
func undecided(t *testing.T, db *pgxpool.Pool, stream []*qualityPR) int {
	t.Helper()
	var keys []string
	for _, q := range stream {
		if qualityRoutes[q.route].outcome == "dismissed" {
			keys = append(keys, fmt.Sprintf("%s/%s#%d", q.pr.Owner, q.pr.Repo, q.pr.Number))
		}
	}
	var dismissed int
	if err := db.QueryRow(t.Context(), `SELECT count(*) FROM pr_findings
		WHERE repository || '#' || pr_number = ANY($1) AND state = 'dismissed'`, keys).Scan(&dismissed); err != nil {
		t.Fatal(err)
	}
	return len(keys) - dismissed
}

// closeStream closes every pull request of the stream in a shuffled order
// (merged but the abandoned ones), then redelivers five closings and
// delivers five older, unmerged closings of merged pull requests.
func closeStream(t *testing.T, app *fakeApp, url string, stream []*qualityPR) {
	t.Helper()
	now := time.Now().UTC()
	closing := func(id string, q *qualityPR, merged bool, at time.Time) {
		t.Helper()
		app.mustDeliver(t, url, githubtest.Delivery{Event: "pull_request", ID: id, Payload: githubtest.SetFields(t, payload(t, q.pr, "closed"),
			map[string]any{"pull_request.merged": merged, "pull_request.closed_at": at.Format(time.RFC3339), "pull_request.state": "closed"})})
	}
	order := rand.New(rand.NewPCG(27, 1)).Perm(len(stream))
	for i, n := range order {
		q := stream[n]
		closing(fmt.Sprint("close-", n), q, qualityRoutes[q.route].name != "abandoned", now.Add(time.Duration(i-len(order))*time.Minute))
	}
	for _, n := range order[:5] {
		q := stream[n]
		closing(fmt.Sprint("close-", n), q, qualityRoutes[q.route].name != "abandoned", now) // redelivered: the same id
		if qualityRoutes[q.route].name != "abandoned" {
			closing(fmt.Sprint("close-older-", n), q, false, now.Add(-48*time.Hour))
		}
	}
}

// expectedQuality is what the quality API must say of the stream: the
// rates by path, the dismissals by how and the pull requests by closing.
func expectedQuality(stream []*qualityPR) map[string]map[string]quality.Rate {
	want := map[string]map[string]quality.Rate{"dismissed how": {}, "pull requests": {}}
	count := func(path, key, outcome string) {
		if want[path] == nil {
			want[path] = map[string]quality.Rate{}
		}
		r := want[path][key]
		switch outcome {
		case "addressed":
			r.Addressed++
		case "dismissed":
			r.Dismissed++
		case "unaddressed":
			r.Unaddressed++
		}
		r.N = r.Addressed + r.Dismissed + r.Unaddressed
		r.Rate = float64(r.Addressed) / float64(r.N)
		want[path][key] = r
	}
	pulls := map[string]int{}
	for _, q := range stream {
		route, k := qualityRoutes[q.route], qualityKinds[q.kind]
		if route.outcome == "abandoned" {
			pulls["abandoned"]++
			pulls["unmerged"]++
			continue
		}
		pulls["merged"]++
		if route.how != "" {
			pulls["how "+route.how]++
		}
		for _, path := range []string{"/api/quality", "/api/repos/acme/" + q.pr.Repo + "/quality"} {
			count(path, "all", route.outcome)
			count(path, "repository acme/"+q.pr.Repo, route.outcome)
			count(path, "severity "+k.severity, route.outcome)
			count(path, "source "+k.source, route.outcome)
		}
	}
	for key, n := range pulls {
		if how, ok := strings.CutPrefix(key, "how "); ok {
			want["dismissed how"][how] = quality.Rate{N: n}
		} else {
			want["pull requests"][key] = quality.Rate{N: n}
		}
	}
	return want
}

// rateOf is a report's rates by key: "all", "repository ...", "severity
// ..." and "source ...".
func rateOf(rep quality.Report) map[string]quality.Rate {
	rates := map[string]quality.Rate{"all": rep.AddressedRate}
	for label, groups := range map[string][]quality.Group{"repository": rep.ByRepository, "severity": rep.BySeverity, "source": rep.BySource} {
		for _, g := range groups {
			rates[label+" "+g.Key] = g.Rate
		}
	}
	return rates
}

// counts is a count by key as rates of N.
func counts(m map[string]int) map[string]quality.Rate {
	out := map[string]quality.Rate{}
	for k, n := range m {
		out[k] = quality.Rate{N: n}
	}
	return out
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
