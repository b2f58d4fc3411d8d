package lifecycle

import (
	"context"
	"testing"
	"time"

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/task"
)

// TestEveryRunOfAPullRequestHasItsArm: with an experiment reviewing half
// the pull requests, every review of a pull request (three pushes) and
// its answer ask the pipeline for the same arm, so no pull request is
// reviewed by two arms; 100 pull requests are split within 0.10 of the
// share.
func TestEveryRunOfAPullRequestHasItsArm(t *testing.T) {
	t.Parallel()
	arms := []config.Experiment{{Name: "big", Model: "gpt-4o", Share: 0.5}}
	const prs, pushes = 100, 3
	count := map[string]int{}
	for number := 1; number <= prs; number++ {
		seen := map[string]bool{}
		for push := range pushes {
			head := review.Change{HeadSHA: string(rune('a'+push)) + "111111111", BaseSHA: "b1", HeadRef: "topic"}
			pl := fakePipeline{RunValue: &task.Result{Change: head, Config: config.DefaultRepo(), Skipped: true, SkipReason: "draft"}}
			var gh fakeGitHub
			var st fakeStore
			uc := Reviewing{Pipeline: &pl, Publisher: &gh, Preparing: Preparing{Ledger: &st, Conversation: &gh, People: &gh, Commits: &gh},
				Checking: Checking{Checks: &gh}, Learnings: &st, Run: &fakeRunLog{}, PostTimeout: time.Minute, Experiments: arms}
			if _, err := uc.Review(context.Background(), ReviewAsked{PullRequest: PullRequest{Repository: "acme/shop", Number: number},
				RunID: "run1", Queued: head.PullHead(), ReviewInput: ReviewInput{Source: fakeSource{change: head}}}); err != nil {
				t.Fatal(err)
			}
			for _, req := range pl.Requests {
				seen[req.Arm] = true
			}
		}
		model := fakeModel{AnswerValue: &task.AnswerResult{Text: "Because."}}
		uc := Answering{Model: &model, Conversation: &fakeGitHub{}, Feedback: &fakeStore{}, Run: &fakeRunLog{}, Experiments: arms}
		if _, err := uc.Answer(context.Background(), Asked{PullRequest: PullRequest{Repository: "acme/shop", Number: number},
			RunID: "run2", Question: review.Question{Kind: review.QuestionAsk, Body: "why?"}}); err != nil {
			t.Fatal(err)
		}
		for _, req := range model.Requests {
			seen[req.Arm] = true
		}
		if len(seen) != 1 {
			t.Fatalf("#%d was reviewed and answered by arms %v", number, seen)
		}
		for arm := range seen {
			count[arm]++
		}
	}
	if f := float64(count["big"]) / prs; f < 0.4 || f > 0.6 {
		t.Errorf("arm big reviewed %v of the pull requests (%v), want 0.5 ± 0.10", f, count)
	}
	if count["big"]+count[config.DefaultArm] != prs {
		t.Errorf("arms %v, want big and default only", count)
	}
}
