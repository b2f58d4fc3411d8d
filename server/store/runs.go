package store

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/mergeguard/mergeguard/review"
)

// Mode says what a run reviews.
type Mode string

// Modes of a run.
const (
	ModePR    Mode = "pr"    // a GitHub pull request
	ModeDiff  Mode = "diff"  // a diff text posted to the API
	ModeLocal Mode = "local" // local changes (CLI)
	// ModeAnswer answers a person's question on a pull request (a reply in
	// a MergeGuard thread, /mergeguard ask); its options are the
	// review.Question.
	ModeAnswer Mode = "answer"
)

// Trigger says what asked for a run.
type Trigger string

// Triggers of a run.
const (
	TriggerWebhook Trigger = "webhook" // a pull request event
	TriggerCommand Trigger = "command" // a /mergeguard comment command
	TriggerAPI     Trigger = "api"     // POST /api/review
	TriggerCLI     Trigger = "cli"     // mergeguard review
)

// Status is where a run is in its life. Queued and running runs are jobs;
// the other statuses are final.
type Status string

// Statuses of a run.
const (
	StatusQueued     Status = "queued"
	StatusRunning    Status = "running"
	StatusSucceeded  Status = "succeeded"
	StatusFailed     Status = "failed"
	StatusSkipped    Status = "skipped"
	StatusSuperseded Status = "superseded" // a newer head of the pull request arrived
)

// Final reports whether s ends a run.
func (s Status) Final() bool { return s != StatusQueued && s != StatusRunning }

// DefaultMaxAttempts is how many times a run is tried when NewRun.MaxAttempts
// is zero.
const DefaultMaxAttempts = 3

// NewRun asks for a review run.
type NewRun struct {
	Mode    Mode
	Trigger Trigger
	// InstallationID, Repository (owner/name) and PRNumber identify the pull
	// request of a pr run; Repository and PRNumber are required for it.
	InstallationID int64
	Repository     string
	// RepositoryID is GitHub's id of Repository (0 when unknown: diff runs,
	// runs recorded before 000010); visibility is decided on it.
	RepositoryID int64
	PRNumber     int
	HeadSHA      string
	BaseSHA      string
	Branch       string
	// DeliveryID is the webhook delivery that asked for the run, if any
	// (RecordDelivery sets it).
	DeliveryID  string
	RequestedBy string
	// Options is a JSON object of review options; nil means {}.
	Options json.RawMessage
	// DiffText is the diff of a diff run.
	DiffText    *string
	MaxAttempts int
}

// ReviewOptions are the review options of a review run (its Options);
// none are the zero options.
func (r Run) ReviewOptions() (review.Options, error) {
	var o review.Options
	if len(r.Options) > 0 {
		if err := json.Unmarshal(r.Options, &o); err != nil {
			return review.Options{}, fmt.Errorf("decode the options of run %s: %w", r.ID, err)
		}
	}
	return o, nil
}

// Question is the question of an answer run (its Options).
func (r Run) Question() (review.Question, error) {
	var q review.Question
	if err := json.Unmarshal(r.Options, &q); err != nil {
		return review.Question{}, fmt.Errorf("decode the question of run %s: %w", r.ID, err)
	}
	return q, nil
}

// Run is one review run: the job while it is queued or running, the record of
// the review afterwards.
type Run struct {
	ID              string          `db:"id"`
	Mode            Mode            `db:"mode"`
	Trigger         Trigger         `db:"trigger"`
	Status          Status          `db:"status"`
	StatusReason    string          `db:"status_reason"`
	InstallationID  int64           `db:"installation_id"`
	Repository      string          `db:"repository"`
	RepositoryID    int64           `db:"repo_id"` // 0: unknown (token holders only)
	PRNumber        int             `db:"pr_number"`
	HeadSHA         string          `db:"head_sha"`
	BaseSHA         string          `db:"base_sha"`
	Branch          string          `db:"branch"`
	DeliveryID      string          `db:"delivery_id"`
	RequestedBy     string          `db:"requested_by"`
	Options         json.RawMessage `db:"options"`
	DiffText        *string         `db:"diff_text"`
	Attempts        int             `db:"attempts"`
	MaxAttempts     int             `db:"max_attempts"`
	RunAfter        time.Time       `db:"run_after"`
	LockedBy        string          `db:"locked_by"`
	LeaseExpiresAt  *time.Time      `db:"lease_expires_at"`
	CancelRequested bool            `db:"cancel_requested"`
	Verdict         review.Decision `db:"verdict"`
	Summary         string          `db:"summary"`
	Confidence      float64         `db:"confidence"`
	// Result is the stored ReviewVerdict, nil until a run finishes with one.
	Result         *review.Verdict `db:"result"`
	Error          string          `db:"error"`
	Model          string          `db:"model"`
	InputTokens    int             `db:"input_tokens"`
	OutputTokens   int             `db:"output_tokens"`
	TotalCost      float64         `db:"total_cost"`
	EventSeq       int             `db:"event_seq"`
	PostStartedAt  *time.Time      `db:"post_started_at"`
	PostedReviewID int64           `db:"posted_review_id"`
	PostedAt       *time.Time      `db:"posted_at"`
	CreatedAt      time.Time       `db:"created_at"`
	StartedAt      *time.Time      `db:"started_at"`
	FinishedAt     *time.Time      `db:"finished_at"`
	DurationMS     int64           `db:"duration_ms"`
	// ReviewKind, KindReason, SinceSHA and ConfigDigest are the run's
	// review.Scope; CheckRunID its check run, 0 before it has one.
	ReviewKind   string `db:"review_kind"`
	KindReason   string `db:"kind_reason"`
	SinceSHA     string `db:"since_sha"`
	ConfigDigest string `db:"config_digest"`
	CheckRunID   int64  `db:"check_run_id"`
	// Answer, AnswerCommentID and Classification are what an answer run
	// posted and how it read the reply.
	Answer          string                `db:"answer"`
	AnswerCommentID int64                 `db:"answer_comment_id"`
	Classification  review.Classification `db:"classification"`
}

// runColumns selects a review_runs row as a Run.
const runColumns = `
	id::text AS id, mode, trigger, status, status_reason,
	COALESCE(installation_id, 0) AS installation_id, COALESCE(repository, '') AS repository,
	COALESCE(pr_number, 0) AS pr_number, head_sha, base_sha, branch,
	COALESCE(delivery_id, '') AS delivery_id, requested_by, options, diff_text,
	attempts, max_attempts, run_after, COALESCE(locked_by, '') AS locked_by, lease_expires_at,
	cancel_requested, COALESCE(verdict, '') AS verdict, summary, COALESCE(confidence, 0) AS confidence,
	result, error, model, input_tokens, output_tokens, total_cost, event_seq,
	post_started_at, COALESCE(posted_review_id, 0) AS posted_review_id, posted_at,
	created_at, started_at, finished_at, COALESCE(duration_ms, 0) AS duration_ms,
	review_kind, kind_reason, since_sha, config_digest, COALESCE(check_run_id, 0) AS check_run_id,
	answer, COALESCE(answer_comment_id, 0) AS answer_comment_id, classification,
	COALESCE(repo_id, 0) AS repo_id`

// insertArgs are the values of insertRun's parameters, with defaults
// applied.
func (r NewRun) insertArgs() []any {
	if r.MaxAttempts == 0 {
		r.MaxAttempts = DefaultMaxAttempts
	}
	if r.Options == nil {
		r.Options = json.RawMessage(`{}`)
	}
	return []any{
		r.Mode, r.Trigger, nullIfZero(r.InstallationID), nullIfEmpty(r.Repository), nullIfZero(r.PRNumber),
		r.HeadSHA, r.BaseSHA, r.Branch, nullIfEmpty(r.DeliveryID), r.RequestedBy, r.Options, r.DiffText,
		r.MaxAttempts, nullIfZero(r.RepositoryID),
	}
}

// querier is what the run queries need: a pool or a transaction.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// queryRun runs a query returning runColumns and collects the one row;
// pgx.ErrNoRows when there is none.
func queryRun(ctx context.Context, q querier, sql string, args ...any) (Run, error) {
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return Run{}, err
	}
	return pgx.CollectOneRow(rows, pgx.RowToStructByName[Run])
}

// EnqueueRun queues a review run. For a pull request run it also:
//   - returns the already queued run instead when one exists for the same
//     head SHA and trigger (except for the command trigger: a rerun runs again);
//   - supersedes every other queued run of the pull request;
//   - asks a running run of the pull request at another head to stop
//     (cancel_requested; its worker records it superseded). A run without a
//     head SHA is not a newer head: it waits for the running run.
//
// Enqueues of one pull request are serialized by a transaction advisory lock.
func (s *Store) EnqueueRun(ctx context.Context, r NewRun) (Run, error) {
	var run Run
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var err error
		run, err = enqueue(ctx, tx, r)
		return err
	})
	if err != nil {
		return Run{}, fmt.Errorf("enqueue %s run: %w", r.Mode, err)
	}
	return run, nil
}

const (
	lockPullRequest = `SELECT pg_advisory_xact_lock(hashtextextended('review_runs:' || $1 || '#' || $2::int, 0))`

	selectQueuedTwin = `SELECT ` + runColumns + ` FROM review_runs
		WHERE status = 'queued' AND mode = 'pr' AND repository = $1 AND pr_number = $2 AND head_sha = $3 AND trigger = $4
		ORDER BY created_at DESC LIMIT 1`

	insertRun = `INSERT INTO review_runs
		(mode, trigger, installation_id, repository, pr_number, head_sha, base_sha, branch,
		 delivery_id, requested_by, options, diff_text, max_attempts, repo_id)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
		RETURNING ` + runColumns

	supersedeQueued = `UPDATE review_runs
		SET status = 'superseded', status_reason = 'superseded by ' || $3 || ' (head ' || $4 || ')',
		    finished_at = now()
		WHERE status = 'queued' AND mode = 'pr' AND repository = $1 AND pr_number = $2 AND id <> $3::uuid`

	// Runs after supersedeQueued, so a run claimed meanwhile is seen running.
	cancelRunning = `UPDATE review_runs SET cancel_requested = true
		WHERE status = 'running' AND mode = 'pr' AND repository = $1 AND pr_number = $2 AND $3 <> '' AND head_sha <> $3`
)

// enqueue is EnqueueRun inside tx: an identical queued run is returned
// instead of a new one.
func enqueue(ctx context.Context, tx pgx.Tx, r NewRun) (run Run, err error) {
	pr := r.Mode == ModePR
	if pr {
		if _, err := tx.Exec(ctx, lockPullRequest, r.Repository, r.PRNumber); err != nil {
			return Run{}, err
		}
		if r.Trigger != TriggerCommand {
			twin, err := queryRun(ctx, tx, selectQueuedTwin, r.Repository, r.PRNumber, r.HeadSHA, r.Trigger)
			if err == nil {
				return twin, nil
			}
			if !errors.Is(err, pgx.ErrNoRows) {
				return Run{}, err
			}
		}
	}
	run, err = queryRun(ctx, tx, insertRun, r.insertArgs()...)
	if err != nil {
		return Run{}, err
	}
	if pr {
		if _, err := tx.Exec(ctx, supersedeQueued, r.Repository, r.PRNumber, run.ID, r.HeadSHA); err != nil {
			return Run{}, err
		}
		if _, err := tx.Exec(ctx, cancelRunning, r.Repository, r.PRNumber, r.HeadSHA); err != nil {
			return Run{}, err
		}
	}
	return run, nil
}

// Delivery is one webhook delivery as recorded at intake.
type Delivery struct {
	// ID is the X-GitHub-Delivery header; required.
	ID             string
	Event          string
	Action         string
	InstallationID int64
	Repository     string
	// RepositoryID is GitHub's id of Repository (0 when unknown). It is not
	// kept with the delivery: the webhook handlers copy it into the runs
	// they ask for (NewRun.RepositoryID).
	RepositoryID int64
	// Outcome and Detail say what intake did with the delivery (for example
	// "ignored", "draft pull request"). RecordDelivery sets them when it
	// enqueues a run. An empty Outcome is stored as "received".
	Outcome string
	Detail  string
	// PRNumber and HeadSHA are the pull request and head the delivery is
	// about, when it is about one (RecordDelivery takes them from the run
	// when they are not set).
	PRNumber int
	HeadSHA  string
	// Sender and Command are the author and name of a comment command
	// (RecordCommand sets them).
	Sender  string
	Command string
}

// Delivery outcomes set by RecordDelivery.
const (
	OutcomeReceived     = "received"
	OutcomeQueued       = "queued"       // a new run was queued
	OutcomeDeduplicated = "deduplicated" // an identical run was already queued
	// OutcomeDuplicate is a pull_request delivery replaying one recorded
	// within ReplayWindow under another delivery id: nothing was queued.
	OutcomeDuplicate = "duplicate"
)

// DeliveryResult is what RecordDelivery did.
type DeliveryResult struct {
	// Duplicate is true when the delivery was already recorded: nothing else
	// happened.
	Duplicate bool
	// Run is the queued run when a run was asked for.
	Run *Run
	// Reused is true when Run is an identical run queued earlier.
	Reused bool
	// ReplayOf is the delivery that a replayed pull_request delivery
	// repeats (recorded OutcomeDuplicate, no run queued); "" otherwise.
	ReplayOf string
}

const (
	insertDelivery = `INSERT INTO webhook_deliveries
		(delivery_id, event, action, installation_id, repository, outcome, detail,
		 pr_number, head_sha, sender, command)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
		ON CONFLICT (delivery_id) DO NOTHING`

	setDeliveryOutcome = `UPDATE webhook_deliveries SET outcome = $2, detail = $3 WHERE delivery_id = $1`
)

// RecordDelivery records a webhook delivery and, when run is not nil and the
// delivery is new, enqueues the run (as EnqueueRun does, with run.DeliveryID
// set to d.ID), all in one transaction. A redelivery is reported Duplicate
// and changes nothing. A webhook-triggered run whose delivery repeats one
// recorded within ReplayWindow — same repository, pull request, event,
// action and head SHA under another delivery id — is not queued: the
// delivery is recorded OutcomeDuplicate and reported in ReplayOf.
//
// A delivery is a batch of one: it is recorded as Intake records the
// deliveries of a batch (batch.go), in one round trip.
func (s *Store) RecordDelivery(ctx context.Context, d Delivery, run *NewRun) (DeliveryResult, error) {
	res, err := s.recordBatch(ctx, []batchItem{{d: d, run: run}})
	if err != nil {
		return DeliveryResult{}, fmt.Errorf("record delivery %s: %w", d.ID, err)
	}
	return res[0], nil
}

// normalized is d as RecordDelivery stores it: outcome received when
// unset, the pull request and head taken from a pull request run.
func (d Delivery) normalized(run *NewRun) Delivery {
	if d.Outcome == "" {
		d.Outcome = OutcomeReceived
	}
	if run != nil && run.Mode == ModePR {
		d.PRNumber = cmp.Or(d.PRNumber, run.PRNumber)
		d.HeadSHA = cmp.Or(d.HeadSHA, run.HeadSHA)
	}
	return d
}

// reusedDetailAround is what the detail of a delivery whose run of head
// was already queued has before and after that run's id.
func reusedDetailAround(head string) (before, after string) {
	return "run ", " already queued for head " + head
}

// replayDetailAround is what the detail of a delivery d that replays
// another has before and after that delivery's id.
func replayDetailAround(d Delivery) (before, after string) {
	return "replays delivery ", " (" + d.Event + " " + d.Action + " of head " + d.HeadSHA + ")"
}

// insertDeliveryTx records d inside tx; isNew is false when a delivery of
// that id is already recorded (nothing is written then).
func insertDeliveryTx(ctx context.Context, tx pgx.Tx, d Delivery) (isNew bool, err error) {
	tag, err := tx.Exec(ctx, insertDelivery, d.ID, d.Event, d.Action,
		nullIfZero(d.InstallationID), nullIfEmpty(d.Repository), d.Outcome, d.Detail,
		nullIfZero(max(d.PRNumber, 0)), d.HeadSHA, d.Sender, d.Command)
	if err != nil {
		return false, err
	}
	return tag.RowsAffected() == 1, nil
}

// GetRun returns the run with the given id, or ErrNotFound.
func (s *Store) GetRun(ctx context.Context, id string) (Run, error) {
	if !validID(id) {
		return Run{}, fmt.Errorf("get run %q: %w", id, ErrNotFound)
	}
	run, err := queryRun(ctx, s.pool, `SELECT `+runColumns+` FROM review_runs WHERE id = $1`, id)
	if errors.Is(err, pgx.ErrNoRows) {
		return Run{}, fmt.Errorf("get run %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return Run{}, fmt.Errorf("get run %s: %w", id, err)
	}
	return run, nil
}

// repositoryIDs: the distinct ids of a name's runs, newest first.
const repositoryIDs = `SELECT repo_id FROM review_runs
	WHERE repository = $1 AND ($2 = 0 OR pr_number = $2) AND repo_id IS NOT NULL
	GROUP BY repo_id ORDER BY max(created_at) DESC LIMIT 2`

// RepositoryIDs returns GitHub's ids of the repositories the runs stored
// under name repo (of pull request number; 0 for all) were of, newest
// first, at most two: none when no run has an id (runs stored before
// MergeGuard kept ids), two when the name passed from one repository to
// another (renamed, transferred or deleted, and another took the name).
func (s *Store) RepositoryIDs(ctx context.Context, repo string, number int) ([]int64, error) {
	rows, err := s.pool.Query(ctx, repositoryIDs, repo, number)
	if err != nil {
		return nil, fmt.Errorf("repository ids of %s: %w", repo, err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return nil, fmt.Errorf("repository ids of %s: %w", repo, err)
	}
	return ids, nil
}

// repositoryIDsOf: repositoryIDs of every name of $1 at once.
const repositoryIDsOf = `SELECT repository, (array_agg(repo_id ORDER BY last DESC))[1:2] FROM (
	    SELECT repository, repo_id, max(created_at) AS last FROM review_runs
	    WHERE repository = ANY($1) AND repo_id IS NOT NULL GROUP BY repository, repo_id) r
	GROUP BY repository`

// RepositoryIDsOf is RepositoryIDs (of all pull requests) of each of
// names, in one query; a name without ids is left out.
func (s *Store) RepositoryIDsOf(ctx context.Context, names []string) (map[string][]int64, error) {
	rows, err := s.pool.Query(ctx, repositoryIDsOf, names)
	if err != nil {
		return nil, fmt.Errorf("repository ids of %d names: %w", len(names), err)
	}
	ids := map[string][]int64{}
	var (
		name string
		got  []int64
	)
	if _, err := pgx.ForEachRow(rows, []any{&name, &got}, func() error {
		ids[name] = got
		return nil
	}); err != nil {
		return nil, fmt.Errorf("repository ids of %d names: %w", len(names), err)
	}
	return ids, nil
}

// renameRepository moves the learnings kept under the old names of
// repository id $1 (the names its runs were stored under) to its name $2,
// when no other repository's runs, nor runs without an id, were kept under
// that name.
const renameRepository = `WITH old AS (
	    SELECT DISTINCT repository FROM review_runs WHERE repo_id = $1 AND repository <> $2)
	UPDATE learnings l SET repository = $2, updated_at = now()
	WHERE l.repository IN (SELECT repository FROM old)
	  AND NOT EXISTS (SELECT 1 FROM review_runs r
	                  WHERE r.repository = l.repository AND r.repo_id IS DISTINCT FROM $1)`

// RenameRepository follows a repository renamed or transferred on GitHub
// (GitHub's repository id id, new name owner/name): the learnings kept
// under an old name that only this repository's runs used take the new
// name, so that its next reviews apply them. Runs and the pull requests'
// finding ledgers keep the name they were made under, together: moving
// the runs alone would make the next review of a pull request incremental
// on an empty ledger, dropping its open findings from the gate. It
// returns how many learnings it moved.
func (s *Store) RenameRepository(ctx context.Context, id int64, name string) (int64, error) {
	if id <= 0 || name == "" {
		return 0, fmt.Errorf("rename repository %d to %q: id and name required", id, name)
	}
	tag, err := s.pool.Exec(ctx, renameRepository, id, name)
	if err != nil {
		return 0, fmt.Errorf("rename repository %d to %s: %w", id, name, err)
	}
	return tag.RowsAffected(), nil
}

// RunFilter selects runs for ListRuns; zero fields match everything.
type RunFilter struct {
	Repository string
	PRNumber   int
	Status     Status
	// Limit caps the number of runs (default 50, at most 1000).
	Limit int
}

const listRuns = `SELECT ` + runColumns + ` FROM review_runs
	WHERE ($1 = '' OR repository = $1)
	  AND ($2 = 0 OR pr_number = $2)
	  AND ($3 = '' OR status = $3)
	ORDER BY created_at DESC, id DESC
	LIMIT $4`

// ListRuns returns the runs matching f, newest first.
func (s *Store) ListRuns(ctx context.Context, f RunFilter) ([]Run, error) {
	switch {
	case f.Limit <= 0:
		f.Limit = 50
	case f.Limit > 1000:
		f.Limit = 1000
	}
	rows, err := s.pool.Query(ctx, listRuns, f.Repository, f.PRNumber, string(f.Status), f.Limit)
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	runs, err := pgx.CollectRows(rows, pgx.RowToStructByName[Run])
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	return runs, nil
}
