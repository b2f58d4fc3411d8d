package task

import (
	"context"
	"errors"
	"fmt"

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/review"
)

// ErrLLMUnavailable is returned by the pipeline's Run when every LLM
// reviewer agent of a review failed for a passing reason (rate limit,
// server error, timeout, network): the model's review is worth trying
// again later. Run returns the review made of the built-in analyzers' and
// linters' findings with it.
var ErrLLMUnavailable = errors.New("the LLM was unavailable")

// ModelUnavailableNote is the note of a review whose model was unavailable
// (ErrLLMUnavailable): what it holds, without the model's failure, which
// may name internal addresses.
const ModelUnavailableNote = "The model could not be reached, so this review holds only the built-in analyzers' and linters' findings."

// ModelSkippedNote starts the verdict's note of a review whose model was
// skipped (a title keyword, a skip label, max_files); the reason follows.
const ModelSkippedNote = "Model review skipped: "

// RepoConfigError is a review refused because the repository's
// .mergeguard.yml on the base revision is invalid. Its text names the key
// and the line: it is meant for the pull request's author.
type RepoConfigError struct{ Err error }

func (e *RepoConfigError) Error() string {
	return config.RepoFileName + " on the base branch is invalid:\n" + e.Err.Error()
}

func (e *RepoConfigError) Unwrap() error { return e.Err }

// RepoConfig is the repository configuration a review of req uses:
// .mergeguard.yml read from the Source's base revision over req.Repo when
// req.ReadRepoFile is set (a missing file keeps req.Repo), else req.Repo
// itself. A file that does not parse is a *RepoConfigError: never silently
// replaced by defaults. The lifecycle reads it so to refresh a pull
// request's gate without a review.
func RepoConfig(ctx context.Context, req Request) (config.Repo, error) {
	if !req.ReadRepoFile {
		return req.Repo, nil
	}
	data, err := req.Source.ReadFile(ctx, config.RepoFileName, review.Base)
	if errors.Is(err, review.ErrNotFound) {
		return req.Repo, nil
	}
	if err != nil {
		return config.Repo{}, fmt.Errorf("read %s from the base branch: %w", config.RepoFileName, err)
	}
	repo, err := config.ParseRepoOver(req.Repo, data)
	if err != nil {
		return config.Repo{}, &RepoConfigError{Err: err}
	}
	return repo, nil
}

// BlockingSeverity is the severity from which a repository's verified
// findings block its pull requests (blocking_severity): critical unless
// the repository names a valid one.
func BlockingSeverity(repo config.Repo) review.Severity {
	if sev, err := review.ParseSeverity(repo.BlockingSeverity); err == nil {
		return sev
	}
	return review.SeverityCritical
}
