package e2e

import (
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/mergeguard/mergeguard/github/githubtest"
)

// TestSecretKeepsTheGateShut follows a pull request that pushes a key with
// the real binary, a real database, the fake GitHub and a model that finds
// nothing (issue 23): push 1 adds the key (check failure); push 2 splits it
// into two string literals, which the secret scan no longer matches (still
// failure: a rewrite is not a fix); push 3 removes it (the finding is
// exposed, its thread has one reply asking for rotation, still failure);
// then a writer's /mergeguard ignore in its thread completes the head's
// check as success at once and dismisses the REQUEST_CHANGES review.
func TestSecretKeepsTheGateShut(t *testing.T) {
	t.Parallel()
	app, r, db := blindReplica(t)
	alice := githubtest.User{Login: "alice", ID: 5, Type: "User"}
	app.gh.SetPermission("acme", "shop", alice.Login, "write")

	const cfg = "import os\nAWS_KEY = \"AKIAZ7VRSQ5TJN2XMY4W\"\n"
	pr := app.gh.AddPR(githubtest.PR{Owner: "acme", Repo: "shop", Number: 1, Title: "Deploy settings",
		Base: map[string]string{"README.md": "Hello\n"}, Head: map[string]string{"README.md": "Hello\n", "deploy/cfg.py": cfg},
		HeadSHA: sha("gate", 1), Diff: githubtest.AddedFileDiff("deploy/cfg.py", cfg)})
	files := maps.Clone(pr.Head)
	deliver := func(id, action string) {
		t.Helper()
		app.mustDeliver(t, r.url, githubtest.Delivery{Event: "pull_request", ID: id, Payload: payload(t, pr, action)})
		if run := waitRun(t, db, pr, pr.HeadSHA, 60*time.Second, "succeeded", "failed", "skipped"); run.Status != "succeeded" {
			t.Fatalf("%s: run %s (%s), want succeeded", id, run.Status, run.Error)
		}
	}
	first := pr.HeadSHA
	deliver("open", "opened")
	if c := lastCheck(t, app); c.Conclusion != "failure" {
		t.Fatalf("check with the key pushed: %+v, want failure", c)
	}

	for i, content := range []string{
		"import os\nAWS_KEY = \"AKIAZ7VRSQ\" \"5TJN2XMY4W\"\n", // split into two literals
		"import os\nAWS_KEY = os.environ[\"AWS_KEY\"]\n",       // removed
	} {
		files["deploy/cfg.py"] = content
		pr.HeadSHA = app.gh.Push("acme", "shop", 1, files, fmt.Sprintf("push %d", i+2))
		deliver(fmt.Sprintf("push-%d", i+2), "synchronize")
		if c := lastCheck(t, app); c.Conclusion != "failure" || c.HeadSHA != pr.HeadSHA {
			t.Errorf("push %d: check %+v, want failure at the head", i+2, c)
		}
		var state string
		if err := db.QueryRow(t.Context(), `SELECT state FROM pr_findings WHERE repository = 'acme/shop' AND pr_number = 1
			AND finding->>'agent' = 'analyzer:secrets'`).Scan(&state); err != nil {
			t.Fatal(err)
		}
		if state != "exposed" {
			t.Errorf("push %d: the key's ledger entry is %s, want exposed", i+2, state)
		}
		th := threadOf(app, "Possible secret committed")
		if len(th.Comments) != 2 || !strings.Contains(th.Comments[1].Body, first[:7]) || !strings.Contains(th.Comments[1].Body, "rotate") {
			t.Errorf("push %d: the key's thread %+v, want one reply naming %s and asking for rotation", i+2, th.Comments, first[:7])
		}
	}

	th := threadOf(app, "Possible secret committed")
	id := app.gh.Reply("acme", "shop", 1, th.Comments[0].ID, alice, "/mergeguard ignore")
	app.mustDeliver(t, r.url, githubtest.Delivery{Event: "pull_request_review_comment", ID: "ignore",
		Payload: githubtest.SetFields(t, githubtest.Payload(t, "pull_request_review_comment/created.payload.json"), map[string]any{
			"comment.id": id, "comment.in_reply_to_id": th.Comments[0].ID, "comment.body": "/mergeguard ignore", "comment.path": "deploy/cfg.py",
			"comment.line": 2, "comment.user.login": alice.Login, "comment.user.type": alice.Type,
			"sender.login": alice.Login, "sender.type": alice.Type,
			"pull_request.number": 1, "pull_request.head.sha": pr.HeadSHA,
			"repository.name": "shop", "repository.full_name": "acme/shop", "repository.owner.login": "acme",
			"installation.id": installationID,
		})})
	checks := len(app.gh.CheckRuns("acme", "shop"))
	waitFor(t, 30*time.Second, "the head's check completed success after the dismissal", func() bool {
		runs := app.gh.CheckRuns("acme", "shop")
		c := runs[len(runs)-1]
		return len(runs) == checks && c.HeadSHA == pr.HeadSHA && c.Status == "completed" && c.Conclusion == "success"
	})
	waitFor(t, 30*time.Second, "the REQUEST_CHANGES review dismissed", func() bool {
		states := reviewStates(app.gh.Reviews("acme", "shop", 1))
		return len(states) > 0 && states[0] == "DISMISSED" && !strings.Contains(strings.Join(states, " "), "CHANGES_REQUESTED")
	})
	var runs int
	if err := db.QueryRow(t.Context(), `SELECT count(*) FROM review_runs WHERE repository = 'acme/shop' AND mode = 'pr'`).Scan(&runs); err != nil {
		t.Fatal(err)
	}
	if runs != 3 {
		t.Errorf("%d reviews, want 3: the gate opened without another review", runs)
	}
}
