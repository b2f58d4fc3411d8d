package hook

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mergeguard/mergeguard/github/githubtest"
)

// decode decodes a real payload of githubtest/testdata/webhooks into T.
func decode[T any](t *testing.T, name string) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(githubtest.Payload(t, name), &v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return v
}

func TestCheckRunEventDecodes(t *testing.T) {
	type summary struct {
		Action, Name, HeadSHA, Status, Conclusion string
		ID, AppID, Installation                   int64
		PullRequests                              []int
	}
	sum := func(e CheckRunEvent) summary {
		s := summary{e.Action, e.CheckRun.Name, e.CheckRun.HeadSHA, e.CheckRun.Status, e.CheckRun.Conclusion, e.CheckRun.ID, e.CheckRun.App.ID, e.Installation.ID, nil}
		for _, pr := range e.CheckRun.PullRequests {
			s.PullRequests = append(s.PullRequests, pr.Number)
		}
		return s
	}
	tests := []struct {
		file string
		want summary
	}{
		{"check_run/rerequested.payload.json", summary{"rerequested", "randscape", "d6fde92930d4715a2b49857d24b940956b26d2d3", "completed", "neutral", 4, 2, 1, nil}},
		{"check_run/created.payload.json", summary{"created", "Octocoders-linter", "ec26c3e57ca3a959ca5aad62de7213c562f8c821", "queued", "", 128620228, 29310, 0, []int{2}}},
		{"check_run/completed.1.payload.json", summary{"completed", "Octocoders-linter", "ec26c3e57ca3a959ca5aad62de7213c562f8c821", "completed", "failure", 128620228, 29310, 0, []int{2}}},
		{"check_run/requested_action.payload.json", summary{"requested_action", "API Review", "5bd5f196a46b8222fb7484f05faba41a73cf34bd", "in_progress", "", 1494503112, 25811, 690857, []int{26764}}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			got := sum(decode[CheckRunEvent](t, tt.file))
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func TestPullRequestReviewThreadEventDecodes(t *testing.T) {
	for _, action := range []string{"resolved", "unresolved"} {
		e := decode[PullRequestReviewThreadEvent](t, "pull_request_review_thread/"+action+".payload.json")
		want := PullRequestReviewThreadEvent{Action: action}
		want.PullRequest.Number = 2
		want.Thread.NodeID = "PRRT_kwDOFd42Pc4rQOUv"
		want.Thread.Comments = []ReviewComment{{ID: 284312630, ReviewID: 237895671, Body: "Maybe you should use more emoji on this line.",
			User: Account{Login: "Codertocat", Type: "User"}, Path: "README.md", Line: 265, CommitID: "ec26c3e57ca3a959ca5aad62de7213c562f8c821"}}
		want.Repository, want.Installation, want.Sender = e.Repository, e.Installation, e.Sender
		if d := cmp.Diff(want, e); d != "" {
			t.Errorf("%s (-want +got):\n%s", action, d)
		}
		if e.Repository.FullName != "Codertocat/Hello-World" || e.Installation.ID != 1 || e.Sender.Login == "" {
			t.Errorf("%s: repository %q, installation %d, sender %q", action, e.Repository.FullName, e.Installation.ID, e.Sender.Login)
		}
	}
}

func TestPullRequestReviewCommentEventDecodes(t *testing.T) {
	for _, action := range []string{"created", "edited", "deleted"} {
		e := decode[PullRequestReviewCommentEvent](t, "pull_request_review_comment/"+action+".payload.json")
		c := e.Comment
		if e.Action != action || c.ID != 284312630 || c.InReplyToID != 0 || c.Path != "README.md" || c.Line != 265 || c.User.Login != "Codertocat" ||
			c.User.IsBot() || c.Body == "" || e.PullRequest.Number != 2 || e.PullRequest.Head.SHA != "ec26c3e57ca3a959ca5aad62de7213c562f8c821" || e.Installation.ID != 1 {
			t.Errorf("%s: %+v", action, e)
		}
	}
	// A reply, as GitHub sends one (no example has in_reply_to_id): the
	// example with the field set.
	payload := githubtest.SetFields(t, githubtest.Payload(t, "pull_request_review_comment/created.payload.json"),
		map[string]any{"comment.in_reply_to_id": 284312600, "comment.user.login": "mergeguard[bot]", "comment.user.type": "Bot"})
	var e PullRequestReviewCommentEvent
	if err := json.Unmarshal(payload, &e); err != nil {
		t.Fatal(err)
	}
	if e.Comment.InReplyToID != 284312600 || !e.Comment.User.IsBot() {
		t.Errorf("reply: %+v", e.Comment)
	}
}
