package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/lifecycle"
	"github.com/mergeguard/mergeguard/server/store"
)

// This file is the job of an answer run (docs/architecture.md): the
// question is answered by lifecycle.Answering; the job gates it and
// records how it ended.

// answer works on one answer run: gate, answer (lifecycle), record.
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
	uc := lifecycle.Answering{Model: p.deps.Answerer, Conversation: repo, Feedback: ledger{p.deps.Store}, Run: p.runLog(j)}
	a, err := uc.Answer(ctx, lifecycle.Asked{PullRequest: pullOf(run), RunID: run.ID, Question: q,
		Source: repo.Source(run.PRNumber), Repo: p.cfg.DefaultRepo, Sink: p.sink(j)})
	if err != nil {
		return outcome{}, err
	}
	logProblems(j, a.Problems)
	out := outcome{result: store.Result{Status: store.StatusSucceeded, Model: p.deps.Model, Cost: a.Cost}}
	if a.Agent.Agent != "" {
		out.result.Agents = []review.AgentResult{a.Agent}
	}
	if a.Skipped != "" {
		out.result.Status, out.result.Reason = store.StatusSkipped, a.Skipped
	}
	if a.Posted {
		out.result.Answer = &store.Answer{Text: a.Text, CommentID: a.CommentID, Classification: a.Classification}
	}
	return out, nil
}
