package e2e

import (
	"bytes"
	"encoding/base64"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mergeguard/mergeguard/github/githubtest"
	"github.com/mergeguard/mergeguard/review/llm/llmtest"
	"github.com/mergeguard/mergeguard/server/store/storetest"
)

// TestDescribeWithSetupApp: on an install whose App was created through
// /setup (no webhook secret in the environment), a writer's
// `/mergeguard describe` on a pull request writes MergeGuard's section
// into its description, after the author's text.
func TestDescribeWithSetupApp(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	gh := githubtest.New(t)
	gh.RequireAuth()
	pr := gh.AddPR(newPR("acme", "widgets", 7, 2, "Add user lookup", sha("describe-setup", 1)))
	const author = "Looks users up by name."
	gh.SetPullBody("acme", "widgets", 7, author)
	gh.SetPermission("acme", "widgets", "alice", "write")
	llm := llmtest.New(t, reviewModel(0))
	r := startReplica(t, bin, "replica", storetest.Empty(t), serveOptions{env: map[string]string{
		"OPENAI_BASE_URL": llm.URL(), "OPENAI_API_KEY": "test", "MERGEGUARD_MODEL": "gpt-4o-mini", "MERGEGUARD_WORKERS": "1",
		"MERGEGUARD_SECRET_KEY": base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32)),
		"GITHUB_WEB_URL":        gh.WebURL(), "GITHUB_V3_API_URL": gh.URL(), "GITHUB_V4_API_URL": gh.GraphQLURL(),
	}})
	r.waitReady(t)

	created := createApp(t, gh, r)
	app := &fakeApp{gh: gh, secret: []byte(created.WebhookSecret), client: &http.Client{Timeout: 30 * time.Second}}
	const body = "/mergeguard describe"
	comment := gh.AddIssueComment("acme", "widgets", pr.Number, githubtest.IssueComment{User: githubtest.User{Login: "alice", ID: 77, Type: "User"}, Body: body})
	describe := githubtest.Delivery{Event: "issue_comment", ID: "describe-1",
		Payload: githubtest.SetFields(t, githubtest.Payload(t, "issue_comment/githubIssueCommentEvent.json"), map[string]any{
			"comment.body": body, "comment.user.login": "alice", "comment.id": comment,
			"issue.number": pr.Number, "installation.id": installationID,
			"repository.name": pr.Repo, "repository.full_name": pr.Owner + "/" + pr.Repo, "repository.owner.login": pr.Owner,
		})}
	waitFor(t, 30*time.Second, "the /setup App to take the describe command", func() bool {
		status, err := app.deliver(t.Context(), r.url, describe)
		return err == nil && status == http.StatusOK
	})
	waitFor(t, 60*time.Second, "MergeGuard's section in the description of acme/widgets#7", func() bool {
		return strings.Contains(gh.PullBody("acme", "widgets", pr.Number), "<!-- mergeguard:describe-start -->")
	})
	if got := gh.PullBody("acme", "widgets", pr.Number); !strings.HasPrefix(got, author+"\n\n<!-- mergeguard:describe-start -->\n") ||
		!strings.Contains(got, "`store/users.go`") {
		t.Errorf("description after describe:\n%s", got)
	}
}
