package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/memory"
)

// This file is the memory of dismissals (docs/quality.md): what writers
// dismissed in a repository, the findings a review did not post because
// they were similar to enough of those, and the revivals of such findings.

// runRepository is the GitHub id of the repository run $2 is of (NULL
// without one), so that what was kept under the name $1 of another
// repository (the name passed on) is never read as this one's.
const runRepository = `(SELECT repo_id FROM review_runs WHERE id = $2::uuid)`

// selectDismissals reads the repository's most recent dismissals by
// people: only the ways a writer dismisses (a resolution or a 👎 checked
// for write access, a writer's command or reply, the token holder's API),
// never MergeGuard's own changes.
const selectDismissals = `SELECT pr_number, fingerprint, finding, state_by, state_how, updated_at, COALESCE(comment_id, 0)
	FROM pr_findings
	WHERE repository = $1 AND state = 'dismissed'
	  AND state_how IN ('thread_resolved', 'command', 'feedback', 'api') AND state_by NOT IN ('', 'mergeguard')
	  AND repo_id IS NOT DISTINCT FROM ` + runRepository + `
	ORDER BY updated_at DESC, pr_number, fingerprint LIMIT $3`

// Dismissals returns the findings writers dismissed in repository repo,
// on any pull request, most recent first, at most limit: those of the
// repository run runID is of (by GitHub's id of the repository, when the
// run has one).
func (s *Store) Dismissals(ctx context.Context, repo, runID string, limit int) ([]memory.Dismissal, error) {
	if !validID(runID) {
		return nil, fmt.Errorf("read dismissals of %s for run %q: %w", repo, runID, ErrNotFound)
	}
	rows, err := s.pool.Query(ctx, selectDismissals, repo, runID, limit)
	if err != nil {
		return nil, fmt.Errorf("read dismissals of %s: %w", repo, err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (memory.Dismissal, error) {
		var d memory.Dismissal
		err := row.Scan(&d.PRNumber, &d.Fingerprint, &d.Finding, &d.By, &d.How, &d.At, &d.CommentID)
		d.Finding.Fingerprint, d.At = d.Fingerprint, d.At.UTC()
		return d, err
	})
	if err != nil {
		return nil, fmt.Errorf("read dismissals of %s: %w", repo, err)
	}
	return out, nil
}

const selectRevivals = `SELECT finding, revived_by, revived_at FROM finding_revivals
	WHERE repository = $1 AND repo_id IS NOT DISTINCT FROM ` + runRepository + `
	ORDER BY revived_at DESC, id DESC LIMIT $3`

// Revivals returns the repository's most recent revivals of suppressed
// findings, at most limit, as Dismissals reads its dismissals.
func (s *Store) Revivals(ctx context.Context, repo, runID string, limit int) ([]memory.Revival, error) {
	if !validID(runID) {
		return nil, fmt.Errorf("read revivals of %s for run %q: %w", repo, runID, ErrNotFound)
	}
	rows, err := s.pool.Query(ctx, selectRevivals, repo, runID, limit)
	if err != nil {
		return nil, fmt.Errorf("read revivals of %s: %w", repo, err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (memory.Revival, error) {
		var r memory.Revival
		err := row.Scan(&r.Finding, &r.By, &r.At)
		r.At = r.At.UTC()
		return r, err
	})
	if err != nil {
		return nil, fmt.Errorf("read revivals of %s: %w", repo, err)
	}
	return out, nil
}

// recordSuppressed keeps one row per finding of a pull request: a later
// review that suppresses it again replaces its matches and ends a revival
// shown on it (the revival itself stays in finding_revivals).
const recordSuppressed = `INSERT INTO suppressed_findings AS s
	    (repository, pr_number, fingerprint, repo_id, finding, matches, head_sha, run_id)
	SELECT $1, $2, x.fingerprint, (SELECT repo_id FROM review_runs WHERE id = $3::uuid), x.finding, x.matches, $4, $3::uuid
	FROM jsonb_to_recordset($5::jsonb) AS x (fingerprint text, finding jsonb, matches jsonb)
	ON CONFLICT (repository, pr_number, fingerprint) DO UPDATE SET
	    repo_id = COALESCE(EXCLUDED.repo_id, s.repo_id), finding = EXCLUDED.finding, matches = EXCLUDED.matches,
	    head_sha = EXCLUDED.head_sha, run_id = EXCLUDED.run_id, updated_at = now(), revived_by = '', revived_at = NULL`

// RecordSuppressed records the findings run runID did not post on pull
// request number of repo at head, with the dismissals each matched.
func (s *Store) RecordSuppressed(ctx context.Context, repo string, number int, runID, head string, sup []memory.Suppressed) error {
	if len(sup) == 0 {
		return nil
	}
	if !validID(runID) {
		return fmt.Errorf("record suppressed findings of run %q: %w", runID, ErrNotFound)
	}
	type row struct {
		Fingerprint string         `json:"fingerprint"`
		Finding     review.Finding `json:"finding"`
		Matches     []memory.Match `json:"matches"`
	}
	rows := make([]row, len(sup))
	for i, x := range sup {
		rows[i] = row{Fingerprint: x.Finding.Fingerprint, Finding: x.Finding, Matches: x.Matches}
	}
	doc, err := json.Marshal(rows)
	if err != nil {
		return fmt.Errorf("record suppressed findings of %s#%d: %w", repo, number, err)
	}
	if _, err := s.pool.Exec(ctx, recordSuppressed, repo, number, runID, head, doc); err != nil {
		return fmt.Errorf("record suppressed findings of %s#%d: %w", repo, number, err)
	}
	return nil
}

// SuppressedFinding is a finding a review of a pull request did not post,
// with the dismissals it matched, and its revival.
type SuppressedFinding struct {
	memory.Suppressed
	HeadSHA   string    `json:"head_sha"`
	RunID     string    `json:"run_id,omitempty"`
	UpdatedAt time.Time `json:"updated_at"`
	RevivedBy string    `json:"revived_by,omitempty"`
	// RevivedAt is when a writer revived it; nil while it is suppressed.
	RevivedAt *time.Time `json:"revived_at,omitempty"`
}

// MaxSuppressedShown bounds the suppressed findings read of one pull
// request.
const MaxSuppressedShown = 200

// Suppressed returns the findings reviews of pull request number of repo
// did not post, newest first.
func (s *Store) Suppressed(ctx context.Context, repo string, number int) ([]SuppressedFinding, error) {
	rows, err := s.pool.Query(ctx, `SELECT finding, matches, head_sha, COALESCE(run_id::text, ''), updated_at, revived_by, revived_at
		FROM suppressed_findings WHERE repository = $1 AND pr_number = $2
		ORDER BY updated_at DESC, fingerprint LIMIT $3`, repo, number, MaxSuppressedShown)
	if err != nil {
		return nil, fmt.Errorf("read suppressed findings of %s#%d: %w", repo, number, err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (SuppressedFinding, error) {
		var f SuppressedFinding
		err := row.Scan(&f.Finding, &f.Matches, &f.HeadSHA, &f.RunID, &f.UpdatedAt, &f.RevivedBy, &f.RevivedAt)
		return f, err
	})
	if err != nil {
		return nil, fmt.Errorf("read suppressed findings of %s#%d: %w", repo, number, err)
	}
	return out, nil
}

// Revive records that by revived suppressed finding fingerprint of pull
// request number of repo: from the next review on, the dismissals made
// before now that are similar to it, and every one for findings similar
// to it, no longer suppress anything. It reports whether the finding was
// suppressed (false for a finding never suppressed or already revived).
func (s *Store) Revive(ctx context.Context, repo string, number int, fingerprint, by string) (bool, error) {
	if by == "" {
		return false, fmt.Errorf("revive %s of %s#%d: who revives it is required", fingerprint, repo, number)
	}
	var revived bool
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `INSERT INTO finding_revivals (repository, pr_number, fingerprint, repo_id, finding, revived_by, revived_at)
			SELECT repository, pr_number, fingerprint, repo_id, finding, $4, clock_timestamp() FROM suppressed_findings
			WHERE repository = $1 AND pr_number = $2 AND fingerprint = $3 AND revived_at IS NULL`, repo, number, fingerprint, by)
		if err != nil || tag.RowsAffected() == 0 {
			return err
		}
		revived = true
		_, err = tx.Exec(ctx, `UPDATE suppressed_findings SET revived_by = $4, revived_at = clock_timestamp()
			WHERE repository = $1 AND pr_number = $2 AND fingerprint = $3`, repo, number, fingerprint, by)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("revive %s of %s#%d: %w", fingerprint, repo, number, err)
	}
	return revived, nil
}
