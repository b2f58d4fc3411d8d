package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mergeguard/mergeguard/github/githubtest"
	"github.com/mergeguard/mergeguard/review/llm/llmtest"
	"github.com/mergeguard/mergeguard/server/store/storetest"
)

// gateKey is a live-looking AWS access key id (gitleaks' exact rule).
const gateKey = "AWS_ACCESS_KEY_ID=AKIAZ7VRSQ5TJN2XMY4W\n"

// TestTheGateHolds: with the real binary, a real database, the fake GitHub
// and a model that finds nothing (it obeys whatever the pull request tells
// it), each way an author had of getting a live key past the MergeGuard
// check (issue 23) gets a failure check: a NUL byte on the last line of a
// long script, the key in a lock file's name, a title holding "wip" inside
// a word, and a title keyword.
func TestTheGateHolds(t *testing.T) {
	t.Parallel()
	app, r, db := blindReplica(t)

	script := "#!/bin/sh\n" + gateKey + strings.Repeat("echo padding line\n", 2000) + "# \x00\n"
	tests := []struct {
		name  string
		title string
		path  string
		file  string
	}{
		{"a NUL on the last line of a long script", "Deploy script", "deploy.sh", script},
		{"the key in a lock file", "Bump dependencies", "deep/dir/Cargo.lock", "[[package]]\nname = \"x\"\n" + gateKey},
		{"wip inside a word of the title", "Wipe stale sessions", "scripts/wipe.sh", "#!/bin/sh\n" + gateKey},
		{"a title keyword", "[WIP] x", "scripts/x.sh", "#!/bin/sh\n" + gateKey},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			number := 10 + i
			pr := app.gh.AddPR(githubtest.PR{
				Owner: "acme", Repo: "shop", Number: number, Title: tt.title,
				Base:    map[string]string{"README.md": "Hello\n"},
				Head:    map[string]string{"README.md": "Hello\n", tt.path: tt.file},
				HeadSHA: sha("gate", number), Diff: githubtest.AddedFileDiff(tt.path, tt.file),
			})
			app.mustDeliver(t, r.url, githubtest.Delivery{Event: "pull_request", ID: "gate-" + tt.path, Payload: payload(t, pr, "opened")})
			run := waitRun(t, db, pr, pr.HeadSHA, 60*time.Second, "succeeded", "failed", "skipped")
			if run.Status != "succeeded" {
				t.Errorf("run %s (%s %s), want succeeded", run.Status, run.Reason, run.Error)
			}
			check := checkOf(t, app, pr.HeadSHA)
			if check.Conclusion != "failure" || len(check.Annotations) == 0 {
				t.Errorf("check %q (%s, %d annotations), want failure with the key's annotation", check.Conclusion, check.Title, len(check.Annotations))
			}
		})
	}
}

// checkOf waits until the check run of head is completed and returns it.
func checkOf(t *testing.T, app *fakeApp, head string) githubtest.CheckRun {
	t.Helper()
	var c githubtest.CheckRun
	waitFor(t, 30*time.Second, "the check run of "+head[:7]+" completed", func() bool {
		for _, run := range app.gh.CheckRuns("acme", "shop") {
			if run.HeadSHA == head && run.Status == "completed" {
				c = run
				return true
			}
		}
		return false
	})
	return c
}

// blindReplica starts one replica of the real binary against a new
// database, the fake GitHub App and a model that finds nothing (as one
// that obeys whatever the pull request tells it would), and opens the
// database: what stands between a pull request and a passing check is the
// deterministic half alone.
func blindReplica(t *testing.T) (*fakeApp, *replica, *pgxpool.Pool) {
	t.Helper()
	app := newFakeApp(t)
	model := llmtest.New(t, func(llmtest.Request) llmtest.Response {
		return llmtest.JSON(map[string]any{"findings": []any{}, "positive_notes": []any{}})
	})
	dbURL := storetest.Empty(t)
	r := startReplica(t, buildBinary(t), "replica", dbURL, serveOptions{env: app.serveEnv(model.URL(), 2), config: workerConfig(5 * time.Second)})
	r.waitReady(t)
	return app, r, openDB(t, dbURL)
}

// TestModelDownStillShowsTheKey: with the real binary and a model that
// answers 500 to every call, a pull request committing a live key gets the
// key's finding posted (changes requested, the note that the model could
// not be reached), a failure check, and a comment that the model failed;
// the run is tried max_attempts times first.
func TestModelDownStillShowsTheKey(t *testing.T) {
	t.Parallel()
	app := newFakeApp(t)
	model := llmtest.New(t, func(llmtest.Request) llmtest.Response { return llmtest.ServerError() })
	dbURL := storetest.Empty(t)
	// The model client still retries each call three times, a few
	// milliseconds apart instead of the default's seconds.
	cfg := strings.Replace(workerConfig(5*time.Second), "workers:\n", "workers:\n  max_attempts: 2\n  retry_base: 100ms\n", 1) +
		"llm:\n  retry_base: 5ms\n"
	r := startReplica(t, buildBinary(t), "replica", dbURL, serveOptions{env: app.serveEnv(model.URL(), 2), config: cfg})
	r.waitReady(t)
	db := openDB(t, dbURL)

	pr := app.gh.AddPR(githubtest.PR{
		Owner: "acme", Repo: "shop", Number: 30, Title: "Add the deploy script",
		Base:    map[string]string{"README.md": "Hello\n"},
		Head:    map[string]string{"README.md": "Hello\n", "deploy.sh": "#!/bin/sh\n" + gateKey},
		HeadSHA: sha("down", 30), Diff: githubtest.AddedFileDiff("deploy.sh", "#!/bin/sh\n"+gateKey),
	})
	app.mustDeliver(t, r.url, githubtest.Delivery{Event: "pull_request", ID: "down-1", Payload: payload(t, pr, "opened")})
	run := waitRun(t, db, pr, pr.HeadSHA, 90*time.Second, "succeeded", "failed", "skipped")
	if run.Status != "failed" {
		t.Errorf("run %s (%s), want failed: the model never answered", run.Status, run.Error)
	}
	reviews := app.gh.Reviews("acme", "shop", 30)
	if len(reviews) != 1 || reviews[0].State != "CHANGES_REQUESTED" || !strings.Contains(reviews[0].Body, "The model could not be reached") {
		t.Fatalf("reviews %+v, want one requesting changes for the key, saying the model could not be reached", reviews)
	}
	if check := checkOf(t, app, pr.HeadSHA); check.Conclusion != "failure" {
		t.Errorf("check %q, want failure", check.Conclusion)
	}
	waitFor(t, 30*time.Second, "the comment that the model failed", func() bool {
		for _, c := range app.gh.IssueComments("acme", "shop", 30) {
			if strings.Contains(c.Body, "built-in analyzers and linters are posted") {
				return true
			}
		}
		return false
	})
}
