package lifecycle

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/task"
)

// TestReviewBeforeTheReview: what Review does before reviewing a head. A
// describe run whose head was reviewed describes from that review and
// leaves the head's check alone; a run not admitted is skipped before any
// GitHub call; the head's check run is started and recorded, and a check
// GitHub refuses is a counted problem, not a failure.
func TestReviewBeforeTheReview(t *testing.T) {
	t.Parallel()
	head := review.PullHead{SHA: "1111111111", BaseSHA: "b1"}
	walk := &review.Walkthrough{Summary: "w"}
	broken := errors.New("broken")
	refused := errors.New("403 Resource not accessible by integration")
	tests := map[string]struct {
		describe bool
		usage    fakeUsage
		gh       fakeGitHub
		st       fakeStore
		run      fakeRunLog
		checkRun int64

		wantErr   error
		want      Outcome
		reviewed  bool
		created   int
		recorded  []int64
		stepError string
	}{
		"described from the head's review: nothing reviewed, the check kept": {describe: true, gh: fakeGitHub{HeadValue: head},
			st:   fakeStore{ReviewOfHeadValue: review.ReviewedHead{RunID: "r0", HeadSHA: head.SHA, Verdict: &review.Verdict{Walkthrough: walk}}},
			want: Outcome{Ending: EndedSkipped, NoCheck: true, Reason: "described the pull request from the walkthrough of run r0, which reviewed this head; nothing reviewed again"}},
		"paused: skipped before any GitHub call": {usage: fakeUsage{PausedValue: true},
			want: Outcome{Ending: EndedSkipped, Reason: "automatic reviews are paused on this pull request (/mergeguard resume restarts them)"}},
		"the pause cannot be read: fails": {usage: fakeUsage{PausedError: broken}, wantErr: broken},
		"admitted: the check started and recorded, then reviewed": {gh: fakeGitHub{HeadValue: head, CreateCheckValue: 55},
			want: Outcome{Ending: EndedSkipped, Reason: "draft"}, reviewed: true, created: 1, recorded: []int64{55}},
		"a retried attempt keeps its check": {checkRun: 55, gh: fakeGitHub{HeadValue: head},
			want: Outcome{Ending: EndedSkipped, Reason: "draft"}, reviewed: true},
		"GitHub refuses the check: a counted problem, reviewed all the same": {gh: fakeGitHub{HeadValue: head, CreateCheckError: refused},
			want: Outcome{Ending: EndedSkipped, Reason: "draft"}, reviewed: true, stepError: StepCheckRun},
		"the check cannot be recorded: a problem": {gh: fakeGitHub{HeadValue: head, CreateCheckValue: 55}, run: fakeRunLog{SetCheckError: broken},
			want: Outcome{Ending: EndedSkipped, Reason: "draft"}, reviewed: true, created: 1, recorded: []int64{55}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			pl := fakePipeline{RunValue: &task.Result{Change: review.Change{HeadSHA: head.SHA}, Skipped: true, SkipReason: "draft"}}
			uc := Reviewing{Pipeline: &pl, Publisher: &tt.gh, Admitting: Admitting{Usage: &tt.usage},
				Preparing: Preparing{Ledger: &tt.st, Conversation: &tt.gh, People: &tt.gh, Commits: &tt.gh},
				Checking:  Checking{Checks: &tt.gh}, Learnings: &tt.st, Run: &tt.run, PostTimeout: time.Minute}
			if tt.describe {
				uc.Describing = &Describing{GitHub: &tt.gh, Reviews: &tt.st}
			}
			got, err := uc.Review(context.Background(), ReviewAsked{PullRequest: PullRequest{Repository: "o/r", Number: 7}, RunID: "run1",
				Queued: head, CheckRunID: tt.checkRun, Automatic: true, ReviewInput: ReviewInput{Source: fakeSource{change: review.Change{HeadSHA: head.SHA, BaseSHA: head.BaseSHA}}}})
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Review error = %v, want %v", err, tt.wantErr)
			}
			var step string
			for _, p := range got.Problems {
				if se, ok := errors.AsType[StepError](p); ok {
					step = se.Step
				}
			}
			checkAll(t, want{"ending", got.Ending, tt.want.Ending}, want{"reason", got.Reason, tt.want.Reason},
				want{"no check", got.NoCheck, tt.want.NoCheck}, want{"reviewed", len(pl.Requests) > 0, tt.reviewed},
				want{"checks created", len(tt.gh.Created), tt.created}, want{"checks recorded", tt.run.Checks, tt.recorded},
				want{"step error", step, tt.stepError})
			if tt.usage.PausedValue && (len(tt.gh.Created) > 0 || len(tt.gh.Published) > 0) {
				t.Errorf("a run not admitted wrote on GitHub")
			}
		})
	}
}

// TestAnswerNotAdmitted: a question on a paused pull request or over the
// installation's budget is skipped before any GitHub call, with the
// budget's notice.
func TestAnswerNotAdmitted(t *testing.T) {
	t.Parallel()
	var gh fakeGitHub
	var model fakeModel
	uc := Answering{Model: &model, Admitting: Admitting{Usage: &fakeUsage{Tokens: 100}, Budgets: config.Budgets{InstallationDailyMaxTokens: 10}},
		Conversation: &gh, Feedback: &fakeStore{}, Run: &fakeRunLog{}}
	got, err := uc.Answer(context.Background(), Asked{PullRequest: PullRequest{Repository: "o/r", Number: 7}, RunID: "a1"})
	if err != nil {
		t.Fatal(err)
	}
	if got.Skipped == "" || got.Notice == "" || got.Posted || len(model.Requests) > 0 || len(gh.Posted) > 0 {
		t.Errorf("over budget: %+v, %d model requests, %d posts; want skipped with a notice, nothing asked or posted", got, len(model.Requests), len(gh.Posted))
	}
}

// TestClose: how a run ended completes its check and posts its notice;
// GitHub's refusals are counted problems.
func TestClose(t *testing.T) {
	t.Parallel()
	blocking := &review.Check{Conclusion: review.ConclusionFailure, Title: "1 blocking"}
	refused := errors.New("refused")
	tests := map[string]struct {
		run   Run
		end   End
		gh    fakeGitHub
		check *review.Check // completed, nil for none
		said  []posted
		steps []string
	}{
		"a posted review: its check": {run: Run{ID: "r", HeadSHA: "h", CheckRunID: 4}, end: End{Ending: EndedSucceeded, Check: blocking},
			check: blocking},
		"skipped before the check: created, with the notice": {run: Run{ID: "r", HeadSHA: "h"},
			end:   End{Ending: EndedSkipped, Reason: "over budget", Notice: "told"},
			check: &review.Check{Conclusion: review.ConclusionNeutral, Title: "Review skipped"}, said: []posted{{Body: "told"}}},
		"failed: the notice is the check's reason": {run: Run{ID: "r", HeadSHA: "h", CheckRunID: 4}, end: End{Ending: EndedFailed, Notice: "boom"},
			check: &review.Check{Conclusion: review.ConclusionFailure, Title: "Review failed"}, said: []posted{{Body: "boom"}}},
		"described from an earlier review: the check kept": {run: Run{ID: "r", HeadSHA: "h", CheckRunID: 4},
			end: End{Ending: EndedSkipped, NoCheck: true}},
		"no head: no check": {run: Run{ID: "r"}, end: End{Ending: EndedFailed}},
		"GitHub refuses both: counted": {run: Run{ID: "r", HeadSHA: "h", CheckRunID: 4}, end: End{Ending: EndedFailed, Notice: "boom"},
			gh: fakeGitHub{UpdateCheckError: refused, AnswerError: refused}, steps: []string{StepCheckRun, StepComment}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			problems := Closing{Checking: Checking{Checks: &tt.gh}, Comments: &tt.gh}.Close(context.Background(), PullRequest{Repository: "o/r", Number: 7}, tt.run, tt.end)
			var steps []string
			for _, p := range problems {
				if se, ok := errors.AsType[StepError](p); ok {
					steps = append(steps, se.Step)
				}
			}
			var got *review.Check
			for _, c := range append(tt.gh.Created, tt.gh.Updated[tt.run.CheckRunID]) {
				if c.Conclusion != "" {
					got = &review.Check{Conclusion: c.Conclusion, Title: c.Title}
				}
			}
			checkAll(t, want{"check", got, tt.check}, want{"said", tt.gh.Posted, tt.said}, want{"steps", steps, tt.steps})
		})
	}
}

// TestUnrecorded: the CLI's review keeps nothing and reads a pull request
// never reviewed: its review is full and posts at once.
func TestUnrecorded(t *testing.T) {
	t.Parallel()
	var none Unrecorded
	ledger, err1 := none.Ledger(context.Background(), "o/r", 1)
	last, err2 := none.LastReview(context.Background(), "o/r", 1, "")
	started, err3 := none.ClaimPost(context.Background())
	if err := errors.Join(err1, err2, err3); err != nil || ledger != nil || started {
		t.Fatalf("Unrecorded: ledger %v, claimed before %v, %v", ledger, started, err)
	}
	if got := FullReason(last, Head{SHA: "h", BaseSHA: "b"}, false); got != ReasonFirst {
		t.Errorf("the scope of an unrecorded review = %q, want %q", got, ReasonFirst)
	}
	if diff := cmp.Diff(review.LastReview{}, last); diff != "" {
		t.Errorf("LastReview (-want +got):\n%s", diff)
	}
}
