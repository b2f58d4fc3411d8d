package lifecycle

import (
	"context"
	"errors"
	"fmt"

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/experiment"
	"github.com/mergeguard/mergeguard/review/task"
)

// This file is answering a question (docs/architecture.md, The life of a
// pull request): a reply in a MergeGuard thread or /mergeguard ask,
// answered at the pull request's head, posted once, with a writer's
// feedback applied to the ledger and the learnings.

// Answerer answers questions; *pipeline.Pipeline implements it.
type Answerer interface {
	Answer(ctx context.Context, req task.AnswerRequest) (*task.AnswerResult, error)
}

// Threads are the pull request's review threads on GitHub; *github.Repo
// implements it.
type Threads interface {
	Threads(ctx context.Context, number int) ([]review.ReviewThread, error)
	ResolveThread(ctx context.Context, threadID string) error
}

// Conversation is what an answer reads and writes of the pull request's
// comments on GitHub: its threads, a reply in one, a comment in the
// conversation; *github.Repo implements it.
type Conversation interface {
	Threads
	ThreadMessages(ctx context.Context, number int, threadCommentID int64) ([]review.ThreadMessage, error)
	Reply(ctx context.Context, number int, commentID int64, body string) (int64, error)
	Answer(ctx context.Context, number int, body string) (int64, error)
}

// Feedback is the pull request's finding ledger and the repository's
// learnings, as a person's reply changes them; the store implements it.
type Feedback interface {
	// FindingOfThread is the ledger entry of the MergeGuard thread whose
	// first comment is commentID: review.ErrNotFound when there is none.
	FindingOfThread(ctx context.Context, repo string, number int, commentID int64) (review.LedgerEntry, error)
	// AnswersInThread counts MergeGuard's answers in the thread, the
	// run except's own aside.
	AnswersInThread(ctx context.Context, repo string, number int, threadCommentID int64, except string) (int, error)
	// DismissFinding dismisses an open finding; false when it was not
	// open.
	DismissFinding(ctx context.Context, repo string, number int, fingerprint, by, how string) (bool, error)
	AddLearning(ctx context.Context, l review.Learning) (review.Learning, error)
}

// RunLog is the record of the run being worked on.
type RunLog interface {
	// ClaimPost marks the run as posting; alreadyStarted is true when an
	// earlier attempt of the run did. Its error wraps ErrCancelled when
	// the run was cancelled before.
	ClaimPost(ctx context.Context) (alreadyStarted bool, err error)
	// SetHead records the revision the run reviews.
	SetHead(ctx context.Context, head review.PullHead) error
	// SetCheck records the check run the run reports to, for its retried
	// attempts and its end.
	SetCheck(ctx context.Context, checkRunID int64) error
}

// PullRequest names a pull request.
type PullRequest struct {
	Repository string
	Number     int
}

// Asked is a question to answer on a pull request.
type Asked struct {
	PullRequest
	// RunID is the answer run: its own earlier attempts are not counted
	// as answers in the thread.
	RunID    string
	Question review.Question
	// InstallationID is the installation the run spends for; Automatic is
	// set for a run a webhook queued, which a pause stops.
	InstallationID int64
	Automatic      bool
	// Source is the pull request at its head.
	Source review.Source
	// Repo is the default repository configuration .mergeguard.yml is
	// read over.
	Repo config.Repo
	Sink review.Sink
}

// Answered is how answering a question ended.
type Answered struct {
	// Skipped says why no answer was given (the thread's answer limit,
	// the run not admitted), "" when one was; Notice is what the pull
	// request is told of it.
	Skipped, Notice string
	// Posted is set when the text was posted, as comment CommentID.
	Posted    bool
	Text      string
	CommentID int64
	// Classification is how the model read the reply.
	Classification review.Classification
	Agent          review.AgentResult
	Cost           review.CostInfo
	// Arm names the experiment arm that answered and Model its model
	// (task.AnswerResult); "" when the model was not asked.
	Arm, Model string
	// Problems are the best-effort steps that failed; the answer went on
	// without them.
	Problems []error
}

// Answering is the use case of answering a question, with the roles it
// needs.
type Answering struct {
	Model Answerer
	// Experiments are the arms of a model comparison (llm.experiments):
	// the pull request's arm (experiment.Choose) answers, as it reviews.
	Experiments []config.Experiment
	// Admitting admits the run before any GitHub call.
	Admitting    Admitting
	Conversation Conversation
	Feedback     Feedback
	Run          RunLog
}

// Answer answers a question: it gathers the thread, asks the model,
// applies a writer's feedback and posts the answer once, in the thread or
// in the conversation for a question asked there. A retried run whose
// earlier attempt began posting does not post again.
func (a Answering) Answer(ctx context.Context, q Asked) (Answered, error) {
	adm, err := a.Admitting.Admit(ctx, q.PullRequest, q.InstallationID, q.Automatic)
	if err != nil || adm.Skip != "" {
		return Answered{Skipped: adm.Skip, Notice: adm.Notice}, err
	}
	req, err := a.request(ctx, q)
	if err != nil {
		return Answered{}, err
	}
	res, err := a.Model.Answer(ctx, req)
	if err != nil {
		return Answered{}, err
	}
	out := Answered{Classification: res.Classification, Agent: res.Agent, Cost: res.Cost, Arm: res.Arm, Model: res.Model}
	text := res.Text
	if res.Skipped {
		out.Skipped = "the thread's answer limit is reached"
		if res.Notice == "" {
			return out, nil
		}
		text = res.Notice
	} else {
		text += a.applyFeedback(ctx, q, req.Finding, res, &out)
	}
	return a.post(ctx, q, text, out)
}

// request gathers what the answer needs: the pull request at its head,
// the thread's finding and messages, and how often MergeGuard answered in
// the thread.
func (a Answering) request(ctx context.Context, q Asked) (task.AnswerRequest, error) {
	qq := q.Question
	req := task.AnswerRequest{Source: q.Source, Question: qq, Repo: q.Repo, Sink: q.Sink,
		Arm: experiment.Choose(a.Experiments, q.Repository, q.Number)}
	if qq.ThreadCommentID == 0 {
		return req, nil
	}
	e, err := a.Feedback.FindingOfThread(ctx, q.Repository, q.Number, qq.ThreadCommentID)
	switch {
	case err == nil:
		req.Finding = &e
	case !errors.Is(err, review.ErrNotFound):
		return req, err
	}
	if req.Answered, err = a.Feedback.AnswersInThread(ctx, q.Repository, q.Number, qq.ThreadCommentID, q.RunID); err != nil {
		return req, err
	}
	msgs, err := a.Conversation.ThreadMessages(ctx, q.Number, qq.ThreadCommentID)
	if err != nil {
		return req, err
	}
	for _, m := range msgs { // the question itself is asked apart
		if m.ID < qq.CommentID { // comment ids grow: these came before
			req.Thread = append(req.Thread, m)
		}
	}
	return req, nil
}

// applyFeedback applies a writer's reply in a finding's thread: a reply
// saying the finding is wrong, intended or handled elsewhere dismisses it
// (and resolves the thread); a rule it states becomes a learning. A
// reader's reply changes nothing. It returns what the answer adds to say
// so.
func (a Answering) applyFeedback(ctx context.Context, q Asked, e *review.LedgerEntry, res *task.AnswerResult, out *Answered) string {
	if !q.Question.Writer || q.Question.Kind != review.QuestionReply || e == nil {
		return ""
	}
	var note string
	if res.Classification.Dismisses() && e.State == review.FindingOpen {
		note += a.dismissByReply(ctx, q, e, out)
	}
	if l := res.Learning; l != nil {
		note += a.propose(ctx, q, e, res, *l, out)
	}
	return note
}

// Texts an answer adds when a writer's reply reads as dismissing a finding.
const (
	DismissedByReply = "\n\nDismissed on this pull request, because this reply reads as saying the finding is wrong, intended or handled elsewhere: " +
		"MergeGuard will not raise it again here and it no longer blocks. Not what you meant? Unresolve this conversation and the finding is open again."
	NotDismissedByReply = "\n\nThis finding stays open: a reply never dismisses a committed secret or a critical finding. " +
		"A writer dismisses it explicitly with `/mergeguard ignore` in this thread, a 👎 on the finding's comment, or in MergeGuard's web UI."
)

// dismissByReply dismisses the thread's finding on a writer's reply the
// model read as disagreement, and resolves its thread, unless the finding
// needs an explicit act of a writer (review.Finding.NeedsExplicitDismissal):
// a model's reading of a reply, which text planted by the pull request can
// steer, never opens the gate on a secret or a critical finding. It returns
// what the answer adds to say so.
func (a Answering) dismissByReply(ctx context.Context, q Asked, e *review.LedgerEntry, out *Answered) string {
	if e.Finding.NeedsExplicitDismissal() {
		return NotDismissedByReply
	}
	ok, err := a.Feedback.DismissFinding(ctx, q.Repository, q.Number, e.Finding.Fingerprint, q.Question.Author, review.DismissedFeedback)
	switch {
	case err != nil:
		out.Problems = append(out.Problems, fmt.Errorf("dismiss the finding after feedback: %w", err))
		return ""
	case !ok:
		return ""
	}
	if err := ResolveThreadOf(ctx, a.Conversation, q.Number, *e); err != nil {
		out.Problems = append(out.Problems, fmt.Errorf("resolve the dismissed finding's thread: %w", err))
	}
	return DismissedByReply
}

// ResolveThreadOf resolves the review thread of ledger entry e, looking
// its node id up by the entry's comment when the ledger has none yet.
func ResolveThreadOf(ctx context.Context, threads Threads, number int, e review.LedgerEntry) error {
	id := e.ThreadID
	if id == "" {
		all, err := threads.Threads(ctx, number)
		if err != nil {
			return err
		}
		for _, t := range all {
			if t.CommentID == e.CommentID && e.CommentID != 0 {
				id = t.ID
			}
		}
	}
	if id == "" {
		return fmt.Errorf("no review thread holds comment %d", e.CommentID)
	}
	return threads.ResolveThread(ctx, id)
}

// propose stores the learning a writer's reply states. Its glob is
// narrowed to the finding's file when it would not cover that file or
// would cover every file (a writer widens it in the UI). It is active at
// once only when the repository says so and the writer stated it in their
// own words: a learning the model phrased, which text planted by the pull
// request can steer, waits for a writer's `/mergeguard learn`.
func (a Answering) propose(ctx context.Context, q Asked, e *review.LedgerEntry, res *task.AnswerResult, l review.Learning, out *Answered) string {
	qq := q.Question
	l = l.Clean().ScopedTo(e.Finding.FilePath)
	l.Repository, l.PRNumber, l.ThreadCommentID, l.Fingerprint = q.Repository, q.Number, qq.ThreadCommentID, e.Finding.Fingerprint
	l.Author, l.RunID, l.Status = qq.Author, q.RunID, review.LearningProposed
	if res.Config.Learnings.AutoActivate && review.InOwnWords(l.Instruction, qq.Body) {
		l.Status = review.LearningActive
	}
	if err := l.Validate(); err != nil {
		out.Problems = append(out.Problems, fmt.Errorf("the proposed learning is not valid; not stored: %w", err))
		return ""
	}
	stored, err := a.Feedback.AddLearning(ctx, l)
	if err != nil {
		out.Problems = append(out.Problems, fmt.Errorf("store the proposed learning: %w", err))
		return ""
	}
	if stored.Status == review.LearningActive {
		return fmt.Sprintf("\n\nLearned for this repository (learning #%d), used in later reviews: %s", stored.ID, stored.Instruction)
	}
	return fmt.Sprintf("\n\nProposed learning #%d for this repository: %s — a writer confirms it with `/mergeguard learn` in this thread.", stored.ID, stored.Instruction)
}

// errPostStarted is the problem of a retried run whose earlier attempt
// began posting.
var errPostStarted = errors.New("an earlier attempt began posting this answer; not posting it again")

// post posts the answer once: in the thread, or in the conversation for a
// question asked there.
func (a Answering) post(ctx context.Context, q Asked, text string, out Answered) (Answered, error) {
	alreadyStarted, err := a.Run.ClaimPost(ctx)
	if err != nil {
		return Answered{}, err
	}
	if alreadyStarted {
		out.Problems = append(out.Problems, errPostStarted)
		return out, nil
	}
	var id int64
	if q.Question.ThreadCommentID != 0 {
		id, err = a.Conversation.Reply(ctx, q.Number, q.Question.ThreadCommentID, text)
	} else {
		id, err = a.Conversation.Answer(ctx, q.Number, text)
	}
	if err != nil {
		return Answered{}, err
	}
	out.Posted, out.Text, out.CommentID = true, text, id
	return out, nil
}
