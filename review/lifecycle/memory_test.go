package lifecycle

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/memory"
	"github.com/mergeguard/mergeguard/review/task"
)

// TestReviewSuppresses: prepare reads the repository's dismissals and
// revivals (at most memory.dismissals) into the pipeline's history; the
// finding the pipeline left out for them is not in the post, the body's
// notes count it, and it is recorded as suppressed with its matches once
// the review is posted. Reading or recording failing is a problem: the
// review is posted all the same (suppressing nothing when the memory
// cannot be read).
func TestReviewSuppresses(t *testing.T) {
	t.Parallel()
	const head = "1111111111"
	change := review.Change{HeadSHA: head, BaseSHA: "b1", HeadRef: "topic"}
	nit := func(fp, name string) review.Finding {
		return review.Finding{Fingerprint: fp, FilePath: "a.go", Severity: review.SeverityStyle, Category: review.CategoryQuality,
			Title: "Error string should not be capitalized", Description: "Lowercase the error returned by " + name + "."}
	}
	real := review.Finding{Fingerprint: "real", FilePath: "a.go", Severity: review.SeverityWarning, Category: review.CategoryBug,
		Title: "Possible nil pointer dereference"}
	at := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	var dismissals []memory.Dismissal
	for i, name := range []string{"loadUser", "saveOrder", "readFile"} {
		dismissals = append(dismissals, memory.Dismissal{PRNumber: i + 1, Fingerprint: "d" + name, Finding: nit("d"+name, name),
			By: "ann", How: review.DismissedCommand, At: at.Add(time.Duration(i) * time.Minute), CommentID: int64(10 + i)})
	}
	newNit := nit("new-nit", "checkToken")
	suppressed := []memory.Suppressed{{Finding: newNit, Matches: []memory.Match{{PRNumber: 1, Fingerprint: "dloadUser", By: "ann", How: review.DismissedCommand, Similarity: 1}}}}
	result := func() *task.Result {
		r := &task.Result{Change: change, Config: config.DefaultRepo(), Suppressed: suppressed,
			Verdict: review.Verdict{Notes: []string{memory.Note(1)}, Files: []review.FileReview{{FilePath: "a.go", Findings: []review.Finding{real}}}}}
		r.Ledger.Changed = []review.LedgerEntry{{Finding: real, State: review.FindingOpen}}
		return r
	}
	broken := errors.New("broken")
	tests := map[string]struct {
		st           fakeStore
		wantMemory   bool // the pipeline was given a memory that matches the new nit 3 times
		wantRecorded int
		problems     int
	}{
		"suppressed and recorded":         {st: fakeStore{DismissalsValue: dismissals}, wantMemory: true, wantRecorded: 1},
		"no dismissals: no memory":        {st: fakeStore{}, wantRecorded: 1},
		"dismissals unreadable":           {st: fakeStore{DismissalsError: broken}, wantRecorded: 1, problems: 1},
		"revivals unreadable":             {st: fakeStore{DismissalsValue: dismissals, RevivalsError: broken}, wantRecorded: 1, problems: 1},
		"the suppression is not recorded": {st: fakeStore{DismissalsValue: dismissals, RecordSuppressError: broken}, wantMemory: true, problems: 1},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			gh := fakeGitHub{HeadValue: change.PullHead(), PublishValue: review.Posted{ReviewID: 9}}
			pl := fakePipeline{RunValue: result()}
			uc := Reviewing{Pipeline: &pl, Publisher: &gh, Checking: Checking{Checks: &gh}, Learnings: &tt.st, Run: &fakeRunLog{}, PostTimeout: time.Minute,
				Preparing: Preparing{Ledger: &tt.st, Conversation: &gh, People: &gh, Commits: &gh, Memory: &tt.st, MemoryLimit: 250}}
			got, err := uc.Review(context.Background(), ReviewAsked{PullRequest: PullRequest{Repository: "o/r", Number: 7}, RunID: "run1",
				Queued: change.PullHead(), ReviewInput: ReviewInput{Source: fakeSource{change: change}}})
			if err != nil {
				t.Fatal(err)
			}
			mem := pl.Requests[0].History.Memory
			checkAll(t,
				want{"ending", got.Ending, EndedSucceeded},
				want{"problems", len(got.Problems), tt.problems},
				want{"memory given to the pipeline", mem != nil && len(mem.Matches(newNit)) == 3, tt.wantMemory},
				want{"suppressed recorded", len(tt.st.Suppressed), tt.wantRecorded},
				want{"outcome's suppressed", got.Suppressed, suppressed},
				want{"reviews published", len(gh.Published), 1},
			)
			if tt.wantMemory && !slices.Equal(tt.st.Limits, []int{250, 250}) {
				t.Errorf("the memory was read with limits %v, want memory.dismissals (250) each", tt.st.Limits)
			}
			if len(gh.Published) == 1 {
				post := gh.Published[0]
				if slices.ContainsFunc(post.Findings, func(f review.Finding) bool { return f.Fingerprint == newNit.Fingerprint }) {
					t.Errorf("the suppressed finding was posted: %+v", post.Findings)
				}
				if !slices.Contains(post.Verdict.Notes, memory.Note(1)) {
					t.Errorf("the body's notes %q do not count the suppressed finding", post.Verdict.Notes)
				}
			}
		})
	}
}
