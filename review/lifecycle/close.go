package lifecycle

import (
	"context"
	"fmt"

	"github.com/mergeguard/mergeguard/review"
)

// This file tells a pull request how a run ended, once the run is
// recorded (docs/architecture.md, The life of a pull request): its check
// run completes and the notice is posted, whatever the end.

// Commenter posts on a pull request's conversation.
type Commenter interface {
	Comment(ctx context.Context, number int, body string) (int64, error)
}

// The best-effort steps whose failures are counted (StepError).
const (
	StepCheckRun = "check_run"
	StepComment  = "comment"
)

// StepError is a best-effort step that failed; the run went on.
type StepError struct {
	Step string
	Err  error
}

func (e StepError) Error() string { return e.Err.Error() }
func (e StepError) Unwrap() error { return e.Err }

// End is how a run ended, as its pull request is told.
type End struct {
	Ending Ending
	// Reason says why the run was skipped or superseded; Notice is what
	// the pull request is told, "" for nothing.
	Reason, Notice string
	// Check is the completed check of a posted review; nil gives the
	// check of Ending. NoCheck leaves the head's check as it is.
	Check   *review.Check
	NoCheck bool
}

// EndOf is the end of a review's outcome.
func EndOf(o Outcome) End {
	return End{Ending: o.Ending, Reason: o.Reason, Notice: o.Notice, Check: o.Check, NoCheck: o.NoCheck}
}

// Closing is the use case of telling a pull request how a run ended.
type Closing struct {
	Checking Checking
	Comments Commenter
}

// Close completes run's check run with how it ended, creating it when the
// run ended before starting it (a skipped run), and posts the notice. Both
// are best effort, the run being recorded: each failure is a StepError.
func (c Closing) Close(ctx context.Context, pr PullRequest, run Run, end End) []error {
	var problems []error
	if !end.NoCheck && run.HeadSHA != "" {
		check := Ended(end.Ending, end.Reason)
		switch {
		case end.Check != nil:
			check = *end.Check
		case end.Ending == EndedFailed:
			check = Ended(EndedFailed, end.Notice)
		}
		if err := c.Checking.Complete(ctx, run, check); err != nil {
			problems = append(problems, StepError{Step: StepCheckRun, Err: fmt.Errorf("complete the check run (%s): %w", check.Conclusion, err)})
		}
	}
	if end.Notice != "" {
		if _, err := c.Comments.Comment(ctx, pr.Number, end.Notice); err != nil {
			problems = append(problems, StepError{Step: StepComment, Err: fmt.Errorf("tell the pull request how the run ended: %w", err)})
		}
	}
	return problems
}

// nonNil is err as a list: empty when it is nil.
func nonNil(err error) []error {
	if err == nil {
		return nil
	}
	return []error{err}
}
