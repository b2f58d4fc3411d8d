package lifecycle

import (
	"errors"
	"fmt"

	"github.com/mergeguard/mergeguard/review/task"
)

// This file is what a pull request is told when its run failed
// (docs/architecture.md, The life of a pull request).

// UserError is a failure the pull request's author can fix, such as bad
// run options; its text goes into the failure comment as is.
type UserError struct{ Err error }

func (e UserError) Error() string { return e.Err.Error() }
func (e UserError) Unwrap() error { return e.Err }

// ErrTimedOut is wrapped by the error of a run that took longer than the
// time a review may take.
var ErrTimedOut = errors.New("the review took longer than the run timeout")

// ModelUnavailable reports whether err is the model failing for a passing
// reason (rate limits, server errors): worth trying again.
func ModelUnavailable(err error) bool { return errors.Is(err, task.ErrLLMUnavailable) }

// FailureNotice is the comment a failed run leaves on its pull request
// after its attempts: the error itself when the author can fix it (a
// broken .mergeguard.yml, bad options), else a pointer to the run.
// Internal errors and the model server's own words are for the operators'
// logs and the web UI, never the pull request.
func FailureNotice(runID string, attempts int, err error) string {
	var (
		ue     UserError
		cfgErr *task.RepoConfigError
		de     NotDescribedError
		posted AnalyzersPostedError
	)
	switch {
	case errors.As(err, &posted):
		return fmt.Sprintf("MergeGuard could not complete the review of this pull request (run `%s`): "+
			"the language model kept failing (rate limits or server errors) over %d attempts. "+
			"The findings of its built-in analyzers and linters are posted; comment `/mergeguard rerun` to try the model again later.",
			runID, attempts)
	case errors.As(err, &de):
		return fmt.Sprintf("MergeGuard could not write the walkthrough into this pull request's description (run `%s`): %s "+
			"Comment `/mergeguard describe` to try again.", runID, de.Reason())
	case ModelUnavailable(err):
		return fmt.Sprintf("MergeGuard could not complete the review of this pull request (run `%s`): "+
			"the language model kept failing (rate limits or server errors) over %d attempts. "+
			"Comment `/mergeguard rerun` to try again later.", runID, attempts)
	case errors.Is(err, ErrTimedOut):
		return fmt.Sprintf("MergeGuard stopped the review of this pull request (run `%s`): it took longer than the time a review may take. "+
			"Comment `/mergeguard rerun` to try again.", runID)
	case errors.As(err, &cfgErr):
		return "MergeGuard could not review this pull request:\n\n```\n" + cfgErr.Error() +
			"\n```\n\nFix the file on the base branch, then comment `/mergeguard rerun`."
	case errors.As(err, &ue):
		return "MergeGuard could not review this pull request:\n\n```\n" + ue.Error() + "\n```"
	}
	return fmt.Sprintf("MergeGuard could not complete the review of this pull request (run `%s`, attempt %d). "+
		"The cause is in MergeGuard's logs; comment `/mergeguard rerun` to try again.", runID, attempts)
}
