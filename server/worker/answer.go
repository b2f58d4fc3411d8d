package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/pipeline"
	"github.com/mergeguard/mergeguard/server/store"
)

// This file is the job of an answer run (docs/architecture.md): a reply in a
// MergeGuard thread or /mergeguard ask, answered at the pull request's head,
// with a writer's feedback applied to the ledger and learnings.

// Answerer answers questions; *pipeline.Pipeline implements it.
type Answerer interface {
	Answer(ctx context.Context, req pipeline.AnswerRequest) (*pipeline.AnswerResult, error)
}

// answer works on one answer run: gate, answer, post once, apply feedback.
func (p *Pool) answer(ctx context.Context, j *job) (outcome, error) {
	run := j.run
	var q review.Question
	if err := json.Unmarshal(run.Options, &q); err != nil {
		return outcome{}, fmt.Errorf("decode the question: %w", err)
	}
	if out, stop, err := p.gate(ctx, j); stop || err != nil {
		return out, err
	}
	if p.deps.GitHub == nil || p.deps.Answerer == nil {
		return outcome{}, errors.New("no GitHub App or no model is configured")
	}
	repo, err := p.deps.GitHub.Repo(run.InstallationID, run.Repository)
	if err != nil {
		return outcome{}, err
	}
	req, err := p.answerRequest(ctx, j, repo, q)
	if err != nil {
		return outcome{}, err
	}
	res, err := p.deps.Answerer.Answer(ctx, req)
	if err != nil {
		return outcome{}, err
	}
	out := outcome{result: store.Result{Status: store.StatusSucceeded, Model: p.deps.Model, Cost: res.Cost}}
	if res.Agent.Agent != "" {
		out.result.Agents = []review.AgentResult{res.Agent}
	}
	text := res.Text
	if res.Skipped {
		out.result.Status, out.result.Reason = store.StatusSkipped, "the thread's answer limit is reached"
		if res.Notice == "" {
			return out, nil
		}
		text = res.Notice
	} else {
		text += p.applyFeedback(ctx, j, repo, q, req.Finding, res)
	}
	return p.postAnswer(ctx, j, repo, q, text, res, out)
}

// answerRequest gathers what the answer needs: the pull request at its
// head, the thread's finding and messages, and how often MergeGuard
// answered in the thread.
func (p *Pool) answerRequest(ctx context.Context, j *job, repo Repo, q review.Question) (pipeline.AnswerRequest, error) {
	run := j.run
	req := pipeline.AnswerRequest{Source: repo.Source(run.PRNumber), Question: q, Repo: p.cfg.DefaultRepo, Sink: p.sink(j)}
	if q.ThreadCommentID == 0 {
		return req, nil
	}
	e, err := p.deps.Store.FindingOfThread(ctx, run.Repository, run.PRNumber, q.ThreadCommentID)
	switch {
	case err == nil:
		req.Finding = &e
	case !errors.Is(err, store.ErrNotFound):
		return req, err
	}
	if req.Answered, err = p.deps.Store.AnswersInThread(ctx, run.Repository, run.PRNumber, q.ThreadCommentID, run.ID); err != nil {
		return req, err
	}
	msgs, err := repo.ThreadMessages(ctx, run.PRNumber, q.ThreadCommentID)
	if err != nil {
		return req, err
	}
	for _, m := range msgs { // the question itself is asked apart
		if m.ID < q.CommentID { // comment ids grow: these came before
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
func (p *Pool) applyFeedback(ctx context.Context, j *job, repo Repo, q review.Question, e *review.LedgerEntry, res *pipeline.AnswerResult) string {
	if !q.Writer || q.Kind != review.QuestionReply || e == nil {
		return ""
	}
	var note string
	if res.Classification.Dismisses() && e.State == review.FindingOpen {
		note += p.dismissByReply(ctx, j, repo, q, e)
	}
	if l := res.Learning; l != nil {
		note += p.propose(ctx, j, q, e, res, *l)
	}
	return note
}

// Texts an answer adds when a writer's reply reads as dismissing a finding.
const (
	dismissedByReply = "\n\nDismissed on this pull request, because this reply reads as saying the finding is wrong, intended or handled elsewhere: " +
		"MergeGuard will not raise it again here and it no longer blocks. Not what you meant? Unresolve this conversation and the finding is open again."
	notDismissedByReply = "\n\nThis finding stays open: a reply never dismisses a committed secret or a critical finding. " +
		"A writer dismisses it explicitly with `/mergeguard ignore` in this thread, a 👎 on the finding's comment, or in MergeGuard's web UI."
)

// dismissByReply dismisses the thread's finding on a writer's reply the
// model read as disagreement, and resolves its thread, unless the finding
// needs an explicit act of a writer (review.Finding.NeedsExplicitDismissal):
// a model's reading of a reply, which text planted by the pull request can
// steer, never opens the gate on a secret or a critical finding. It returns
// what the answer adds to say so.
func (p *Pool) dismissByReply(ctx context.Context, j *job, repo Repo, q review.Question, e *review.LedgerEntry) string {
	run := j.run
	if e.Finding.NeedsExplicitDismissal() {
		return notDismissedByReply
	}
	ok, err := p.deps.Store.DismissFinding(ctx, run.Repository, run.PRNumber, e.Finding.Fingerprint, q.Author, review.DismissedFeedback)
	switch {
	case err != nil:
		j.log.Warn().Err(err).Msg("dismiss the finding after feedback")
		return ""
	case !ok:
		return ""
	}
	if err := resolveThreadOf(ctx, repo, run.PRNumber, *e); err != nil {
		j.log.Warn().Err(err).Msg("resolve the dismissed finding's thread")
	}
	return dismissedByReply
}

// resolveThreadOf resolves the review thread of ledger entry e, looking
// its node id up by the entry's comment when the ledger has none yet.
func resolveThreadOf(ctx context.Context, repo Repo, number int, e review.LedgerEntry) error {
	id := e.ThreadID
	if id == "" {
		threads, err := repo.Threads(ctx, number)
		if err != nil {
			return err
		}
		for _, t := range threads {
			if t.CommentID == e.CommentID && e.CommentID != 0 {
				id = t.ID
			}
		}
	}
	if id == "" {
		return fmt.Errorf("no review thread holds comment %d", e.CommentID)
	}
	return repo.ResolveThread(ctx, id)
}

// propose stores the learning a writer's reply states. Its glob is
// narrowed to the finding's file when it would not cover that file or
// would cover every file (a writer widens it in the UI). It is active at
// once only when the repository says so and the writer stated it in their
// own words: a learning the model phrased, which text planted by the pull
// request can steer, waits for a writer's `/mergeguard learn`.
func (p *Pool) propose(ctx context.Context, j *job, q review.Question, e *review.LedgerEntry, res *pipeline.AnswerResult, l review.Learning) string {
	run := j.run
	l = l.Clean().ScopedTo(e.Finding.FilePath)
	l.Repository, l.PRNumber, l.ThreadCommentID, l.Fingerprint = run.Repository, run.PRNumber, q.ThreadCommentID, e.Finding.Fingerprint
	l.Author, l.RunID, l.Status = q.Author, run.ID, review.LearningProposed
	if res.Config.Learnings.AutoActivate && review.InOwnWords(l.Instruction, q.Body) {
		l.Status = review.LearningActive
	}
	if err := l.Validate(); err != nil {
		j.log.Info().Err(err).Msg("the proposed learning is not valid; not stored")
		return ""
	}
	stored, err := p.deps.Store.AddLearning(ctx, l)
	if err != nil {
		j.log.Warn().Err(err).Msg("store the proposed learning")
		return ""
	}
	if stored.Status == review.LearningActive {
		return fmt.Sprintf("\n\nLearned for this repository (learning #%d), used in later reviews: %s", stored.ID, stored.Instruction)
	}
	return fmt.Sprintf("\n\nProposed learning #%d for this repository: %s — a writer confirms it with `/mergeguard learn` in this thread.", stored.ID, stored.Instruction)
}

// postAnswer posts the answer once: in the thread, or in the
// conversation for a question asked there. A retried run whose earlier
// attempt began posting does not post again.
func (p *Pool) postAnswer(ctx context.Context, j *job, repo Repo, q review.Question, text string, res *pipeline.AnswerResult, out outcome) (outcome, error) {
	run := j.run
	alreadyStarted, err := p.deps.Store.ClaimPost(ctx, run.ID, j.workerID)
	if err != nil {
		return outcome{}, err
	}
	if alreadyStarted {
		j.log.Warn().Msg("an earlier attempt began posting this answer; not posting it again")
		return out, nil
	}
	var id int64
	if q.ThreadCommentID != 0 {
		id, err = repo.Reply(ctx, run.PRNumber, q.ThreadCommentID, text)
	} else {
		id, err = repo.Answer(ctx, run.PRNumber, text)
	}
	if err != nil {
		return outcome{}, err
	}
	out.result.Answer = &store.Answer{Text: text, CommentID: id, Classification: res.Classification}
	return out, nil
}
