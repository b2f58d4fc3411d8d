package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mergeguard/mergeguard/review"
)

// Claiming: each statement below is one implicit transaction. Candidates are
// locked with FOR UPDATE SKIP LOCKED, so concurrent claimers never wait on
// each other nor take the same run.
const (
	// reapExpired ends runs whose worker died (lease expired) and that must
	// not run again: attempts exhausted, or superseded meanwhile.
	reapExpired = `UPDATE review_runs SET
		    status = CASE WHEN cancel_requested THEN 'superseded' ELSE 'failed' END,
		    status_reason = CASE WHEN cancel_requested THEN 'superseded by a newer head; worker lost'
		                         ELSE 'gave up after ' || attempts || ' attempts' END,
		    error = CASE WHEN cancel_requested THEN error
		                 ELSE 'worker lost; gave up after ' || attempts || ' attempts' END,
		    lease_expires_at = NULL,
		    finished_at = now(),
		    duration_ms = (extract(epoch FROM now() - started_at) * 1000)::bigint
		WHERE id IN (
		    SELECT id FROM review_runs
		    WHERE status = 'running' AND lease_expires_at < now()
		      AND (attempts >= max_attempts OR cancel_requested)
		    FOR UPDATE SKIP LOCKED)
		RETURNING ` + runColumns

	// claimExpired takes over a run whose worker died.
	claimExpired = `UPDATE review_runs SET
		    locked_by = $1,
		    lease_expires_at = now() + $2 * interval '1 millisecond',
		    attempts = attempts + 1
		WHERE id = (
		    SELECT id FROM review_runs
		    WHERE status = 'running' AND lease_expires_at < now()
		      AND attempts < max_attempts AND NOT cancel_requested
		    ORDER BY lease_expires_at
		    LIMIT 1
		    FOR UPDATE SKIP LOCKED)
		RETURNING ` + runColumns

	// claimQueued takes the oldest ready run whose pull request has no
	// running run of its mode: reviews run one at a time per pull request,
	// answers too, beside them. Two claimers may still pick runs of one
	// pull request and mode at once; the second then violates
	// review_runs_one_running_per_pr or review_runs_one_answer_per_pr.
	claimQueued = `UPDATE review_runs SET
		    status = 'running',
		    locked_by = $1,
		    lease_expires_at = now() + $2 * interval '1 millisecond',
		    started_at = COALESCE(started_at, now()),
		    attempts = attempts + 1
		WHERE id = (
		    SELECT id FROM review_runs r
		    WHERE status = 'queued' AND run_after <= now()
		      AND NOT EXISTS (
		          SELECT 1 FROM review_runs o
		          WHERE o.status = 'running' AND o.mode = r.mode AND o.repository = r.repository AND o.pr_number = r.pr_number)
		    ORDER BY run_after, created_at
		    LIMIT 1
		    FOR UPDATE SKIP LOCKED)
		RETURNING ` + runColumns
)

// claimConflictRetries bounds how often ClaimRun retries after losing a race
// for a pull request; each retry sees the winner's run as running.
const claimConflictRetries = 5

// ReapRuns ends the runs whose worker died and that must not run again:
// expired runs that used up their attempts are recorded failed ("worker
// lost; gave up after N attempts"), expired runs a newer head cancelled are
// recorded superseded. It returns them, for the worker to tell their pull
// requests. Workers call it before ClaimRun: a run it has not ended keeps
// its pull request's other runs waiting.
func (s *Store) ReapRuns(ctx context.Context) ([]Run, error) {
	rows, err := s.pool.Query(ctx, reapExpired)
	if err != nil {
		return nil, fmt.Errorf("reap expired leases: %w", err)
	}
	runs, err := pgx.CollectRows(rows, pgx.RowToStructByName[Run])
	if err != nil {
		return nil, fmt.Errorf("reap expired leases: %w", err)
	}
	return runs, nil
}

// ClaimRun takes the next run for workerID and holds it for lease: first a
// run whose worker died (its lease expired) and that may run again, else
// the oldest queued run that is due and whose pull request has no running
// run. It counts an attempt, sets the run running and returns it; nil when
// there is nothing to do. Expired runs that may not run again are left to
// ReapRuns. workerID must be unique per worker.
func (s *Store) ClaimRun(ctx context.Context, workerID string, lease time.Duration) (*Run, error) {
	if lease <= 0 {
		return nil, fmt.Errorf("claim run: lease must be positive, got %v", lease)
	}
	run, err := queryRun(ctx, s.pool, claimExpired, workerID, lease.Milliseconds())
	if err == nil {
		return &run, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("claim run: %w", err)
	}
	for range claimConflictRetries {
		run, err := queryRun(ctx, s.pool, claimQueued, workerID, lease.Milliseconds())
		switch {
		case err == nil:
			return &run, nil
		case errors.Is(err, pgx.ErrNoRows):
			return nil, nil
		case !isViolation(err, "review_runs_one_running_per_pr") && !isViolation(err, "review_runs_one_answer_per_pr"):
			return nil, fmt.Errorf("claim run: %w", err)
		}
	}
	return nil, nil
}

const renewLease = `UPDATE review_runs SET lease_expires_at = now() + $3 * interval '1 millisecond'
	WHERE id = $1 AND status = 'running' AND locked_by = $2
	RETURNING cancel_requested`

// RenewLease extends workerID's lease on a run and reports whether a newer
// head asked the run to stop. ErrLeaseLost when the worker no longer holds
// the run.
func (s *Store) RenewLease(ctx context.Context, runID, workerID string, lease time.Duration) (cancelRequested bool, err error) {
	if !validID(runID) {
		return false, fmt.Errorf("renew lease of run %q: %w", runID, ErrNotFound)
	}
	if lease <= 0 {
		return false, fmt.Errorf("renew lease of run %s: lease must be positive, got %v", runID, lease)
	}
	err = s.pool.QueryRow(ctx, renewLease, runID, workerID, lease.Milliseconds()).Scan(&cancelRequested)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, fmt.Errorf("renew lease of run %s: %w", runID, ErrLeaseLost)
	}
	if err != nil {
		return false, fmt.Errorf("renew lease of run %s: %w", runID, err)
	}
	return cancelRequested, nil
}

const setRunHead = `UPDATE review_runs SET head_sha = $3, base_sha = $4, branch = $5
	WHERE id = $1 AND status = 'running' AND locked_by = $2`

// SetRunHead records the revision a run held by workerID reviews, as read
// from GitHub when the review starts, so that the run's record names what
// was reviewed and later enqueues compare their head with it. Only the
// lease holder may set it (ErrLeaseLost).
func (s *Store) SetRunHead(ctx context.Context, runID, workerID string, h review.PullHead) error {
	if !validID(runID) {
		return fmt.Errorf("set head of run %q: %w", runID, ErrNotFound)
	}
	tag, err := s.pool.Exec(ctx, setRunHead, runID, workerID, h.SHA, h.BaseSHA, h.Branch)
	if err != nil {
		return fmt.Errorf("set head of run %s: %w", runID, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("set head of run %s: %w", runID, ErrLeaseLost)
	}
	return nil
}

const retryRun = `UPDATE review_runs SET
	    status = CASE WHEN cancel_requested THEN 'superseded'
	                  WHEN attempts >= max_attempts THEN 'failed'
	                  ELSE 'queued' END,
	    status_reason = CASE WHEN cancel_requested THEN 'superseded by a newer head'
	                         WHEN attempts >= max_attempts THEN 'gave up after ' || attempts || ' attempts'
	                         ELSE 'attempt ' || attempts || ' failed; retrying' END,
	    error = $4,
	    run_after = CASE WHEN cancel_requested OR attempts >= max_attempts THEN run_after
	                     ELSE now() + $3 * interval '1 millisecond' END,
	    locked_by = CASE WHEN cancel_requested OR attempts >= max_attempts THEN locked_by END,
	    lease_expires_at = NULL,
	    finished_at = CASE WHEN cancel_requested OR attempts >= max_attempts THEN now() END,
	    duration_ms = CASE WHEN cancel_requested OR attempts >= max_attempts
	                       THEN (extract(epoch FROM now() - started_at) * 1000)::bigint END
	WHERE id = $1 AND status = 'running' AND locked_by = $2`

// RetryRun gives a run back after a failed attempt: it is queued again to
// run after the given delay, or recorded failed when its attempts are used
// up, or superseded when a newer head asked it to stop. errMsg is stored as
// the run's error. Only the lease holder may retry (ErrLeaseLost).
func (s *Store) RetryRun(ctx context.Context, runID, workerID string, after time.Duration, errMsg string) error {
	if !validID(runID) {
		return fmt.Errorf("retry run %q: %w", runID, ErrNotFound)
	}
	tag, err := s.pool.Exec(ctx, retryRun, runID, workerID, after.Milliseconds(), errMsg)
	if err != nil {
		return fmt.Errorf("retry run %s: %w", runID, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("retry run %s: %w", runID, ErrLeaseLost)
	}
	return nil
}

// Result is how a run ended, for FinishRun.
type Result struct {
	// Status is final: succeeded, failed, skipped or superseded.
	Status Status
	// Reason says why a run was skipped or superseded.
	Reason string
	// Error is the error of a failed run.
	Error string
	// Verdict is the review, nil when there is none. Its findings
	// (Verdict.Findings() then Verdict.FalsePositives) are stored, each with
	// a fingerprint.
	Verdict *review.Verdict
	// Agents are the agent results to store.
	Agents []review.AgentResult
	Model  string
	// Arm names the experiment arm that reviewed (llm.experiments;
	// "default" for llm.model) and PromptVersion its reviewer prompt's
	// version, with which a finding's source is named at its close
	// (review.FindingSource); "" when the run used no model.
	Arm, PromptVersion string
	Cost               review.CostInfo
	// Duration is the run's duration; zero means since the run started.
	Duration time.Duration
	// Posted is the review the run posted (after ClaimPost), nil when it
	// posted none.
	Posted *Posting
	// Scope says what a pull request run reviewed; zero for other runs.
	Scope review.Scope
	// Ledger are the entries of the pull request's finding ledger the run
	// added or changed; they are written in the transaction that records
	// the run.
	Ledger []review.LedgerEntry
	// Answer is what an answer run posted; nil for other runs.
	Answer *Answer
}

// Answer is what an answer run posted: its text, the comment it posted
// and how the model read the reply it answered.
type Answer struct {
	Text           string
	CommentID      int64
	Classification review.Classification
}

const (
	finishRun = `UPDATE review_runs SET
		    status = $3, status_reason = $4, error = $5,
		    verdict = $6, summary = $7, confidence = $8, stats = $9, result = $10,
		    model = $11, input_tokens = $12, output_tokens = $13, total_cost = $14,
		    duration_ms = COALESCE($15, (extract(epoch FROM now() - started_at) * 1000)::bigint),
		    review_kind = $16, kind_reason = $17, since_sha = $18, config_digest = $19,
		    answer = $20, answer_comment_id = $21, classification = $22,
		    arm = $23, prompt_version = $24,
		    lease_expires_at = NULL,
		    finished_at = now()
		WHERE id = $1 AND status = 'running' AND locked_by = $2
		RETURNING COALESCE(repository, ''), COALESCE(pr_number, 0)`

	insertFinding = `INSERT INTO findings
		(run_id, file_path, line_start, line_end, side, severity, category, title, description,
		 suggestion, verification_status, confidence, code_snippet, agent, reason, fingerprint)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)`

	insertAgentResult = `INSERT INTO agent_results
		(run_id, agent, stage, status, issues, elapsed_ms, turns, input_tokens, output_tokens,
		 total_cost, error, error_type, timeout_seconds)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`
)

// FinishRun records how a run held by workerID ended — status, verdict,
// findings, agent results, usage and the review it posted — in one
// transaction: anything the schema rejects rolls the whole finish back and
// the run stays running. Only the lease holder may finish (ErrLeaseLost).
func (s *Store) FinishRun(ctx context.Context, runID, workerID string, res Result) error {
	if !validID(runID) {
		return fmt.Errorf("finish run %q: %w", runID, ErrNotFound)
	}
	if !res.Status.Final() {
		return fmt.Errorf("finish run %s: status %q is not a final status", runID, res.Status)
	}
	var (
		decision   *review.Decision
		summary    string
		confidence *float64
		stats      *review.Stats
		findings   []review.Finding
		duration   *int64
	)
	if v := res.Verdict; v != nil {
		decision, summary, confidence, stats = &v.Verdict, v.Summary, &v.Confidence, &v.Stats
		findings = append(v.Findings(), v.FalsePositives...)
	}
	if res.Duration > 0 {
		ms := res.Duration.Milliseconds()
		duration = &ms
	}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var (
			repo   string
			number int
		)
		sc, ans := res.Scope, res.Answer
		if ans == nil {
			ans = &Answer{}
		}
		err := tx.QueryRow(ctx, finishRun, runID, workerID, res.Status, res.Reason, res.Error,
			decision, summary, confidence, stats, res.Verdict,
			res.Model, res.Cost.InputTokens, res.Cost.OutputTokens, res.Cost.TotalCost, duration,
			sc.Kind, sc.Reason, sc.SinceSHA, sc.ConfigDigest,
			ans.Text, nullIfZero(ans.CommentID), ans.Classification, res.Arm, res.PromptVersion).Scan(&repo, &number)
		if errors.Is(err, pgx.ErrNoRows) {
			return ErrLeaseLost
		}
		if err != nil {
			return err
		}
		if err := insertResults(ctx, tx, runID, findings, res.Agents); err != nil {
			return err
		}
		if err := writeLedger(ctx, tx, runID, repo, number, res.Ledger); err != nil {
			return err
		}
		if res.Posted != nil {
			return markPosted(ctx, tx, runID, *res.Posted)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("finish run %s: %w", runID, err)
	}
	return nil
}

// insertResults stores a run's findings and agent results in one batch.
func insertResults(ctx context.Context, tx pgx.Tx, runID string, findings []review.Finding, agents []review.AgentResult) error {
	b := &pgx.Batch{}
	for _, f := range findings {
		b.Queue(insertFinding, runID, f.FilePath, f.LineStart, f.LineEnd, f.Side, f.Severity, f.Category,
			f.Title, f.Description, f.Suggestion, f.VerificationStatus, f.Confidence, f.CodeSnippet,
			f.Agent, f.Reason, f.Fingerprint)
	}
	for _, a := range agents {
		var timeout *float64
		if a.Status == review.AgentTimeout {
			timeout = &a.TimeoutSeconds
		}
		b.Queue(insertAgentResult, runID, a.Agent, a.Stage, a.Status, a.Issues, a.ElapsedMS, a.Turns,
			a.Cost.InputTokens, a.Cost.OutputTokens, a.Cost.TotalCost, a.Error, a.ErrorType, timeout)
	}
	br := tx.SendBatch(ctx, b)
	for i := range b.Len() {
		if _, err := br.Exec(); err != nil {
			_ = br.Close() // reports the error already in hand
			if i < len(findings) {
				f := findings[i]
				return fmt.Errorf("store finding %q (%s:%d): %w", f.Fingerprint, f.FilePath, f.LineStart, err)
			}
			return fmt.Errorf("store result of agent %q: %w", agents[i-len(findings)].Agent, err)
		}
	}
	return br.Close()
}

// ClaimPost marks that workerID is about to post the run's review, once:
// alreadyStarted is true when an earlier attempt already started posting (the
// caller then looks for that review on GitHub instead of posting again).
// ErrCancelled when a newer head asked the run to stop before any posting
// began; ErrLeaseLost when the worker no longer holds the run.
func (s *Store) ClaimPost(ctx context.Context, runID, workerID string) (alreadyStarted bool, err error) {
	if !validID(runID) {
		return false, fmt.Errorf("claim post of run %q: %w", runID, ErrNotFound)
	}
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var cancelled bool
		err := tx.QueryRow(ctx, `SELECT post_started_at IS NOT NULL, cancel_requested FROM review_runs
			WHERE id = $1 AND status = 'running' AND locked_by = $2 FOR UPDATE`, runID, workerID).
			Scan(&alreadyStarted, &cancelled)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			return ErrLeaseLost
		case err != nil:
			return err
		case alreadyStarted:
			return nil
		case cancelled:
			return ErrCancelled
		}
		_, err = tx.Exec(ctx, `UPDATE review_runs SET post_started_at = now() WHERE id = $1`, runID)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("claim post of run %s: %w", runID, err)
	}
	return alreadyStarted, nil
}

// Posting is the GitHub review a run posted and where its findings went,
// keyed by fingerprint.
type Posting struct {
	ReviewID   int64
	Placements map[string]review.Placement
}

const (
	setPostedReview = `UPDATE review_runs SET posted_review_id = $2, posted_at = now() WHERE id = $1`

	placeFinding = `UPDATE findings SET posted = $3, github_comment_id = $4 WHERE run_id = $1 AND fingerprint = $2`
)

// markPosted records the GitHub review a run posted (after ClaimPost) and
// where each of its stored findings went, keyed by fingerprint, inside tx.
// A fingerprint the run has no finding for is an error.
func markPosted(ctx context.Context, tx pgx.Tx, runID string, p Posting) error {
	tag, err := tx.Exec(ctx, setPostedReview, runID, p.ReviewID)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return ErrNotFound
	}
	b := &pgx.Batch{}
	fingerprints := make([]string, 0, len(p.Placements))
	for fp, pl := range p.Placements {
		b.Queue(placeFinding, runID, fp, pl.Where, nullIfZero(pl.CommentID))
		fingerprints = append(fingerprints, fp)
	}
	br := tx.SendBatch(ctx, b)
	for _, fp := range fingerprints {
		tag, err := br.Exec()
		if err == nil && tag.RowsAffected() == 0 {
			err = errors.New("the run has no such finding")
		}
		if err != nil {
			_ = br.Close() // reports the error already in hand
			return fmt.Errorf("place finding %q: %w", fp, err)
		}
	}
	return br.Close()
}

const queueStats = `SELECT
	    count(*) FILTER (WHERE status = 'queued'),
	    count(*) FILTER (WHERE status = 'running'),
	    COALESCE(extract(epoch FROM now() - min(run_after) FILTER (WHERE status = 'queued' AND run_after <= now())), 0)::float8
	FROM review_runs WHERE status IN ('queued', 'running')`

// QueueStats counts queued and running runs and reports how long the oldest
// due queued run has waited since it became due.
func (s *Store) QueueStats(ctx context.Context) (queued, running int, oldestQueuedAge time.Duration, err error) {
	var age float64
	if err := s.pool.QueryRow(ctx, queueStats).Scan(&queued, &running, &age); err != nil {
		return 0, 0, 0, fmt.Errorf("queue stats: %w", err)
	}
	return queued, running, time.Duration(age * float64(time.Second)), nil
}
