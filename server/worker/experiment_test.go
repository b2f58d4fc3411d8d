package worker_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/review/experiment"
	"github.com/mergeguard/mergeguard/server/store"
)

// TestExperimentArmReviewsItsPullRequest: with an experiment arm taking
// every pull request, the pull request's review asks the arm's model in
// every LLM request (the fake records each request's model), the run
// records the arm, its model and prompt version, and once the pull
// request is merged its model's findings' source is the arm's model and
// prompt version, their arm the arm.
func TestExperimentArmReviewsItsPullRequest(t *testing.T) {
	t.Parallel()
	arms := []config.Experiment{{Name: "big", Model: "gpt-4.1", Share: 1}}
	if got := experiment.Choose(arms, repoFull, prNumber); got != "big" {
		t.Fatalf("the arm of %s#%d is %s, want big", repoFull, prNumber, got)
	}
	e := newEnv(t, reviewer)
	e.gh.AddPR(standardPR(fixtureSHA))
	e.opened("d-1", fixtureSHA)
	cfg := e.options()
	cfg.Experiments = arms
	e.start(e.store, cfg, e.pipelineWith(func(c *config.LLM) { c.Experiments = arms }))

	run := e.waitDone(1)[0]
	if run.Status != store.StatusSucceeded {
		t.Fatalf("run: %s (%s), want succeeded", run.Status, run.Error)
	}
	models := map[string]int{}
	for _, r := range e.llm.Requests() {
		models[r.Model]++
	}
	if len(models) != 1 || models["gpt-4.1"] == 0 {
		t.Errorf("the LLM was asked for models %v, want gpt-4.1 only", models)
	}
	var got [3]string
	if err := e.raw.QueryRow(t.Context(), `SELECT arm, model, prompt_version FROM review_runs WHERE id = $1`, run.ID).Scan(&got[0], &got[1], &got[2]); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([3]string{"big", "gpt-4.1", "prompt-v1"}, got); diff != "" {
		t.Errorf("the run's arm, model and prompt version (-want +got):\n%s", diff)
	}

	d := store.Delivery{ID: "d-close", Event: "pull_request", Action: "closed", InstallationID: 1, Repository: repoFull}
	if _, err := e.store.ClosePullRequest(t.Context(), d, store.Closing{Number: prNumber, Merged: true, At: time.Now()}); err != nil {
		t.Fatal(err)
	}
	rows, err := e.raw.Query(t.Context(), `SELECT finding->>'title', outcome_source, outcome_arm FROM pr_findings
		WHERE repository = $1 AND pr_number = $2 AND finding->>'agent' NOT LIKE 'analyzer:%' ORDER BY 1`, repoFull, prNumber)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	sources := map[string][2]string{}
	for rows.Next() {
		var title, source, arm string
		if err := rows.Scan(&title, &source, &arm); err != nil {
			t.Fatal(err)
		}
		sources[title] = [2]string{source, arm}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	want := map[string][2]string{"SQL injection": {"gpt-4.1@prompt-v1", "big"}, "Division by zero": {"gpt-4.1@prompt-v1", "big"}}
	if diff := cmp.Diff(want, sources); diff != "" {
		t.Errorf("the model's findings' source and arm (-want +got):\n%s", diff)
	}
}
