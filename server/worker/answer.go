package worker

import (
	"cmp"
	"context"
	"errors"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/lifecycle"
	"github.com/mergeguard/mergeguard/server/store"
)

// answer works on one answer run (docs/architecture.md): the question is
// answered by lifecycle.Answering; the job records how it ended.
func (p *Pool) answer(ctx context.Context, j *job) (outcome, error) {
	run := j.run
	q, err := run.Question()
	if err != nil {
		return outcome{}, err
	}
	if p.deps.Answerer == nil {
		return outcome{}, errors.New("no model is configured")
	}
	repo, err := p.repo(j)
	if err != nil {
		return outcome{}, err
	}
	uc := lifecycle.Answering{Model: p.deps.Answerer, Admitting: p.admitting(), Conversation: repo, Feedback: p.deps.Store, Run: p.runLog(j),
		Experiments: p.cfg.Experiments}
	a, err := uc.Answer(ctx, lifecycle.Asked{PullRequest: pullOf(run), RunID: run.ID, Question: q, InstallationID: run.InstallationID,
		Automatic: run.Trigger == store.TriggerWebhook, Source: repo.Source(run.PRNumber), Repo: p.cfg.DefaultRepo, Sink: p.sink(j)})
	if err != nil {
		return outcome{}, err
	}
	p.logProblems(j, a.Problems)
	out := outcome{result: store.Result{Status: store.StatusSucceeded, Model: cmp.Or(a.Model, p.deps.Model), Arm: a.Arm, Cost: a.Cost}}
	if a.Agent.Agent != "" {
		out.result.Agents = []review.AgentResult{a.Agent}
	}
	if a.Skipped != "" {
		out.result.Status, out.result.Reason = store.StatusSkipped, a.Skipped
		out.end = lifecycle.End{Ending: lifecycle.EndedSkipped, Reason: a.Skipped, Notice: a.Notice}
	}
	if a.Posted {
		out.result.Answer = &store.Answer{Text: a.Text, CommentID: a.CommentID, Classification: a.Classification}
	}
	return out, nil
}
