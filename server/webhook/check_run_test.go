package webhook_test

import (
	"encoding/json"
	"maps"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mergeguard/mergeguard/github"
	"github.com/mergeguard/mergeguard/github/githubtest"
	"github.com/mergeguard/mergeguard/server/store"
)

// checkPull is one entry of a check run payload's pull_requests.
func checkPull(number int, pr githubtest.PR) map[string]any {
	repo := map[string]any{"id": 186853002, "url": "https://api.github.com/repos/Codertocat/Hello-World", "name": "Hello-World"}
	return map[string]any{
		"url": "https://api.github.com/repos/Codertocat/Hello-World/pulls/2", "id": 279147437, "number": number,
		"head": map[string]any{"ref": pr.HeadRef, "sha": pr.HeadSHA, "repo": repo},
		"base": map[string]any{"ref": "master", "sha": pr.BaseSHA, "repo": repo},
	}
}

// rerequested is GitHub's check_run rerequested payload made the Re-run of
// MergeGuard's check run (App 42, "mergeguard") of pr's head on
// Codertocat/Hello-World#2, pressed by alice; set replaces more fields.
func rerequested(t *testing.T, id string, pr githubtest.PR, set map[string]any) githubtest.Delivery {
	t.Helper()
	fields := map[string]any{
		"check_run.name":          github.CheckName,
		"check_run.head_sha":      pr.HeadSHA,
		"check_run.app.id":        42,
		"check_run.app.slug":      "mergeguard",
		"check_run.pull_requests": []any{checkPull(2, pr)},
		"installation.id":         1,
		"repository.name":         "Hello-World",
		"repository.full_name":    "Codertocat/Hello-World",
		"repository.owner.login":  "Codertocat",
		"sender.login":            "alice",
		"sender.type":             "User",
	}
	maps.Copy(fields, set)
	payload := githubtest.SetFields(t, githubtest.Payload(t, "check_run/rerequested.payload.json"), fields)
	return githubtest.Delivery{Event: "check_run", ID: id, Payload: payload}
}

func TestCheckRunRerequested(t *testing.T) {
	t.Parallel() // each test has its own database and fakes
	type result struct {
		Outcome, Detail  string
		Runs             int
		PermissionChecks int
	}
	queued := result{Outcome: "queued", Runs: 1, PermissionChecks: 1}
	tests := []struct {
		name string
		set  func(pr githubtest.PR) map[string]any
		want result
	}{
		{"Re-run of MergeGuard's check by a writer", nil, queued},
		{"identified by its App id alone", func(githubtest.PR) map[string]any {
			return map[string]any{"check_run.app.slug": nil}
		}, queued},
		{"identified by its slug alone", func(githubtest.PR) map[string]any {
			return map[string]any{"check_run.app.id": nil}
		}, queued},
		{"Re-run by a reader", func(githubtest.PR) map[string]any {
			return map[string]any{"sender.login": "bob"}
		}, result{Outcome: "ignored", Detail: "bob has no write permission", PermissionChecks: 1}},
		{"Re-run by a bot", func(githubtest.PR) map[string]any {
			return map[string]any{"sender.login": "renovate[bot]", "sender.type": "Bot"}
		}, result{Outcome: "ignored", Detail: "rerequested by bot renovate[bot]"}},
		{"another app's check of the same name", func(githubtest.PR) map[string]any {
			return map[string]any{"check_run.app.id": 29310, "check_run.app.slug": "octocoders-linter"}
		}, result{Outcome: "ignored", Detail: `check run "MergeGuard" of octocoders-linter is not MergeGuard's`}},
		{"our slug with another App id", func(githubtest.PR) map[string]any {
			return map[string]any{"check_run.app.id": 7}
		}, result{Outcome: "ignored", Detail: `check run "MergeGuard" of mergeguard is not MergeGuard's`}},
		{"another check of our App", func(githubtest.PR) map[string]any {
			return map[string]any{"check_run.name": "lint"}
		}, result{Outcome: "ignored", Detail: `check run "lint" of mergeguard is not MergeGuard's`}},
		{"a push from a fork: no pull requests", func(githubtest.PR) map[string]any {
			return map[string]any{"check_run.pull_requests": []any{}}
		}, result{Outcome: "ignored", Detail: "check run of head %s names no pull request (a push from a fork, or none open)"}},
		{"the pull request moved on", func(pr githubtest.PR) map[string]any {
			pr.HeadSHA = "1111111111111111111111111111111111111111"
			return map[string]any{"check_run.pull_requests": []any{checkPull(2, pr)}}
		}, result{Outcome: "ignored", Detail: "no open pull request is at head %s any more"}},
		{"our check created", func(githubtest.PR) map[string]any {
			return map[string]any{"action": "created"}
		}, result{Outcome: "ignored", Detail: "check run created"}},
		{"our check completed", func(githubtest.PR) map[string]any {
			return map[string]any{"action": "completed"}
		}, result{Outcome: "ignored", Detail: "check run completed"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			in := newIntake(t)
			pr := in.gh.AddPR(githubtest.PR{Owner: "Codertocat", Repo: "Hello-World", Number: 2,
				Base: map[string]string{"README.md": "Hello\n"}, Head: map[string]string{"README.md": "Hello World\n"}, Diff: smallDiff})
			in.gh.SetPermission("Codertocat", "Hello-World", "alice", "write")
			in.gh.SetPermission("Codertocat", "Hello-World", "bob", "read")
			var set map[string]any
			if tt.set != nil {
				set = tt.set(pr)
			}
			d := rerequested(t, "r-1", pr, set)
			if got := in.send(d); got != http.StatusOK {
				t.Fatalf("status %d, want 200", got)
			}
			want := tt.want
			if want.Detail != "" && want.Outcome == "ignored" {
				want.Detail = strings.ReplaceAll(want.Detail, "%s", pr.HeadSHA)
			}
			got := result{in.delivery("r-1").Outcome, in.detail("r-1"), len(in.runs()), in.gh.CallCount(githubtest.RoutePermission)}
			if want.Outcome == "queued" {
				got.Detail = "" // the run's id
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			for _, r := range in.runs() {
				checkRerun(t, r, pr, "alice")
			}

			// A redelivery changes nothing and calls nothing.
			calls := len(in.gh.Calls())
			if got := in.send(d); got != http.StatusOK {
				t.Fatalf("redelivery: status %d, want 200", got)
			}
			if n := len(in.runs()); n != tt.want.Runs {
				t.Errorf("redelivery: %d runs, want %d", n, tt.want.Runs)
			}
			if n := len(in.gh.Calls()) - calls; n != 0 {
				t.Errorf("redelivery made %d GitHub calls, want 0", n)
			}
		})
	}
}

// checkRerun fails t unless r is the review a rerun by user of pr's head
// queues: requested, of the head, base and branch of the pull request, not
// a forced full review.
func checkRerun(t *testing.T, r store.Run, pr githubtest.PR, user string) {
	t.Helper()
	type run struct {
		Mode                         store.Mode
		Trigger                      store.Trigger
		Status                       store.Status
		InstallationID               int64
		Repository                   string
		RepositoryID                 int64
		HeadSHA, BaseSHA, Branch, By string
		Options                      map[string]any
	}
	var opts map[string]any
	if err := json.Unmarshal(r.Options, &opts); err != nil {
		t.Fatal(err)
	}
	got := run{r.Mode, r.Trigger, r.Status, r.InstallationID, r.Repository, r.RepositoryID, r.HeadSHA, r.BaseSHA, r.Branch, r.RequestedBy, opts}
	want := run{store.ModePR, store.TriggerCommand, store.StatusQueued, 1, "Codertocat/Hello-World", 526, pr.HeadSHA, pr.BaseSHA, pr.HeadRef, user, map[string]any{}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("run of pull request %d (-want +got):\n%s", r.PRNumber, diff)
	}
}

// TestCheckRunRerequestedCoalesces: pressing Re-run again while the
// review it queued waits queues nothing more, through the command path.
func TestCheckRunRerequestedCoalesces(t *testing.T) {
	t.Parallel() // each test has its own database and fakes
	in := newIntake(t)
	pr := in.gh.AddPR(githubtest.PR{Owner: "Codertocat", Repo: "Hello-World", Number: 2,
		Base: map[string]string{"README.md": "Hello\n"}, Head: map[string]string{"README.md": "Hello World\n"}, Diff: smallDiff})
	in.gh.SetPermission("Codertocat", "Hello-World", "alice", "write")
	for _, id := range []string{"r-1", "r-2"} {
		if got := in.send(rerequested(t, id, pr, nil)); got != http.StatusOK {
			t.Fatalf("%s: status %d, want 200", id, got)
		}
	}
	got := []string{in.delivery("r-1").Outcome, in.delivery("r-2").Outcome}
	if diff := cmp.Diff([]string{"queued", "coalesced"}, got); diff != "" {
		t.Errorf("outcomes (-want +got):\n%s", diff)
	}
	if n := len(in.runs()); n != 1 {
		t.Errorf("%d runs, want 1", n)
	}
	if n := len(in.gh.IssueComments("Codertocat", "Hello-World", 2)); n != 0 {
		t.Errorf("%d comments posted, want none: the button gets no reply", n)
	}
}

// TestCheckRunRerequestedSeveralPulls: a head that is the head of two open
// pull requests gets a review of each, recorded under the delivery's id
// and "<id>#<number>".
func TestCheckRunRerequestedSeveralPulls(t *testing.T) {
	t.Parallel() // each test has its own database and fakes
	in := newIntake(t)
	pr := in.gh.AddPR(githubtest.PR{Owner: "Codertocat", Repo: "Hello-World", Number: 2,
		Base: map[string]string{"README.md": "Hello\n"}, Head: map[string]string{"README.md": "Hello World\n"}, Diff: smallDiff})
	in.gh.SetPermission("Codertocat", "Hello-World", "alice", "write")
	d := rerequested(t, "r-1", pr, map[string]any{"check_run.pull_requests": []any{checkPull(2, pr), checkPull(3, pr)}})
	for range 2 { // and a redelivery
		if got := in.send(d); got != http.StatusOK {
			t.Fatalf("status %d, want 200", got)
		}
	}
	got := map[int]string{}
	for _, r := range in.runs() {
		checkRerun(t, r, pr, "alice")
		got[r.PRNumber] = r.DeliveryID
	}
	if diff := cmp.Diff(map[int]string{2: "r-1", 3: "r-1#3"}, got); diff != "" {
		t.Errorf("runs by pull request (-want +got):\n%s", diff)
	}
}

// TestCheckRunRealPayloads: GitHub's example check_run payloads are other
// apps' check runs, ignored without a GitHub call.
func TestCheckRunRealPayloads(t *testing.T) {
	t.Parallel() // each test has its own database and fakes
	in := newIntake(t)
	for _, file := range []string{"rerequested.payload.json", "rerequested.with-organization.payload.json", "created.payload.json", "completed.payload.json"} {
		if got := in.send(githubtest.Delivery{Event: "check_run", ID: file, Payload: githubtest.Payload(t, "check_run/"+file)}); got != http.StatusOK {
			t.Fatalf("%s: status %d, want 200", file, got)
		}
		if got := in.delivery(file).Outcome; got != "ignored" {
			t.Errorf("%s: outcome %q, want ignored", file, got)
		}
	}
	if got := in.detail("rerequested.payload.json"); got != `check run "randscape" of app 2 is not MergeGuard's` {
		t.Errorf("detail %q", got)
	}
	if n := len(in.gh.Calls()); n != 0 || len(in.runs()) != 0 {
		t.Errorf("%d GitHub calls and %d runs, want none", n, len(in.runs()))
	}
}
