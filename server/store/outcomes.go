package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/quality"
)

// This file keeps what became of the findings of closed pull requests
// (docs/quality.md): each ledger entry's outcome, set once when its pull
// request closes, and each pull request's last closing.

// SetOutcome is an outcome a closing gave a ledger entry, with what
// quality reports and metrics break it down by.
type SetOutcome struct {
	Fingerprint string
	Severity    review.Severity
	Category    review.Category
	// Source is the model of the run that first reported the finding, or
	// its analyzer (review.FindingSource).
	Source string
	// Arm is the experiment arm of the run that first reported it ("" for
	// a run from before arms were recorded).
	Arm string
	review.FindingOutcome
}

const (
	// upsertClosing keeps a pull request's last closing: an older one,
	// delivered late, changes nothing.
	upsertClosing = `INSERT INTO pr_closings AS c (repository, pr_number, installation_id, repo_id, merged, closed_at)
		VALUES ($1, $2, NULLIF($3::bigint, 0), NULLIF($4::bigint, 0), $5, $6)
		ON CONFLICT (repository, pr_number) DO UPDATE SET
		    installation_id = COALESCE(EXCLUDED.installation_id, c.installation_id),
		    repo_id = COALESCE(EXCLUDED.repo_id, c.repo_id),
		    merged = EXCLUDED.merged, closed_at = EXCLUDED.closed_at
		WHERE EXCLUDED.closed_at > c.closed_at`

	// selectWithoutOutcome reads the entries of a pull request that have
	// no outcome yet, locked, with the model, prompt version and arm of
	// the run that first reported each.
	selectWithoutOutcome = `SELECT p.fingerprint, p.state, p.state_how, p.finding,
		    COALESCE(r.model, ''), COALESCE(r.prompt_version, ''), COALESCE(r.arm, '')
		FROM pr_findings p LEFT JOIN review_runs r ON r.id = p.first_run_id WHERE p.repository = $1 AND p.pr_number = $2 AND p.outcome IS NULL
		ORDER BY p.fingerprint FOR UPDATE OF p`

	// updateOutcomes sets the outcomes of entries that have none, in one
	// statement.
	updateOutcomes = `UPDATE pr_findings p SET outcome = e.outcome, outcome_how = e.how,
		    outcome_source = e.source, outcome_arm = e.arm, outcome_merged = $3, outcome_at = $4
		FROM jsonb_to_recordset($5::jsonb) AS e(fingerprint text, outcome text, how text, source text, arm text)
		WHERE p.repository = $1 AND p.pr_number = $2 AND p.fingerprint = e.fingerprint AND p.outcome IS NULL`
)

// outcomeRow is one outcome as updateOutcomes reads it.
type outcomeRow struct {
	Fingerprint string         `json:"fingerprint"`
	Outcome     review.Outcome `json:"outcome"`
	How         string         `json:"how"`
	Source      string         `json:"source"`
	Arm         string         `json:"arm"`
}

// setOutcomes gives every ledger entry of the closed pull request that has
// no outcome the one review.OutcomeOf decides, inside tx, and returns them.
func setOutcomes(ctx context.Context, tx pgx.Tx, repo string, c Closing) ([]SetOutcome, error) {
	rows, err := tx.Query(ctx, selectWithoutOutcome, repo, c.Number)
	if err != nil {
		return nil, fmt.Errorf("read ledger entries without an outcome: %w", err)
	}
	set, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (SetOutcome, error) {
		var (
			e                      review.LedgerEntry
			fp, model, prompt, arm string
		)
		if err := row.Scan(&fp, &e.State, &e.StateHow, &e.Finding, &model, &prompt, &arm); err != nil {
			return SetOutcome{}, err
		}
		return SetOutcome{Fingerprint: fp, Severity: e.Finding.Severity, Category: e.Finding.Category,
			Source: review.FindingSource(e.Finding, model, prompt), Arm: arm, FindingOutcome: review.OutcomeOf(e, c.Merged)}, nil
	})
	if err != nil {
		return nil, fmt.Errorf("read ledger entries without an outcome: %w", err)
	}
	if len(set) == 0 {
		return nil, nil
	}
	doc := make([]outcomeRow, len(set))
	for i, o := range set {
		doc[i] = outcomeRow{Fingerprint: o.Fingerprint, Outcome: o.Outcome, How: o.How, Source: o.Source, Arm: o.Arm}
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("outcomes: %w", err)
	}
	if _, err := tx.Exec(ctx, updateOutcomes, repo, c.Number, c.Merged, c.At, b); err != nil {
		return nil, fmt.Errorf("set outcomes: %w", err)
	}
	return set, nil
}

// MaxQualityFindings caps the findings Quality reads: a window with more
// is reported on its oldest MaxQualityFindings (QualityData.Truncated).
const MaxQualityFindings = 200_000

// QualityData is what quality reports are computed from
// (review/quality.Compute).
type QualityData struct {
	Findings     []quality.Finding
	PullRequests []quality.PullRequest
	// Truncated says the window held more than MaxQualityFindings.
	Truncated bool
}

const (
	selectOutcomes = `SELECT repository, pr_number, severity, category, outcome_source, outcome_arm, outcome, outcome_how,
	    outcome_merged, outcome_at
	FROM pr_findings WHERE outcome IS NOT NULL AND outcome_at >= $1 AND ($2 = '' OR repository = $2)
	ORDER BY outcome_at, repository, pr_number, fingerprint LIMIT $3`

	// selectClosings reads each pull request's last closing with the cost
	// of its runs, the arm of its first run that recorded one and the
	// durations of its succeeded runs (milliseconds).
	selectClosings = `SELECT c.repository, c.pr_number, c.merged, c.closed_at,
	    COALESCE((SELECT sum(r.total_cost) FROM review_runs r
	              WHERE r.repository = c.repository AND r.pr_number = c.pr_number AND r.mode = 'pr'), 0),
	    COALESCE((SELECT r.arm FROM review_runs r
	              WHERE r.repository = c.repository AND r.pr_number = c.pr_number AND r.mode = 'pr' AND r.arm <> ''
	              ORDER BY r.created_at, r.id LIMIT 1), ''),
	    COALESCE((SELECT array_agg(r.duration_ms ORDER BY r.created_at, r.id) FROM review_runs r
	              WHERE r.repository = c.repository AND r.pr_number = c.pr_number AND r.mode = 'pr'
	                AND r.status = 'succeeded' AND r.duration_ms IS NOT NULL), '{}')
	FROM pr_closings c WHERE c.closed_at >= $1 AND ($2 = '' OR c.repository = $2)
	ORDER BY c.closed_at, c.repository, c.pr_number`
)

// Quality reads the outcomes of the findings of pull requests closed since
// since, and those pull requests with what their runs cost: of repo
// (owner/name, exactly as stored), or of every repository when repo is "".
func (s *Store) Quality(ctx context.Context, repo string, since time.Time) (QualityData, error) {
	var q QualityData
	rows, err := s.pool.Query(ctx, selectOutcomes, since, repo, MaxQualityFindings+1)
	if err != nil {
		return q, fmt.Errorf("read finding outcomes: %w", err)
	}
	q.Findings, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (quality.Finding, error) {
		var f quality.Finding
		err := row.Scan(&f.Repository, &f.PRNumber, &f.Severity, &f.Category, &f.Source, &f.Arm, &f.Outcome, &f.How, &f.Merged, &f.At)
		return f, err
	})
	if err != nil {
		return q, fmt.Errorf("read finding outcomes: %w", err)
	}
	if len(q.Findings) > MaxQualityFindings {
		q.Findings, q.Truncated = q.Findings[:MaxQualityFindings], true
	}
	rows, err = s.pool.Query(ctx, selectClosings, since, repo)
	if err != nil {
		return q, fmt.Errorf("read closed pull requests: %w", err)
	}
	q.PullRequests, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (quality.PullRequest, error) {
		var (
			p  quality.PullRequest
			ms []int64
		)
		err := row.Scan(&p.Repository, &p.Number, &p.Merged, &p.ClosedAt, &p.Cost, &p.Arm, &ms)
		for _, d := range ms {
			p.RunDurations = append(p.RunDurations, time.Duration(d)*time.Millisecond)
		}
		return p, err
	})
	if err != nil {
		return q, fmt.Errorf("read closed pull requests: %w", err)
	}
	return q, nil
}
