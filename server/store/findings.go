package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mergeguard/mergeguard/review"
)

// StoredFinding is a finding of a run with where it was posted.
type StoredFinding struct {
	review.Finding
	ID int64
	// Posted is "no" or a placement (inline, body, file, duplicate).
	Posted    string
	CommentID int64
	CreatedAt time.Time
}

const selectFindings = `SELECT id, file_path, line_start, line_end, side, severity, category, title,
	    description, suggestion, verification_status, confidence, code_snippet, agent, reason,
	    fingerprint, posted, COALESCE(github_comment_id, 0), created_at
	FROM findings WHERE run_id = $1 ORDER BY id`

// Findings returns a run's stored findings (false positives included) in the
// order they were stored.
func (s *Store) Findings(ctx context.Context, runID string) ([]StoredFinding, error) {
	if !validID(runID) {
		return nil, fmt.Errorf("read findings of run %q: %w", runID, ErrNotFound)
	}
	rows, err := s.pool.Query(ctx, selectFindings, runID)
	if err != nil {
		return nil, fmt.Errorf("read findings of run %s: %w", runID, err)
	}
	findings, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (StoredFinding, error) {
		var f StoredFinding
		err := row.Scan(&f.ID, &f.FilePath, &f.LineStart, &f.LineEnd, &f.Side, &f.Severity, &f.Category,
			&f.Title, &f.Description, &f.Suggestion, &f.VerificationStatus, &f.Confidence, &f.CodeSnippet,
			&f.Agent, &f.Reason, &f.Fingerprint, &f.Posted, &f.CommentID, &f.CreatedAt)
		return f, err
	})
	if err != nil {
		return nil, fmt.Errorf("read findings of run %s: %w", runID, err)
	}
	return findings, nil
}

const selectAgentResults = `SELECT agent, stage, status, issues, elapsed_ms, turns, input_tokens,
	    output_tokens, total_cost, error, error_type, COALESCE(timeout_seconds, 0)
	FROM agent_results WHERE run_id = $1 ORDER BY id`

// AgentResults returns a run's agent results in the order they were stored.
func (s *Store) AgentResults(ctx context.Context, runID string) ([]review.AgentResult, error) {
	if !validID(runID) {
		return nil, fmt.Errorf("read agent results of run %q: %w", runID, ErrNotFound)
	}
	rows, err := s.pool.Query(ctx, selectAgentResults, runID)
	if err != nil {
		return nil, fmt.Errorf("read agent results of run %s: %w", runID, err)
	}
	results, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (review.AgentResult, error) {
		var a review.AgentResult
		err := row.Scan(&a.Agent, &a.Stage, &a.Status, &a.Issues, &a.ElapsedMS, &a.Turns,
			&a.Cost.InputTokens, &a.Cost.OutputTokens, &a.Cost.TotalCost, &a.Error, &a.ErrorType,
			&a.TimeoutSeconds)
		return a, err
	})
	if err != nil {
		return nil, fmt.Errorf("read agent results of run %s: %w", runID, err)
	}
	return results, nil
}
