package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mergeguard/mergeguard/review"
)

// This file is the finding ledger of pull requests (docs/architecture.md):
// FinishRun writes a run's entries in the transaction that records the run;
// webhooks and the workers record what people did to MergeGuard's threads.

const selectLedger = `SELECT fingerprint, state, finding, first_seen_sha, last_seen_sha, fixed_sha,
	    state_by, state_how, COALESCE(comment_id, 0), thread_id, updated_at,
	    outcome, outcome_how, outcome_merged, outcome_source, outcome_at
	FROM pr_findings WHERE repository = $1 AND pr_number = $2 AND ($3 = 0 OR comment_id = $3)
	ORDER BY file_path, (finding->>'line_start')::int, fingerprint`

// Ledger returns the finding ledger of pull request number of repo
// (owner/name), ordered by file and line; empty when it has none.
func (s *Store) Ledger(ctx context.Context, repo string, number int) ([]review.LedgerEntry, error) {
	return s.ledger(ctx, repo, number, 0)
}

// ledger returns the ledger's entries, only the one posted as review
// comment commentID when it is not 0.
func (s *Store) ledger(ctx context.Context, repo string, number int, commentID int64) ([]review.LedgerEntry, error) {
	rows, err := s.pool.Query(ctx, selectLedger, repo, number, commentID)
	if err != nil {
		return nil, fmt.Errorf("read ledger of %s#%d: %w", repo, number, err)
	}
	entries, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (review.LedgerEntry, error) {
		var (
			e       review.LedgerEntry
			fp      string
			outcome *review.Outcome
			o       review.ClosedOutcome
			merged  *bool
			at      *time.Time
		)
		err := row.Scan(&fp, &e.State, &e.Finding, &e.FirstSeenSHA, &e.LastSeenSHA, &e.FixedSHA,
			&e.StateBy, &e.StateHow, &e.CommentID, &e.ThreadID, &e.UpdatedAt,
			&outcome, &o.How, &merged, &o.Source, &at)
		e.Finding.Fingerprint = fp
		if outcome != nil && merged != nil && at != nil {
			o.Outcome, o.Merged, o.At = *outcome, *merged, at.UTC()
			e.Outcome = &o
		}
		return e, err
	})
	if err != nil {
		return nil, fmt.Errorf("read ledger of %s#%d: %w", repo, number, err)
	}
	return entries, nil
}

// LedgerChange is one state a ledger entry entered: its history.
type LedgerChange struct {
	Fingerprint string              `json:"fingerprint"`
	State       review.FindingState `json:"state"`
	// SHA is the head the entry was seen (or found fixed) at.
	SHA   string    `json:"sha,omitempty"`
	By    string    `json:"by,omitempty"`
	How   string    `json:"how,omitempty"`
	RunID string    `json:"run_id,omitempty"`
	At    time.Time `json:"at"`
}

// LedgerHistory returns every state change of the ledger entries of a pull
// request, oldest first.
func (s *Store) LedgerHistory(ctx context.Context, repo string, number int) ([]LedgerChange, error) {
	rows, err := s.pool.Query(ctx, `SELECT fingerprint, state, sha, by_login, how, COALESCE(run_id::text, ''), at
		FROM pr_finding_history WHERE repository = $1 AND pr_number = $2 ORDER BY id`, repo, number)
	if err != nil {
		return nil, fmt.Errorf("read ledger history of %s#%d: %w", repo, number, err)
	}
	changes, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (LedgerChange, error) {
		var c LedgerChange
		err := row.Scan(&c.Fingerprint, &c.State, &c.SHA, &c.By, &c.How, &c.RunID, &c.At)
		return c, err
	})
	if err != nil {
		return nil, fmt.Errorf("read ledger history of %s#%d: %w", repo, number, err)
	}
	return changes, nil
}

// upsertLedger writes the ledger entries a run left, in one statement
// (one round trip, whatever their number). An entry a person dismissed
// stays dismissed whatever a run says: the dismissal may have arrived while
// the run was working.
const upsertLedger = `INSERT INTO pr_findings AS p (repository, pr_number, fingerprint, state, finding,
	    file_path, severity, category, first_seen_sha, last_seen_sha, fixed_sha, state_by, state_how,
	    first_run_id, last_run_id, comment_id, thread_id, repo_id)
	SELECT $1, $2, e.fingerprint, e.state, e.finding, e.finding->>'file_path', e.finding->>'severity',
	       e.finding->>'category', e.first_seen_sha, e.last_seen_sha, e.fixed_sha, e.state_by, e.state_how,
	       $3::uuid, $3::uuid, NULLIF(e.comment_id, 0), e.thread_id,
	       (SELECT repo_id FROM review_runs WHERE id = $3::uuid)
	FROM jsonb_to_recordset($4::jsonb) AS e(fingerprint text, state text, finding jsonb, first_seen_sha text,
	       last_seen_sha text, fixed_sha text, state_by text, state_how text, comment_id bigint, thread_id text)
	ON CONFLICT (repository, pr_number, fingerprint) DO UPDATE SET
	    state = EXCLUDED.state, finding = EXCLUDED.finding, file_path = EXCLUDED.file_path,
	    severity = EXCLUDED.severity, category = EXCLUDED.category,
	    last_seen_sha = EXCLUDED.last_seen_sha, fixed_sha = EXCLUDED.fixed_sha,
	    state_by = EXCLUDED.state_by, state_how = EXCLUDED.state_how, last_run_id = EXCLUDED.last_run_id,
	    comment_id = COALESCE(EXCLUDED.comment_id, p.comment_id),
	    thread_id = CASE WHEN EXCLUDED.thread_id <> '' THEN EXCLUDED.thread_id ELSE p.thread_id END,
	    repo_id = COALESCE(EXCLUDED.repo_id, p.repo_id),
	    updated_at = now()
	WHERE p.state <> 'dismissed' OR EXCLUDED.state = 'dismissed'`

// ledgerRow is one entry as upsertLedger reads it.
type ledgerRow struct {
	Fingerprint  string              `json:"fingerprint"`
	State        review.FindingState `json:"state"`
	Finding      review.Finding      `json:"finding"`
	FirstSeenSHA string              `json:"first_seen_sha"`
	LastSeenSHA  string              `json:"last_seen_sha"`
	FixedSHA     string              `json:"fixed_sha"`
	StateBy      string              `json:"state_by"`
	StateHow     string              `json:"state_how"`
	CommentID    int64               `json:"comment_id"`
	ThreadID     string              `json:"thread_id"`
}

// writeLedger stores the ledger entries a run of pull request number of
// repo changed, inside tx.
func writeLedger(ctx context.Context, tx pgx.Tx, runID, repo string, number int, entries []review.LedgerEntry) error {
	if len(entries) == 0 {
		return nil
	}
	if repo == "" || number == 0 {
		return errors.New("ledger entries for a run that is not of a pull request")
	}
	rows := make([]ledgerRow, len(entries))
	seen := make(map[string]bool, len(entries))
	for i, e := range entries {
		f := e.Finding
		if f.Fingerprint == "" || seen[f.Fingerprint] {
			return fmt.Errorf("ledger entry at %s:%d: no fingerprint or a repeated one (%q)", f.FilePath, f.LineStart, f.Fingerprint)
		}
		seen[f.Fingerprint] = true
		rows[i] = ledgerRow{Fingerprint: f.Fingerprint, State: e.State, Finding: f, FirstSeenSHA: e.FirstSeenSHA,
			LastSeenSHA: e.LastSeenSHA, FixedSHA: e.FixedSHA, StateBy: e.StateBy, StateHow: e.StateHow,
			CommentID: e.CommentID, ThreadID: e.ThreadID}
	}
	doc, err := json.Marshal(rows)
	if err != nil {
		return fmt.Errorf("ledger entries: %w", err)
	}
	if _, err := tx.Exec(ctx, upsertLedger, repo, number, runID, doc); err != nil {
		return fmt.Errorf("ledger entries: %w", err)
	}
	return nil
}

// ApplyThread records a review thread's state on the ledger entry posted
// as its first comment: a thread resolved by a person dismisses an open
// entry (how: thread_resolved), a thread unresolved reopens an entry
// dismissed that way or by feedback (review.ReopensOnUnresolve); the thread id is recorded in any case. Fixed and
// outdated entries keep their state. It reports whether the entry's state
// changed; an unknown thread changes nothing.
func (s *Store) ApplyThread(ctx context.Context, repo string, number int, t review.ThreadChange) (changed bool, err error) {
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var (
			fp, how, thread string
			state           review.FindingState
		)
		err := tx.QueryRow(ctx, `SELECT fingerprint, state, state_how, thread_id FROM pr_findings
			WHERE repository = $1 AND pr_number = $2
			  AND (($3 <> '' AND thread_id = $3) OR ($4 > 0 AND comment_id = $4))
			LIMIT 1 FOR UPDATE`, repo, number, t.ThreadID, t.CommentID).Scan(&fp, &state, &how, &thread)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		by := ""
		switch {
		case t.Resolved && state == review.FindingOpen:
			state, how, by, changed = review.FindingDismissed, review.DismissedThreadResolved, t.By, true
		case !t.Resolved && state == review.FindingDismissed && review.ReopensOnUnresolve(how):
			state, how, by, changed = review.FindingOpen, "", t.By, true
		case t.ThreadID == "" || t.ThreadID == thread:
			return nil // nothing to record
		}
		_, err = tx.Exec(ctx, `UPDATE pr_findings SET
			    thread_id = CASE WHEN $4 <> '' THEN $4 ELSE thread_id END,
			    state = $5, state_how = $6,
			    state_by = CASE WHEN $7 THEN $8 ELSE state_by END,
			    updated_at = now()
			WHERE repository = $1 AND pr_number = $2 AND fingerprint = $3`,
			repo, number, fp, t.ThreadID, state, how, changed, by)
		if err != nil || !changed {
			return err
		}
		_, err = tx.Exec(ctx, enqueueGate, repo, number)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("record thread %s of %s#%d: %w", t.ThreadID, repo, number, err)
	}
	return changed, nil
}

// LastReview returns the newest pull request run of repo#number that
// ended succeeded or failed (skipped and superseded runs reviewed nothing),
// other than the run except; ErrNotFound when there is none.
func (s *Store) LastReview(ctx context.Context, repo string, number int, except string) (review.LastReview, error) {
	if except == "" || !validID(except) {
		except = "00000000-0000-0000-0000-000000000000"
	}
	run, err := queryRun(ctx, s.pool, `SELECT `+runColumns+` FROM review_runs
		WHERE repository = $1 AND pr_number = $2 AND mode = 'pr' AND id <> $3
		  AND status IN ('succeeded', 'failed')
		ORDER BY finished_at DESC, created_at DESC LIMIT 1`, repo, number, except)
	if errors.Is(err, pgx.ErrNoRows) {
		return review.LastReview{}, fmt.Errorf("last review of %s#%d: %w", repo, number, ErrNotFound)
	}
	if err != nil {
		return review.LastReview{}, fmt.Errorf("last review of %s#%d: %w", repo, number, err)
	}
	return review.LastReview{Found: true, Succeeded: run.Status == StatusSucceeded, KeptLedger: run.ReviewKind != "",
		HeadSHA: run.HeadSHA, BaseSHA: run.BaseSHA, ConfigDigest: run.ConfigDigest}, nil
}

// ReviewOfHead returns the newest pull request run of repo#number that
// reviewed head and succeeded (its Result holds the verdict, and so the
// walkthrough); ErrNotFound when there is none.
func (s *Store) ReviewOfHead(ctx context.Context, repo string, number int, head string) (review.ReviewedHead, error) {
	run, err := queryRun(ctx, s.pool, `SELECT `+runColumns+` FROM review_runs
		WHERE repository = $1 AND pr_number = $2 AND mode = 'pr' AND head_sha = $3 AND $3 <> ''
		  AND status = 'succeeded' AND result IS NOT NULL
		ORDER BY finished_at DESC, created_at DESC LIMIT 1`, repo, number, head)
	if errors.Is(err, pgx.ErrNoRows) {
		return review.ReviewedHead{}, fmt.Errorf("review of %s#%d at %s: %w", repo, number, head, ErrNotFound)
	}
	if err != nil {
		return review.ReviewedHead{}, fmt.Errorf("review of %s#%d at %s: %w", repo, number, head, err)
	}
	return review.ReviewedHead{RunID: run.ID, HeadSHA: run.HeadSHA, CheckRunID: run.CheckRunID, Verdict: run.Result}, nil
}

// SetRunCheck records the check run a run held by workerID reports to, so
// that a retried attempt completes the same check. Only the lease holder
// may set it (ErrLeaseLost).
func (s *Store) SetRunCheck(ctx context.Context, runID, workerID string, checkRunID int64) error {
	if !validID(runID) {
		return fmt.Errorf("set check of run %q: %w", runID, ErrNotFound)
	}
	tag, err := s.pool.Exec(ctx, `UPDATE review_runs SET check_run_id = $3
		WHERE id = $1 AND status = 'running' AND locked_by = $2`, runID, workerID, checkRunID)
	if err != nil {
		return fmt.Errorf("set check of run %s: %w", runID, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("set check of run %s: %w", runID, ErrLeaseLost)
	}
	return nil
}
