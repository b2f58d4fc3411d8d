package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mergeguard/mergeguard/github"
	"github.com/mergeguard/mergeguard/github/githubtest"
	"github.com/mergeguard/mergeguard/review"
)

// addedFileDiff is the git diff that adds a file.
func addedFileDiff(path, content string) string {
	lines := strings.Split(strings.TrimSuffix(content, "\n"), "\n")
	return fmt.Sprintf("diff --git a/%s b/%s\nnew file mode 100644\nindex 0000000..%s\n--- /dev/null\n+++ b/%s\n@@ -0,0 +1,%d @@\n+%s\n",
		path, path, githubtest.BlobSHA(content)[:7], path, len(lines), strings.Join(lines, "\n+"))
}

// prFake is a fake GitHub that accepts only the token "ghp-test" and holds
// acme/widgets#7, which commits an AWS key in cloud/keys.go and in
// docs/key.md; the base's .mergeguard.yml filters docs/ out.
func prFake(t *testing.T) *githubtest.Server {
	t.Helper()
	fake := githubtest.New(t)
	fake.RequireAuth()
	fake.AddToken("ghp-test")
	fake.SetBot(githubtest.User{Login: "ci-user", ID: 77, Type: "User"})
	keys, doc := "package cloud\n\n"+awsKeyLine, "AKIAZ7VRSQ5TJN2XMY4W\n"
	base := map[string]string{"main.go": "package main\n", ".mergeguard.yml": "path_filters: [\"!docs/**\"]\n"}
	head := map[string]string{"main.go": base["main.go"], ".mergeguard.yml": base[".mergeguard.yml"], "cloud/keys.go": keys, "docs/key.md": doc}
	fake.AddPR(githubtest.PR{Owner: "acme", Repo: "widgets", Number: 7, Base: base, Head: head,
		Diff: addedFileDiff("cloud/keys.go", keys) + addedFileDiff("docs/key.md", doc)})
	return fake
}

// TestReviewPR: --pr reviews a pull request through a plain token,
// reading the base's .mergeguard.yml, and prints it; --post posts one
// review as the token's user, and a second run posts nothing new.
func TestReviewPR(t *testing.T) {
	t.Parallel()
	fake := prFake(t)
	getenv := env(map[string]string{"GITHUB_TOKEN": "ghp-test", "GITHUB_API_URL": fake.URL(), "GITHUB_GRAPHQL_URL": fake.GraphQLURL()})
	pr := "https://github.com/acme/widgets/pull/7"
	// path_filters keeps docs/key.md from the model, never from the
	// secret scan (issue 23).
	want := []string{"cloud/keys.go:3:1: critical: Possible secret committed (aws-access-token)",
		"docs/key.md:1:1: critical: Possible secret committed (aws-access-token)"}

	stdout, stderr, err := runCmd(t, getenv, "review", "--pr", pr, "--format", "line")
	if err != nil {
		t.Fatalf("review --pr: %v\n%s", err, stderr)
	}
	if diff := cmp.Diff(want, strings.Split(strings.TrimSpace(stdout), "\n")); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
	// The base's .mergeguard.yml was read: docs/ is filtered out.
	stdout, stderr, err = runCmd(t, getenv, "review", "--pr", pr, "--format", "json")
	var v review.Verdict
	if err := errors.Join(err, json.Unmarshal([]byte(stdout), &v)); err != nil ||
		!slices.Contains(v.Skipped, review.SkippedFile{FilePath: "docs/key.md", Reason: "excluded by path_filters"}) {
		t.Errorf("review --pr --format json: %v; skipped %+v, want docs/key.md excluded by path_filters\n%s", err, v.Skipped, stderr)
	}
	if n := len(fake.Reviews("acme", "widgets", 7)); n != 0 {
		t.Errorf("without --post: %d reviews posted", n)
	}

	for run := range 2 {
		stdout, stderr, err := runCmd(t, getenv, "review", "--pr", pr, "--post", "--format", "line", "--fail-level", "critical")
		if exitCode(err) != 1 || !strings.Contains(stdout, want[0]) {
			t.Fatalf("run %d: err = %v, stdout %q\n%s", run, err, stdout, stderr)
		}
		reviews := fake.Reviews("acme", "widgets", 7)
		var got []string
		for _, rv := range reviews {
			got = append(got, rv.User.Login+" "+rv.State)
			for _, c := range rv.Comments {
				got = append(got, fmt.Sprintf("%s:%d", c.Path, c.Line))
			}
		}
		if diff := cmp.Diff([]string{"ci-user CHANGES_REQUESTED", "cloud/keys.go:3", "docs/key.md:1"}, got); diff != "" {
			t.Errorf("run %d: reviews (-want +got):\n%s\n%s", run, diff, stderr)
		}
		if said := strings.Contains(stderr, "nothing new posted"); said != (run == 1) {
			t.Errorf("run %d: stderr = %q", run, stderr)
		}
	}
	// A person's unsubmitted draft is theirs: it is kept, and it blocks
	// posting on a new head until it is submitted or deleted.
	fake.Push("acme", "widgets", 7, map[string]string{"README.md": "# widgets\n"}, "Remove the key, add a README")
	draft := fake.AddReview("acme", "widgets", 7, githubtest.Review{User: githubtest.User{Login: "ci-user", ID: 77}, State: "PENDING"})
	stdout, stderr, err = runCmd(t, getenv, "review", "--pr", pr, "--post", "--format", "json")
	if !errors.Is(err, github.ErrPendingDraft) || exitCode(err) != 1 {
		t.Errorf("with a draft: err = %v, want %v\n%s", err, github.ErrPendingDraft, stderr)
	}
	if stdout == "" {
		t.Errorf("with a draft: the verdict was not printed before the post failed\n%s", stderr)
	}
	if rvs := fake.Reviews("acme", "widgets", 7); len(rvs) != 2 || rvs[1].ID != draft || rvs[1].State != "PENDING" {
		t.Errorf("with a draft: reviews %+v, want the draft kept and nothing posted", rvs)
	}
	for _, c := range fake.CallsTo(githubtest.RouteUser) {
		if c.Status != http.StatusOK {
			t.Errorf("GET /user answered %d", c.Status)
		}
	}
}

// TestReviewPRActionsToken: GitHub Actions' token may not read GET /user;
// the review is then posted as github-actions[bot], and reruns find it.
func TestReviewPRActionsToken(t *testing.T) {
	t.Parallel()
	fake := prFake(t)
	fake.SetBot(githubtest.User{Login: "github-actions[bot]", ID: 41898282, Type: "Bot"})
	getenv := env(map[string]string{"GITHUB_TOKEN": "ghp-test"})
	for run := range 2 {
		fake.Inject(githubtest.RouteUser, githubtest.Failure{Status: http.StatusForbidden,
			Body: `{"message":"Resource not accessible by integration","status":"403"}`})
		_, stderr, err := runCmd(t, getenv, "review", "--pr", "https://github.com/acme/widgets/pull/7", "--post", "--github-url", fake.URL())
		if err != nil {
			t.Fatalf("run %d: %v\n%s", run, err, stderr)
		}
		if !strings.Contains(stderr, "posting as github-actions[bot]") {
			t.Errorf("run %d: stderr = %q", run, stderr)
		}
		if n := len(fake.Reviews("acme", "widgets", 7)); n != 1 {
			t.Errorf("run %d: %d reviews, want 1", run, n)
		}
	}
}

// TestReviewPRUsage: --pr's mistakes exit 2 with a message that says what
// to do.
func TestReviewPRUsage(t *testing.T) {
	t.Parallel()
	tok := env(map[string]string{"GITHUB_TOKEN": "ghp-test"})
	tests := map[string]struct {
		getenv func(string) string
		args   []string
		want   string
	}{
		"no token":           {env(nil), []string{"--pr", "https://github.com/acme/widgets/pull/7"}, "GITHUB_TOKEN"},
		"not a pull request": {tok, []string{"--pr", "https://github.com/acme/widgets/issues/7"}, "not a pull request's address"},
		"bad number":         {tok, []string{"--pr", "https://github.com/acme/widgets/pull/x"}, "not a positive number"},
		"not a URL":          {tok, []string{"--pr", "acme/widgets#7"}, "not an http(s) address"},
		"post without pr":    {tok, []string{"--post"}, "need --pr"},
		"pr and base":        {tok, []string{"--pr", "https://github.com/acme/widgets/pull/7", "--base", "main"}, "cannot be combined"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, stderr, err := runCmd(t, tc.getenv, append([]string{"review"}, tc.args...)...)
			if exitCode(err) != 2 || err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v (exit %d), want exit 2 saying %q\n%s", err, exitCode(err), tc.want, stderr)
			}
		})
	}
}
