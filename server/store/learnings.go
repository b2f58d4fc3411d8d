package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/mergeguard/mergeguard/review"
)

// This file holds what people taught MergeGuard (learnings) and the feedback
// that dismisses findings (docs/architecture.md).

const learningColumns = `id, repository, instruction, path_glob, status, COALESCE(pr_number, 0),
	COALESCE(thread_comment_id, 0), fingerprint, author, COALESCE(run_id::text, ''), created_at, updated_at, updated_by`

func scanLearning(row pgx.CollectableRow) (review.Learning, error) {
	var l review.Learning
	err := row.Scan(&l.ID, &l.Repository, &l.Instruction, &l.Path, &l.Status, &l.PRNumber, &l.ThreadCommentID,
		&l.Fingerprint, &l.Author, &l.RunID, &l.CreatedAt, &l.UpdatedAt, &l.UpdatedBy)
	return l, err
}

func (s *Store) queryLearnings(ctx context.Context, what, sql string, args ...any) ([]review.Learning, error) {
	rows, err := s.pool.Query(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	ls, err := pgx.CollectRows(rows, scanLearning)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return ls, nil
}

func (s *Store) queryLearning(ctx context.Context, what, sql string, args ...any) (review.Learning, error) {
	ls, err := s.queryLearnings(ctx, what, sql, args...)
	if err != nil {
		return review.Learning{}, err
	}
	if len(ls) == 0 {
		return review.Learning{}, fmt.Errorf("%s: %w", what, ErrNotFound)
	}
	return ls[0], nil
}

// AddLearning stores a learning (proposed or active) and returns it with
// its id and times. Run is the answer run it came from, "" for none; the
// learning keeps that run's GitHub repository id.
func (s *Store) AddLearning(ctx context.Context, l review.Learning) (review.Learning, error) {
	var runID *string
	if validID(l.RunID) {
		runID = &l.RunID
	}
	return s.queryLearning(ctx, "add learning", `INSERT INTO learnings
		(repository, instruction, path_glob, status, pr_number, thread_comment_id, fingerprint, author, run_id, updated_by, repo_id)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $8, (SELECT repo_id FROM review_runs WHERE id = $9::uuid))
		RETURNING `+learningColumns,
		l.Repository, l.Instruction, l.Path, l.Status, nullIfZero(l.PRNumber), nullIfZero(l.ThreadCommentID),
		l.Fingerprint, l.Author, runID)
}

// Learnings returns a repository's learnings with the given status ("" for
// all), oldest first. Repository names compare case-insensitively, as
// GitHub's do.
func (s *Store) Learnings(ctx context.Context, repo string, status review.LearningStatus) ([]review.Learning, error) {
	return s.queryLearnings(ctx, "list learnings of "+repo, `SELECT `+learningColumns+` FROM learnings
		WHERE lower(repository) = lower($1) AND ($2 = '' OR status = $2) ORDER BY id`, repo, string(status))
}

// Learning returns learning id of repo, or ErrNotFound.
func (s *Store) Learning(ctx context.Context, repo string, id int64) (review.Learning, error) {
	return s.queryLearning(ctx, fmt.Sprintf("learning %d", id), `SELECT `+learningColumns+` FROM learnings
		WHERE id = $1 AND lower(repository) = lower($2)`, id, repo)
}

// LearningUpdate changes a learning; nil fields are kept.
type LearningUpdate struct {
	Instruction *string
	Path        *string
	Status      *review.LearningStatus
	// By is who changed it.
	By string
}

// UpdateLearning changes learning id of repo and returns it; ErrNotFound
// when repo has no such learning.
func (s *Store) UpdateLearning(ctx context.Context, repo string, id int64, u LearningUpdate) (review.Learning, error) {
	var status *string
	if u.Status != nil {
		v := string(*u.Status)
		status = &v
	}
	return s.queryLearning(ctx, fmt.Sprintf("update learning %d", id), `UPDATE learnings SET
		    instruction = COALESCE($3, instruction), path_glob = COALESCE($4, path_glob),
		    status = COALESCE($5, status), updated_by = $6, updated_at = now()
		WHERE id = $1 AND lower(repository) = lower($2)
		RETURNING `+learningColumns, id, repo, u.Instruction, u.Path, status, u.By)
}

// DeleteLearning deletes learning id of repo; ErrNotFound when it has none.
func (s *Store) DeleteLearning(ctx context.Context, repo string, id int64) error {
	tag, err := s.pool.Exec(ctx, `DELETE FROM learnings WHERE id = $1 AND lower(repository) = lower($2)`, id, repo)
	if err != nil {
		return fmt.Errorf("delete learning %d: %w", id, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("delete learning %d: %w", id, ErrNotFound)
	}
	return nil
}

// ActivateThreadLearning activates the learning proposed in a review
// thread (its first comment) of pull request number; ErrNotFound when the
// thread has no proposed learning.
func (s *Store) ActivateThreadLearning(ctx context.Context, repo string, number int, threadCommentID int64, by string) (review.Learning, error) {
	l, err := activateThreadLearning(ctx, s.pool, repo, number, threadCommentID, by)
	if err != nil {
		return review.Learning{}, fmt.Errorf("activate the thread's learning: %w", err)
	}
	return l, nil
}

// activateThreadLearning is ActivateThreadLearning through q (the pool or
// a transaction), its error not wrapped.
func activateThreadLearning(ctx context.Context, q querier, repo string, number int, threadCommentID int64, by string) (review.Learning, error) {
	rows, err := q.Query(ctx, `UPDATE learnings SET status = 'active', updated_by = $4, updated_at = now()
		WHERE id = (SELECT id FROM learnings WHERE repository = $1 AND pr_number = $2 AND thread_comment_id = $3
		              AND status = 'proposed' ORDER BY id DESC LIMIT 1)
		RETURNING `+learningColumns, repo, number, threadCommentID, by)
	if err != nil {
		return review.Learning{}, err
	}
	l, err := pgx.CollectExactlyOneRow(rows, scanLearning)
	if errors.Is(err, pgx.ErrNoRows) {
		return review.Learning{}, ErrNotFound
	}
	return l, err
}

// FindingOfThread returns the ledger entry posted as review comment
// commentID (a thread's first comment) of pull request number; ErrNotFound
// when the comment is not one of MergeGuard's findings.
func (s *Store) FindingOfThread(ctx context.Context, repo string, number int, commentID int64) (review.LedgerEntry, error) {
	if commentID <= 0 { // entries never posted have no comment: 0 is none of them
		return review.LedgerEntry{}, fmt.Errorf("finding of comment %d on %s#%d: %w", commentID, repo, number, ErrNotFound)
	}
	entries, err := s.ledger(ctx, repo, number, commentID)
	if err != nil {
		return review.LedgerEntry{}, err
	}
	if len(entries) > 0 {
		return entries[0], nil
	}
	return review.LedgerEntry{}, fmt.Errorf("finding of comment %d on %s#%d: %w", commentID, repo, number, ErrNotFound)
}

// DismissFinding dismisses the open ledger entry fingerprint of pull
// request number: by whom and how (review.DismissedCommand,
// review.DismissedFeedback, review.DismissedAPI). It reports whether an open (or exposed) entry
// was dismissed; a dismissal queues a refresh of the pull request's gate in
// the same transaction.
func (s *Store) DismissFinding(ctx context.Context, repo string, number int, fingerprint, by, how string) (bool, error) {
	var dismissed bool
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) (err error) {
		dismissed, err = dismissFinding(ctx, tx, repo, number, fingerprint, by, how)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("dismiss finding %s of %s#%d: %w", fingerprint, repo, number, err)
	}
	return dismissed, nil
}

// dismissFinding is DismissFinding through q (the pool or a transaction),
// its error not wrapped.
func dismissFinding(ctx context.Context, q querier, repo string, number int, fingerprint, by, how string) (bool, error) {
	if how != review.DismissedCommand && how != review.DismissedFeedback && how != review.DismissedThreadResolved && how != review.DismissedAPI {
		return false, errors.New("unknown way " + how)
	}
	// An exposed secret is dismissed only by an explicit act (a command, a
	// reaction, the UI or the API), never by resolving its thread.
	tag, err := q.Exec(ctx, `UPDATE pr_findings SET state = 'dismissed', state_by = $4, state_how = $5, updated_at = now()
		WHERE repository = $1 AND pr_number = $2 AND fingerprint = $3
		  AND (state = 'open' OR (state = 'exposed' AND $5 <> 'thread_resolved'))`, repo, number, fingerprint, by, how)
	if err != nil {
		return false, err
	}
	if tag.RowsAffected() != 1 {
		return false, nil
	}
	if _, err := q.Exec(ctx, enqueueGate, repo, number); err != nil {
		return false, fmt.Errorf("queue a gate refresh: %w", err)
	}
	return true, nil
}

// AnswersInThread counts the answers MergeGuard posted in the review
// thread that starts with comment threadCommentID of pull request number,
// by runs other than except.
func (s *Store) AnswersInThread(ctx context.Context, repo string, number int, threadCommentID int64, except string) (int, error) {
	if !validID(except) {
		except = "00000000-0000-0000-0000-000000000000"
	}
	var n int
	err := s.pool.QueryRow(ctx, `SELECT count(*) FROM review_runs
		WHERE mode = 'answer' AND repository = $1 AND pr_number = $2 AND id <> $4
		  AND options->>'thread_comment_id' = $3::bigint::text AND answer_comment_id IS NOT NULL`,
		repo, number, threadCommentID, except).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("answers in thread %d of %s#%d: %w", threadCommentID, repo, number, err)
	}
	return n, nil
}

// RecordAgreement records in an entry's history that login agreed with
// the finding (a 👍 on its comment), once per person.
func (s *Store) RecordAgreement(ctx context.Context, repo string, number int, fingerprint, login string) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO pr_finding_history (repository, pr_number, fingerprint, state, sha, by_login, how)
		SELECT repository, pr_number, fingerprint, state, last_seen_sha, $4, 'agreed' FROM pr_findings p
		WHERE repository = $1 AND pr_number = $2 AND fingerprint = $3
		  AND NOT EXISTS (SELECT 1 FROM pr_finding_history h WHERE h.repository = p.repository AND h.pr_number = p.pr_number
		                  AND h.fingerprint = p.fingerprint AND h.by_login = $4 AND h.how = 'agreed')`, repo, number, fingerprint, login)
	if err != nil {
		return fmt.Errorf("record agreement with %s on %s#%d: %w", fingerprint, repo, number, err)
	}
	return nil
}
