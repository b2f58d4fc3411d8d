package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/task"
)

// answerCase is one question answered over fakes, and what it must leave.
type answerCase struct {
	q     review.Question
	gh    fakeGitHub
	st    fakeStore
	run   fakeRunLog
	model fakeModel

	want          Answered // Problems aside: see problems
	problems      []string
	wantErr       error
	posted        []posted
	resolved      []string
	dismissed     []string
	learnings     []review.LearningStatus
	threadAsked   []int64 // ids of the thread's messages given to the model
	claimedToPost int
}

// TestAnswer: a question is answered once, where it was asked; a writer's
// reply that reads as disagreement dismisses an ordinary finding and
// resolves its thread, never a secret or a critical one; a rule it states
// becomes a learning, active at once only in the writer's own words; every
// best-effort step that fails is a problem, not a failure.
func TestAnswer(t *testing.T) {
	t.Parallel()
	reply := review.Question{Kind: review.QuestionReply, CommentID: 30, ThreadCommentID: 10, Author: "ann", Writer: true,
		Body: "This is intended: we allow panics in cmd."}
	ask := review.Question{Kind: review.QuestionAsk, CommentID: 50, Author: "bob", Body: "/mergeguard ask why?"}
	open := review.LedgerEntry{Finding: review.Finding{Fingerprint: "fp1", FilePath: "cmd/main.go", Severity: review.SeverityWarning},
		State: review.FindingOpen, CommentID: 10}
	critical := open
	critical.Finding.Severity = review.SeverityCritical
	secret := open
	secret.Finding.Agent = "analyzer:secrets"
	thread := []review.ReviewThread{{ID: "T_other", CommentID: 11}, {ID: "T_10", CommentID: 10}}
	disagree := &task.AnswerResult{Text: "Understood.", Classification: review.ClassDisagree, Cost: review.CostInfo{InputTokens: 7},
		Agent: review.AgentResult{Agent: "answer"}}
	learns := func(instruction string, auto bool) *task.AnswerResult {
		r := *disagree
		r.Classification = review.ClassQuestion
		r.Learning = &review.Learning{Instruction: instruction, Path: "cmd/**"}
		r.Config = config.Repo{Learnings: config.Learnings{AutoActivate: auto}}
		return &r
	}
	answered := func(text string, id int64, c review.Classification) Answered {
		return Answered{Posted: true, Text: text, CommentID: id, Classification: c, Agent: disagree.Agent, Cost: disagree.Cost}
	}
	broken := errors.New("broken")

	tests := map[string]answerCase{
		"asked in the conversation: answered there, no thread read": {
			q: ask, gh: fakeGitHub{AnswerValue: 900}, model: fakeModel{AnswerValue: &task.AnswerResult{Text: "Because.", Agent: disagree.Agent, Cost: disagree.Cost}},
			want: Answered{Posted: true, Text: "Because.", CommentID: 900, Agent: disagree.Agent, Cost: disagree.Cost}, posted: []posted{{Body: "Because."}}, claimedToPost: 1,
		},
		"a writer disagrees: dismissed, thread found by its comment and resolved": {
			q: reply, gh: fakeGitHub{ThreadsValue: thread, ReplyValue: 901, ThreadMessagesValue: []review.ThreadMessage{{ID: 10}, {ID: 20}, {ID: 30}, {ID: 40}}},
			st: fakeStore{FindingOfThreadValue: open, DismissFindingValue: true}, model: fakeModel{AnswerValue: disagree},
			want:   answered("Understood."+DismissedByReply, 901, review.ClassDisagree),
			posted: []posted{{To: 10, Body: "Understood." + DismissedByReply}}, resolved: []string{"T_10"},
			dismissed: []string{"fp1 by ann " + review.DismissedFeedback}, threadAsked: []int64{10, 20}, claimedToPost: 1,
		},
		"a writer disagrees with a critical finding: it stays open": {
			q: reply, gh: fakeGitHub{ThreadsValue: thread, ReplyValue: 902}, st: fakeStore{FindingOfThreadValue: critical, DismissFindingValue: true},
			model: fakeModel{AnswerValue: disagree}, want: answered("Understood."+NotDismissedByReply, 902, review.ClassDisagree),
			posted: []posted{{To: 10, Body: "Understood." + NotDismissedByReply}}, claimedToPost: 1,
		},
		"a writer disagrees with a committed secret: it stays open": {
			q: reply, gh: fakeGitHub{ReplyValue: 903}, st: fakeStore{FindingOfThreadValue: secret, DismissFindingValue: true},
			model: fakeModel{AnswerValue: disagree}, want: answered("Understood."+NotDismissedByReply, 903, review.ClassDisagree),
			posted: []posted{{To: 10, Body: "Understood." + NotDismissedByReply}}, claimedToPost: 1,
		},
		"a reader disagrees: nothing changes": {
			q: func() review.Question { q := reply; q.Writer = false; return q }(), gh: fakeGitHub{ReplyValue: 904},
			st: fakeStore{FindingOfThreadValue: open, DismissFindingValue: true}, model: fakeModel{AnswerValue: disagree},
			want: answered("Understood.", 904, review.ClassDisagree), posted: []posted{{To: 10, Body: "Understood."}}, claimedToPost: 1,
		},
		"a thread that is not a finding's: answered, nothing dismissed": {
			q: reply, gh: fakeGitHub{ReplyValue: 905}, st: fakeStore{FindingOfThreadError: fmt.Errorf("thread: %w", review.ErrNotFound), DismissFindingValue: true},
			model: fakeModel{AnswerValue: disagree}, want: answered("Understood.", 905, review.ClassDisagree),
			posted: []posted{{To: 10, Body: "Understood."}}, claimedToPost: 1,
		},
		"the finding was dismissed meanwhile: no note": {
			q: reply, gh: fakeGitHub{ReplyValue: 906}, st: fakeStore{FindingOfThreadValue: open, DismissFindingValue: false},
			model: fakeModel{AnswerValue: disagree}, want: answered("Understood.", 906, review.ClassDisagree),
			posted: []posted{{To: 10, Body: "Understood."}}, claimedToPost: 1,
		},
		"dismissing fails: a problem, the answer is posted": {
			q: reply, gh: fakeGitHub{ReplyValue: 907}, st: fakeStore{FindingOfThreadValue: open, DismissFindingError: broken},
			model: fakeModel{AnswerValue: disagree}, want: answered("Understood.", 907, review.ClassDisagree),
			problems: []string{"dismiss the finding after feedback: broken"}, posted: []posted{{To: 10, Body: "Understood."}}, claimedToPost: 1,
		},
		"the thread cannot be resolved: dismissed all the same, a problem": {
			q: reply, gh: fakeGitHub{ReplyValue: 908, ThreadsValue: thread[:1]}, st: fakeStore{FindingOfThreadValue: open, DismissFindingValue: true},
			model: fakeModel{AnswerValue: disagree}, want: answered("Understood."+DismissedByReply, 908, review.ClassDisagree),
			problems:  []string{"resolve the dismissed finding's thread: no review thread holds comment 10"},
			dismissed: []string{"fp1 by ann " + review.DismissedFeedback}, posted: []posted{{To: 10, Body: "Understood." + DismissedByReply}}, claimedToPost: 1,
		},
		"a rule in the writer's own words: learned at once where the repository says so": {
			q: reply, gh: fakeGitHub{ReplyValue: 909}, st: fakeStore{FindingOfThreadValue: open},
			model:     fakeModel{AnswerValue: learns("we allow panics in cmd", true)},
			want:      answered("Understood.\n\nLearned for this repository (learning #1), used in later reviews: we allow panics in cmd", 909, review.ClassQuestion),
			posted:    []posted{{To: 10, Body: "Understood.\n\nLearned for this repository (learning #1), used in later reviews: we allow panics in cmd"}},
			learnings: []review.LearningStatus{review.LearningActive}, claimedToPost: 1,
		},
		"a rule the model phrased: proposed only": {
			q: reply, gh: fakeGitHub{ReplyValue: 910}, st: fakeStore{FindingOfThreadValue: open},
			model:     fakeModel{AnswerValue: learns("panics are fine in command packages", true)},
			want:      answered("Understood.\n\nProposed learning #1 for this repository: panics are fine in command packages — a writer confirms it with `/mergeguard learn` in this thread.", 910, review.ClassQuestion),
			posted:    []posted{{To: 10, Body: "Understood.\n\nProposed learning #1 for this repository: panics are fine in command packages — a writer confirms it with `/mergeguard learn` in this thread."}},
			learnings: []review.LearningStatus{review.LearningProposed}, claimedToPost: 1,
		},
		"an invalid learning: not stored, a problem": {
			q: reply, gh: fakeGitHub{ReplyValue: 911}, st: fakeStore{FindingOfThreadValue: open},
			model: fakeModel{AnswerValue: learns("  ", true)}, want: answered("Understood.", 911, review.ClassQuestion),
			problems: []string{"the proposed learning is not valid; not stored: instruction is empty"},
			posted:   []posted{{To: 10, Body: "Understood."}}, claimedToPost: 1,
		},
		"the answer limit, nothing to tell: nothing posted": {
			q: reply, st: fakeStore{FindingOfThreadValue: open}, model: fakeModel{AnswerValue: &task.AnswerResult{Skipped: true, Agent: disagree.Agent}},
			want: Answered{Skipped: "the thread's answer limit is reached", Agent: disagree.Agent},
		},
		"the answer limit with a notice: the notice is posted, no feedback applied": {
			q: reply, gh: fakeGitHub{ReplyValue: 912}, st: fakeStore{FindingOfThreadValue: open, DismissFindingValue: true},
			model:  fakeModel{AnswerValue: &task.AnswerResult{Skipped: true, Notice: "Enough.", Classification: review.ClassDisagree}},
			want:   Answered{Skipped: "the thread's answer limit is reached", Posted: true, Text: "Enough.", CommentID: 912, Classification: review.ClassDisagree},
			posted: []posted{{To: 10, Body: "Enough."}}, claimedToPost: 1,
		},
		"an earlier attempt began posting: not posted again": {
			q: ask, run: fakeRunLog{ClaimPostValue: true}, model: fakeModel{AnswerValue: &task.AnswerResult{Text: "Because."}},
			want: Answered{}, problems: []string{errPostStarted.Error()}, claimedToPost: 1,
		},
		"the ledger cannot be read: the run fails before the model": {
			q: reply, st: fakeStore{FindingOfThreadError: broken}, wantErr: broken,
		},
		"the thread cannot be read: the run fails": {
			q: reply, gh: fakeGitHub{ThreadMessagesError: broken}, st: fakeStore{FindingOfThreadValue: open}, wantErr: broken,
		},
		"the model fails: the run fails, nothing posted": {
			q: ask, model: fakeModel{AnswerError: broken}, wantErr: broken,
		},
		"the reply cannot be posted: the run fails": {
			q: reply, gh: fakeGitHub{ReplyError: broken}, st: fakeStore{FindingOfThreadValue: open},
			model: fakeModel{AnswerValue: &task.AnswerResult{Text: "x"}}, wantErr: broken, claimedToPost: 1,
		},
		"the post cannot be claimed: the run fails": {
			q: ask, run: fakeRunLog{ClaimPostError: broken}, model: fakeModel{AnswerValue: &task.AnswerResult{Text: "x"}}, wantErr: broken, claimedToPost: 1,
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			tt.checkAnswer(t)
		})
	}
}

func (tt *answerCase) checkAnswer(t *testing.T) {
	t.Helper()
	uc := Answering{Model: &tt.model, Conversation: &tt.gh, Feedback: &tt.st, Run: &tt.run}
	got, err := uc.Answer(context.Background(), Asked{PullRequest: PullRequest{Repository: "o/r", Number: 7}, RunID: "run1", Question: tt.q})
	if !errors.Is(err, tt.wantErr) {
		t.Fatalf("Answer error = %v, want %v", err, tt.wantErr)
	}
	var problems []string
	for _, p := range got.Problems {
		problems = append(problems, p.Error())
	}
	got.Problems = nil
	var statuses []review.LearningStatus
	for _, l := range tt.st.Added {
		statuses = append(statuses, l.Status)
		if l.Repository != "o/r" || l.PRNumber != 7 || l.Fingerprint != "fp1" || l.Author != "ann" || l.RunID != "run1" || l.ThreadCommentID != 10 {
			t.Errorf("learning not tied to its thread: %+v", l)
		}
	}
	var asked []int64
	for _, r := range tt.model.Requests {
		for _, m := range r.Thread {
			asked = append(asked, m.ID)
		}
	}
	checkAll(t,
		want{"answered", got, tt.want}, want{"problems", problems, tt.problems}, want{"posted", tt.gh.Posted, tt.posted},
		want{"resolved", tt.gh.Resolved, tt.resolved}, want{"dismissed", tt.st.Dismissed, tt.dismissed},
		want{"learnings", statuses, tt.learnings}, want{"thread given to the model", asked, tt.threadAsked},
		want{"post claims", tt.run.Claims, tt.claimedToPost},
	)
}
