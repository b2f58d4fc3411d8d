package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/task"
)

// reviewCase is one head reviewed over fakes, and what it must leave.
type reviewCase struct {
	queued      review.PullHead
	lastAttempt bool
	describe    bool
	gh          fakeGitHub
	st          fakeStore
	run         fakeRunLog
	pl          fakePipeline

	wantErr    error
	ending     Ending
	reason     string
	notice     string
	published  int
	followUp   bool // the post reads as a follow-up
	placements []string
	recorded   []review.PullHead
	problems   int
	described  int
	healed     bool
}

// TestReview: a head is reviewed and its review posted once; a head that
// moved before or during the review, or a run cancelled before posting, is
// superseded and posts nothing; a skipped review posts nothing; a review
// whose model stays unavailable is retried, and on the last attempt the
// analyzers' findings are posted and the run still fails; a placement of
// a finding the run does not store is dropped.
func TestReview(t *testing.T) {
	t.Parallel()
	const h1, h2 = "1111111111", "2222222222"
	change := review.Change{HeadSHA: h1, BaseSHA: "b1", HeadRef: "topic"}
	queued := change.PullHead()
	finding := review.Finding{Fingerprint: "fp1", FilePath: "a.go", Severity: review.SeverityWarning}
	found := func(mod func(*task.Result)) *task.Result {
		r := &task.Result{Change: change, Config: config.DefaultRepo(), Notice: "budget note",
			Verdict: review.Verdict{Files: []review.FileReview{{FilePath: "a.go", Findings: []review.Finding{finding}}}}}
		r.Ledger.Changed = []review.LedgerEntry{{Finding: finding, State: review.FindingOpen}}
		if mod != nil {
			mod(r)
		}
		return r
	}
	gh := func(mod func(*fakeGitHub)) fakeGitHub {
		g := fakeGitHub{HeadValue: queued, PublishValue: review.Posted{ReviewID: 9, Placements: map[string]review.Placement{
			"fp1": {Where: "inline", CommentID: 77}, "stranger": {Where: "body"}}}}
		if mod != nil {
			mod(&g)
		}
		return g
	}
	reviewed := review.LastReview{Found: true, Succeeded: true, KeptLedger: true, HeadSHA: "h0", BaseSHA: "b1"}
	unavailable := fmt.Errorf("model: %w", task.ErrLLMUnavailable)
	broken := errors.New("broken")
	tests := map[string]reviewCase{
		"a first review: posted once, placements kept": {queued: queued, gh: gh(nil), pl: fakePipeline{RunValue: found(nil)},
			ending: EndedSucceeded, notice: "budget note", published: 1, placements: []string{"fp1"}, problems: 1},
		"reviewed before: the body follows up": {queued: queued, gh: gh(func(g *fakeGitHub) { g.CompareError = errors.New("x") }),
			st: fakeStore{LastReviewValue: reviewed}, pl: fakePipeline{RunValue: found(nil)},
			ending: EndedSucceeded, notice: "budget note", published: 1, followUp: true, placements: []string{"fp1"}, problems: 2},
		"a writer resolved a thread since: the ledger is healed first": {queued: queued, pl: fakePipeline{RunValue: found(nil)},
			gh: gh(func(g *fakeGitHub) {
				g.CanWriteValue = map[string]bool{"ann": true}
				g.ThreadsValue = []review.ReviewThread{{ID: "T1", CommentID: 5, Resolved: true, ResolvedBy: "ann"}}
			}),
			st:     fakeStore{LedgerValue: []review.LedgerEntry{{Finding: review.Finding{Fingerprint: "old"}, State: review.FindingOpen, CommentID: 5}}, ApplyThreadValue: true},
			ending: EndedSucceeded, notice: "budget note", published: 1, placements: []string{"fp1"}, problems: 1, healed: true},
		"queued without a head: the head found is recorded": {gh: gh(nil), pl: fakePipeline{RunValue: found(nil)},
			ending: EndedSucceeded, notice: "budget note", published: 1, placements: []string{"fp1"}, recorded: []review.PullHead{queued}, problems: 1},
		"the head moved before the review: superseded": {queued: review.PullHead{SHA: h2}, gh: gh(nil), pl: fakePipeline{RunValue: found(nil)},
			ending: EndedSuperseded, reason: "the head moved from 2222222 to 1111111 before the review started"},
		"the head moved during the review: superseded": {queued: queued, gh: gh(func(g *fakeGitHub) { g.HeadValue.SHA = h2 }),
			pl: fakePipeline{RunValue: found(nil)}, ending: EndedSuperseded, reason: "the head moved from 1111111 to 2222222 during the review"},
		"cancelled before posting: superseded": {queued: queued, gh: gh(nil), run: fakeRunLog{ClaimPostError: fmt.Errorf("x: %w", ErrCancelled)},
			pl: fakePipeline{RunValue: found(nil)}, ending: EndedSuperseded, reason: "a newer head was pushed before the review was posted"},
		"an earlier attempt began posting: Publish finds it": {queued: queued, gh: gh(nil), run: fakeRunLog{ClaimPostValue: true},
			pl: fakePipeline{RunValue: found(nil)}, ending: EndedSucceeded, notice: "budget note", published: 1, placements: []string{"fp1"}, problems: 2},
		"skipped: nothing posted": {queued: queued, gh: gh(nil), pl: fakePipeline{RunValue: found(func(r *task.Result) { r.Skipped, r.SkipReason, r.Notice = true, "draft", "" })},
			ending: EndedSkipped, reason: "draft"},
		"skipped while asked to describe: told": {queued: queued, describe: true, gh: gh(nil),
			pl:     fakePipeline{RunValue: found(func(r *task.Result) { r.Skipped, r.SkipReason, r.Notice = true, "draft", "" })},
			ending: EndedSkipped, reason: "draft", notice: NoReviewToDescribe},
		"asked to describe: described after posting": {queued: queued, describe: true, gh: gh(nil),
			pl:     fakePipeline{RunValue: found(func(r *task.Result) { r.Verdict.Walkthrough = &review.Walkthrough{Summary: "s"} })},
			ending: EndedSucceeded, notice: "budget note", published: 1, placements: []string{"fp1"}, problems: 1, described: 1},
		"the model is unavailable: tried again": {queued: queued, gh: gh(nil), pl: fakePipeline{RunValue: found(nil), RunError: unavailable},
			wantErr: task.ErrLLMUnavailable},
		"the model stays unavailable: the analyzers' review is posted, the run fails": {queued: queued, lastAttempt: true, gh: gh(nil),
			pl: fakePipeline{RunValue: found(nil), RunError: unavailable}, wantErr: AnalyzersPostedError{},
			ending: EndedSucceeded, notice: "budget note", published: 1, placements: []string{"fp1"}, problems: 1},
		"the model stays unavailable, nothing found: the run fails": {queued: queued, lastAttempt: true, gh: gh(nil),
			pl: fakePipeline{RunValue: found(func(r *task.Result) { r.Verdict.Files = nil }), RunError: unavailable}, wantErr: task.ErrLLMUnavailable},
		"GitHub refuses the review: the run fails": {queued: queued, gh: gh(func(g *fakeGitHub) { g.PublishError = broken }),
			pl: fakePipeline{RunValue: found(nil)}, wantErr: PublishError{}},
		"an earlier review could not be dismissed: posted all the same": {queued: queued, gh: gh(func(g *fakeGitHub) { g.PublishError = review.ErrDismiss }),
			pl: fakePipeline{RunValue: found(nil)}, ending: EndedSucceeded, notice: "budget note", published: 1, placements: []string{"fp1"}, problems: 2},
		"the pipeline fails: the run fails":       {queued: queued, gh: gh(nil), pl: fakePipeline{RunValue: found(nil), RunError: broken}, wantErr: broken},
		"learnings cannot be read: the run fails": {queued: queued, gh: gh(nil), st: fakeStore{LearningsError: broken}, wantErr: broken},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			tt.checkReview(t)
		})
	}
}

func (tt *reviewCase) checkReview(t *testing.T) {
	t.Helper()
	uc := Reviewing{Pipeline: &tt.pl, Publisher: &tt.gh, Preparing: Preparing{Ledger: &tt.st, Conversation: &tt.gh, People: &tt.gh, Commits: &tt.gh},
		Checking: Checking{Checks: &tt.gh}, Learnings: &tt.st, Run: &tt.run, PostTimeout: time.Minute}
	if tt.describe {
		uc.Describing = &Describing{GitHub: &tt.gh, Reviews: &tt.st}
	}
	src := fakeSource{change: review.Change{HeadSHA: "1111111111", BaseSHA: "b1", HeadRef: "topic"}}
	got, err := uc.Review(context.Background(), ReviewAsked{PullRequest: PullRequest{Repository: "o/r", Number: 7}, RunID: "run1",
		Queued: tt.queued, ReviewInput: ReviewInput{Source: src}, LastAttempt: tt.lastAttempt})
	if !errorIs(err, tt.wantErr) {
		t.Fatalf("Review error = %v, want %T", err, tt.wantErr)
	}
	if len(got.Problems) != tt.problems {
		t.Errorf("problems %v, want %d", got.Problems, tt.problems)
	}
	var placed []string
	if got.Posted != nil {
		for fp := range got.Posted.Placements {
			placed = append(placed, fp)
		}
	}
	followUp := len(tt.gh.Published) > 0 && tt.gh.Published[0].FollowUp != nil
	checkAll(t,
		want{"ending", got.Ending, tt.ending}, want{"reason", got.Reason, tt.reason}, want{"notice", got.Notice, tt.notice},
		want{"reviews published", len(tt.gh.Published), tt.published}, want{"follow-up", followUp, tt.followUp},
		want{"placements", placed, tt.placements}, want{"heads recorded", tt.run.Heads, tt.recorded},
		want{"descriptions", len(tt.gh.Described), tt.described}, want{"healed", got.Healed, tt.healed},
	)
	if got.Ending == EndedSucceeded && (got.Check == nil || got.Check.Conclusion != review.ConclusionSuccess || got.Ledger[0].CommentID != 77) {
		t.Errorf("a posted review's check %+v, ledger %+v; want success, the finding's comment 77", got.Check, got.Ledger)
	}
}

// errorIs is errors.Is, and errors.As for the error types.
func errorIs(err, target error) bool {
	var posted AnalyzersPostedError
	if errors.As(target, &posted) {
		return errors.As(err, &posted) && errors.Is(err, task.ErrLLMUnavailable)
	}
	var refused PublishError
	if errors.As(target, &refused) {
		return errors.As(err, &refused)
	}
	return errors.Is(err, target)
}
