package pipeline

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"

	openai "github.com/sashabaranov/go-openai"

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/llm"
)

// ErrLLMUnavailable is returned by Run when every LLM reviewer agent of a
// review failed for a passing reason (rate limit, server error, timeout,
// network): the model's review is worth trying again later. Run returns
// the review made of the built-in analyzers' and linters' findings with it.
var ErrLLMUnavailable = errors.New("the LLM was unavailable")

// ModelUnavailableNote is the note of a review whose model was unavailable
// (ErrLLMUnavailable): what it holds, without the model's failure, which
// may name internal addresses.
const ModelUnavailableNote = "The model could not be reached, so this review holds only the built-in analyzers' and linters' findings."

// ErrTokenBudget is returned by a model call of a review once the review's
// token budget (Request.MaxTokens) is spent.
var ErrTokenBudget = errors.New("per-review token budget exhausted")

// RepoConfigError is a review refused because the repository's
// .mergeguard.yml on the base revision is invalid. Its text names the key
// and the line: it is meant for the pull request's author.
type RepoConfigError struct{ Err error }

func (e *RepoConfigError) Error() string {
	return config.RepoFileName + " on the base branch is invalid:\n" + e.Err.Error()
}

func (e *RepoConfigError) Unwrap() error { return e.Err }

// RepoConfig is the repository configuration of req: .mergeguard.yml read
// from the Source's base revision over req.Repo when req.ReadRepoFile is
// set (a missing file keeps req.Repo), else req.Repo itself. A file that
// does not parse is a *RepoConfigError: never silently replaced by defaults.
// RepoConfig is the repository configuration a review of req uses:
// req.Repo, or .mergeguard.yml of the Source's base read over it
// (ReadRepoFile). A worker refreshing a pull request's gate without a
// review reads it so.
func RepoConfig(ctx context.Context, req Request) (config.Repo, error) { return repoConfig(ctx, req) }

func repoConfig(ctx context.Context, req Request) (config.Repo, error) {
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

// tokenBudget counts the tokens one review spends against its cap.
type tokenBudget struct {
	max  int64
	used atomic.Int64
}

// exceeded reports whether the budget is spent, and the tokens used.
func (b *tokenBudget) exceeded() (used int, over bool) {
	if b == nil {
		return 0, false
	}
	u := b.used.Load()
	return int(u), u >= b.max
}

// budgetedClient counts each call of next against budget; once the budget
// is spent, further calls fail with ErrTokenBudget without reaching the
// model.
type budgetedClient struct {
	next   ChatClient
	budget *tokenBudget
}

func (c budgetedClient) Chat(ctx context.Context, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
	if used, over := c.budget.exceeded(); over {
		return openai.ChatCompletionResponse{}, fmt.Errorf("%w (%d of %d tokens used)", ErrTokenBudget, used, c.budget.max)
	}
	resp, err := c.next.Chat(ctx, req)
	c.budget.used.Add(int64(resp.Usage.TotalTokens))
	return resp, err
}

// transientLLMErrors are the agent error types that pass with time.
var transientLLMErrors = []string{llm.TypeRateLimited, llm.TypeServer, llm.TypeTimeout, llm.TypeTransport}

// llmUnavailable returns ErrLLMUnavailable when every LLM reviewer agent of
// a review failed with a rate limit, a server error, a timeout or a network
// failure.
func llmUnavailable(agents []review.AgentResult) error {
	var total, failed int
	var last string
	for _, a := range agents {
		if a.Stage != review.StageReviewer || strings.HasPrefix(a.Agent, "analyzer:") {
			continue
		}
		total++
		switch {
		case a.Status == review.AgentTimeout:
			failed++
			last = fmt.Sprintf("%s timed out", a.Agent)
		case a.Status == review.AgentError && slices.Contains(transientLLMErrors, a.ErrorType):
			failed++
			last = a.Error
		}
	}
	if total == 0 || failed < total {
		return nil
	}
	return fmt.Errorf("%w: %d of %d reviewer agents failed; last: %s", ErrLLMUnavailable, failed, total, last)
}
