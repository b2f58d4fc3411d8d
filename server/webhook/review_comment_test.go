package webhook_test

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mergeguard/mergeguard/github/githubtest"
)

// TestReviewCommentsAreIgnored: review comments, replies in MergeGuard's
// threads included, are recorded as ignored without a GitHub call until
// conversations are handled.
func TestReviewCommentsAreIgnored(t *testing.T) {
	t.Parallel() // each test has its own database and fakes
	in := newIntake(t)
	type got struct {
		Delivery delivery
		Detail   string
	}
	for _, file := range []string{"created.payload.json", "created.with-organization.payload.json", "edited.payload.json", "deleted.payload.json"} {
		payload := githubtest.Payload(t, "pull_request_review_comment/"+file)
		if file == "created.payload.json" { // a reply in MergeGuard's thread asking it something
			payload = githubtest.SetFields(t, payload, map[string]any{"comment.in_reply_to_id": 1, "comment.body": "/mergeguard ask why?"})
		}
		if status := in.send(githubtest.Delivery{Event: "pull_request_review_comment", ID: file, Payload: payload}); status != http.StatusOK {
			t.Fatalf("%s: status %d, want 200", file, status)
		}
		d := in.delivery(file)
		want := got{delivery{"pull_request_review_comment", d.Action, "ignored"}, "conversation is not handled yet"}
		if diff := cmp.Diff(want, got{d, in.detail(file)}); diff != "" {
			t.Errorf("%s (-want +got):\n%s", file, diff)
		}
	}
	if n := len(in.gh.Calls()); n != 0 || len(in.runs()) != 0 {
		t.Errorf("%d GitHub calls and %d runs, want none", n, len(in.runs()))
	}
}
