package store_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/server/store"
)

// answerRun is an answer to a reply by user in a thread of o/r#1, asked
// at head.
func answerRun(t *testing.T, head, user string) store.NewRun {
	t.Helper()
	q, err := json.Marshal(review.Question{Kind: review.QuestionReply, CommentID: 601, ThreadCommentID: 501, Author: user, Body: "why?"})
	if err != nil {
		t.Fatal(err)
	}
	return store.NewRun{Mode: store.ModeAnswer, Trigger: store.TriggerWebhook, InstallationID: 7, Repository: "o/r",
		PRNumber: 1, HeadSHA: head, RequestedBy: user, Options: q}
}

// TestAnswerRunsBesideReviews: answers are queued beside reviews of the
// same pull request and head, whichever comes first: an answer neither
// coalesces with nor supersedes a review, and a review of a newer head
// supersedes only the older reviews.
func TestAnswerRunsBesideReviews(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	review1 := enqueue(t, s, prRun("o/r", 1, "a"))
	var answers []string
	for _, id := range []string{"r1", "r2"} {
		a := answerRun(t, "a", "alice")
		res, err := s.RecordCommand(t.Context(), commandDelivery(id), store.Command{Name: "reply", User: "alice", PRNumber: 1, Run: &a})
		if err != nil {
			t.Fatal(err)
		}
		if res.Run == nil || res.Coalesced || res.Run.Mode != store.ModeAnswer || res.Run.DeliveryID != id {
			t.Fatalf("answer %s: %+v, want a new answer run of delivery %s", id, res, id)
		}
		answers = append(answers, res.Run.ID)
	}
	review2 := enqueue(t, s, prRun("o/r", 1, "b"))
	answer3 := enqueue(t, s, answerRun(t, "c", "bob"))

	type status struct {
		ID     string
		Status store.Status
	}
	want := []status{{review1.ID, store.StatusSuperseded}, {answers[0], store.StatusQueued}, {answers[1], store.StatusQueued},
		{review2.ID, store.StatusQueued}, {answer3.ID, store.StatusQueued}}
	var got []status
	for _, w := range want {
		got = append(got, status{w.ID, getRun(t, s, w.ID).Status})
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("run statuses (-want +got):\n%s", diff)
	}
}

// TestRecordCommandIgnoreAndLearn: /mergeguard ignore dismisses its
// thread's finding and /mergeguard learn activates the thread's proposed
// learning in the transaction that records the command; a redelivery or a
// command over a rate limit changes nothing.
func TestRecordCommandIgnoreAndLearn(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	a := entry("fp-a", "a.go", 10, review.SeverityCritical, review.FindingOpen, "h1")
	a.CommentID = 501
	b := entry("fp-b", "b.go", 3, review.SeverityWarning, review.FindingOpen, "h1")
	b.CommentID = 502
	finishWithLedger(t, s, "h1", []review.LedgerEntry{a, b})
	proposed, err := s.AddLearning(t.Context(), review.Learning{Repository: "o/r", Instruction: "Panics are fine in cmd/.",
		Status: review.LearningProposed, PRNumber: 1, ThreadCommentID: 501, Fingerprint: "fp-a", Author: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	ignore := func(fp string) store.Command {
		return store.Command{Name: "ignore", User: "alice", PRNumber: 1, Dismiss: &store.Dismissal{Fingerprint: fp, How: review.DismissedCommand}}
	}
	learn := store.Command{Name: "learn", User: "carol", PRNumber: 1, LearnThread: 501}

	type result struct {
		Duplicate, Limited, Dismissed bool
		// Learning is the activated learning's id and status.
		Learning string
	}
	steps := []struct {
		delivery string
		command  store.Command
		want     result
	}{
		{"c1", ignore("fp-a"), result{Dismissed: true}},
		{"c1", ignore("fp-a"), result{Duplicate: true}},
		{"c2", ignore("fp-a"), result{}}, // no longer open
		{"c3", learn, result{Learning: "active"}},
		{"c4", learn, result{}}, // none proposed any more
		{"c5", store.Command{Name: "help", User: "carol", PRNumber: 1}, result{}},
		{"c6", ignore("fp-b"), result{Limited: true}}, // the sixth command on the pull request
	}
	for _, st := range steps {
		res, err := s.RecordCommand(t.Context(), commandDelivery(st.delivery), st.command)
		if err != nil {
			t.Fatalf("%s %s: %v", st.delivery, st.command.Name, err)
		}
		got := result{Duplicate: res.Duplicate, Limited: res.Limited, Dismissed: res.Dismissed}
		if res.Learning != nil {
			if res.Learning.ID != proposed.ID || res.Learning.UpdatedBy != "carol" {
				t.Errorf("%s: activated learning %d by %q, want %d by carol", st.delivery, res.Learning.ID, res.Learning.UpdatedBy, proposed.ID)
			}
			got.Learning = string(res.Learning.Status)
		}
		if diff := cmp.Diff(st.want, got); diff != "" {
			t.Errorf("%s %s (-want +got):\n%s", st.delivery, st.command.Name, diff)
		}
	}
	var states []string
	for _, e := range ledger(t, s) {
		states = append(states, e.Finding.Fingerprint+" "+string(e.State)+" "+e.StateHow+" "+e.StateBy)
	}
	if diff := cmp.Diff([]string{"fp-a dismissed command alice", "fp-b open  "}, states); diff != "" {
		t.Errorf("ledger (-want +got):\n%s", diff)
	}
}
