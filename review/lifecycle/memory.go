package lifecycle

import (
	"context"
	"fmt"

	"github.com/mergeguard/mergeguard/review/memory"
	"github.com/mergeguard/mergeguard/review/task"
)

// This file is the memory of dismissals in the life of a pull request
// (docs/quality.md): prepare reads the findings writers dismissed in the
// repository, the pipeline leaves out the new findings similar to enough
// of them (review/memory decides), and once the review is posted the ones
// it left out are recorded as suppressed, with the dismissals they matched.

// Memory is the repository's memory of dismissals, as the store keeps it.
type Memory interface {
	// Dismissals are the most recent findings writers dismissed in repo
	// (any pull request of the repository run runID is of), at most limit.
	Dismissals(ctx context.Context, repo, runID string, limit int) ([]memory.Dismissal, error)
	// Revivals are the most recent suppressed findings writers revived.
	Revivals(ctx context.Context, repo, runID string, limit int) ([]memory.Revival, error)
	// RecordSuppressed records what a review of pull request number at
	// head did not post.
	RecordSuppressed(ctx context.Context, repo string, number int, runID, head string, sup []memory.Suppressed) error
}

// remember reads the repository's memory of dismissals for run runID, nil
// without one. It is best effort: a failure is a problem and the review
// suppresses nothing (without the revivals, a revived pattern would be
// suppressed again).
func (p Preparing) remember(ctx context.Context, pr PullRequest, runID string, out *Prepared) *memory.Memory {
	if p.Memory == nil || p.MemoryLimit < 1 {
		return nil
	}
	dismissals, err := p.Memory.Dismissals(ctx, pr.Repository, runID, p.MemoryLimit)
	if err != nil {
		out.Problems = append(out.Problems, fmt.Errorf("read the repository's dismissals; nothing is suppressed: %w", err))
		return nil
	}
	if len(dismissals) == 0 {
		return nil
	}
	revivals, err := p.Memory.Revivals(ctx, pr.Repository, runID, p.MemoryLimit)
	if err != nil {
		out.Problems = append(out.Problems, fmt.Errorf("read the repository's revivals; nothing is suppressed: %w", err))
		return nil
	}
	return memory.New(dismissals, revivals)
}

// recordSuppressed records the findings the posted review left out; best
// effort.
func (r Reviewing) recordSuppressed(ctx context.Context, q ReviewAsked, res *task.Result, out *Outcome) {
	out.Suppressed = res.Suppressed
	if len(res.Suppressed) == 0 || r.Preparing.Memory == nil {
		return
	}
	if err := r.Preparing.Memory.RecordSuppressed(ctx, q.Repository, q.Number, q.RunID, res.Change.HeadSHA, res.Suppressed); err != nil {
		out.Problems = append(out.Problems, fmt.Errorf("record the suppressed findings: %w", err))
	}
}
