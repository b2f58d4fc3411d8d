package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// The transaction of an Intake batch. It has the effect of recording the
// batch's deliveries one after the other, in order, with RecordDelivery:
//
//   - a delivery whose id came earlier in the batch is Duplicate;
//   - the pull requests of all deliveries are locked first, in the order
//     of their lock keys, so that concurrent batches never deadlock;
//   - the deliveries that are the only one of their pull request in the
//     batch (nearly all of them) and either queue nothing or queue a
//     webhook review of it are recorded with a few statements for the
//     whole batch ("bulk"): one statement (recordDeliveries) looks up
//     replays and queued twins for all of them at once, inserts the
//     deliveries with their outcomes and the runs, and supersedes and
//     cancels the pull requests' other runs; the next reads the runs.
//     Pull requests are disjoint, so their order does not matter. The
//     statements are pipelined (pgx.Batch) in one round trip, after the
//     lock. When every delivery of the batch is recorded so, BEGIN and
//     COMMIT travel with them: the whole batch costs one round trip,
//     whatever its size;
//   - every other delivery (several of one pull request, other runs) is
//     recorded after them, one at a time, as RecordDelivery does.

// batchPlan is a batch sorted into what is recorded how.
type batchPlan struct {
	items      []batchItem // normalized
	bulk       []int       // indexes recorded set-based
	sequential []int       // indexes recorded one at a time
	duplicates []int       // ids that came earlier in the batch
	lockRepos  []string    // the pull requests to lock
	lockPRs    []int
}

type prKey struct {
	repo   string
	number int
}

// planBatch normalizes items (as RecordDelivery does) and sorts them.
func planBatch(items []batchItem) batchPlan {
	p := batchPlan{items: make([]batchItem, len(items))}
	seen := make(map[string]bool, len(items))
	perPR := make(map[prKey]int, len(items))
	for i, it := range items {
		it.d = it.d.normalized(it.run)
		p.items[i] = it
		if seen[it.d.ID] {
			p.duplicates = append(p.duplicates, i)
			continue
		}
		seen[it.d.ID] = true
		for _, k := range it.prKeys() {
			if perPR[k] == 0 {
				p.lockRepos, p.lockPRs = append(p.lockRepos, k.repo), append(p.lockPRs, k.number)
			}
			perPR[k]++
		}
	}
	dup := 0
	for i, it := range p.items {
		if dup < len(p.duplicates) && p.duplicates[dup] == i {
			dup++
			continue
		}
		if it.bulk() && (!it.hasPR() || perPR[prKey{it.d.Repository, it.d.PRNumber}] == 1) {
			p.bulk = append(p.bulk, i)
		} else {
			p.sequential = append(p.sequential, i)
		}
	}
	return p
}

// hasPR reports whether the delivery is about a pull request.
func (it batchItem) hasPR() bool { return it.d.Repository != "" && it.d.PRNumber > 0 }

// prKeys are the pull requests the item's delivery and run are about.
func (it batchItem) prKeys() []prKey {
	var keys []prKey
	if it.hasPR() {
		keys = append(keys, prKey{it.d.Repository, it.d.PRNumber})
	}
	if r := it.run; r != nil && r.Mode == ModePR && (r.Repository != it.d.Repository || r.PRNumber != it.d.PRNumber) {
		keys = append(keys, prKey{r.Repository, r.PRNumber})
	}
	return keys
}

// bulk reports whether the item may be recorded set-based: it queues
// nothing, or a webhook review of the pull request its delivery is about.
func (it batchItem) bulk() bool {
	r := it.run
	if r == nil {
		return true
	}
	return r.Mode == ModePR && r.Trigger == TriggerWebhook && it.hasPR() &&
		r.Repository == it.d.Repository && r.PRNumber == it.d.PRNumber
}

// recordBatch records items in one transaction (see the top of the file)
// and returns their results, in order.
func (s *Store) recordBatch(ctx context.Context, items []batchItem) ([]DeliveryResult, error) {
	p := planBatch(items)
	results := make([]DeliveryResult, len(items))
	for _, i := range p.duplicates {
		results[i].Duplicate = true
	}
	var err error
	if len(p.sequential) == 0 {
		err = s.recordBulkOnly(ctx, p, results)
	} else {
		err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			if err := recordBulk(ctx, p, results, inTx{tx}); err != nil {
				return err
			}
			for _, i := range p.sequential {
				res, err := recordDeliveryTx(ctx, tx, p.items[i].d, p.items[i].run)
				if err != nil {
					return fmt.Errorf("record delivery %s: %w", p.items[i].d.ID, err)
				}
				results[i] = res
			}
			return nil
		})
	}
	if err != nil {
		return nil, fmt.Errorf("record a batch of %d deliveries: %w", len(items), err)
	}
	return results, nil
}

// recordBulkOnly records a batch whose deliveries are all recorded
// set-based, in a transaction whose BEGIN and COMMIT travel with its
// statements (ownTx): one round trip in all.
func (s *Store) recordBulkOnly(ctx context.Context, p batchPlan, results []DeliveryResult) error {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("acquire a connection: %w", err)
	}
	defer conn.Release()
	tx := &ownTx{conn: conn}
	if err := recordBulk(ctx, p, results, tx); err != nil {
		tx.rollback(ctx)
		return err
	}
	return nil
}

// batchSender sends the batch of recordBulk.
type batchSender interface {
	send(ctx context.Context, b *pgx.Batch) error
}

// inTx sends batches in an open transaction.
type inTx struct{ tx pgx.Tx }

func (t inTx) send(ctx context.Context, b *pgx.Batch) error {
	if b.Len() == 0 {
		return nil
	}
	return t.tx.SendBatch(ctx, b).Close()
}

// ownTx sends a batch in a transaction of its own on conn: BEGIN is
// queued before the batch's statements and COMMIT after them, so the
// transaction costs no round trip of its own. After an error it must be
// rolled back: the connection is left in it (or, if the connection
// broke, the pool drops it on release).
type ownTx struct {
	conn *pgxpool.Conn
}

func (t *ownTx) send(ctx context.Context, b *pgx.Batch) error {
	qs := make([]*pgx.QueuedQuery, 0, len(b.QueuedQueries)+2)
	qs = append(append(append(qs, &pgx.QueuedQuery{SQL: "BEGIN"}), b.QueuedQueries...), &pgx.QueuedQuery{SQL: "COMMIT"})
	return t.conn.SendBatch(ctx, &pgx.Batch{QueuedQueries: qs}).Close()
}

// rollback ends the transaction after a failure, if the connection is
// still in one; if the rollback fails too, the pool drops the connection
// on release (it does any connection not idle).
func (t *ownTx) rollback(ctx context.Context) {
	if t.conn.Conn().PgConn().TxStatus() == 'I' {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	_, _ = t.conn.Exec(ctx, "ROLLBACK")
}

const (
	// lockPullRequests takes lockPullRequest's lock of each pull request,
	// in the order of the keys.
	lockPullRequests = `SELECT pg_advisory_xact_lock(k) FROM (
		    SELECT DISTINCT hashtextextended('review_runs:' || r || '#' || n::int, 0) AS k
		    FROM unnest($1::text[], $2::int[]) AS t(r, n)
		    ORDER BY k) AS keys`

	// recordDeliveries records the bulk deliveries of a batch in one
	// statement, after lockPullRequests. Each delivery n is decided
	// (kind) against the rows as they were before the statement, which is
	// what the sequential path sees too: the bulk deliveries are of
	// distinct pull requests, so none replays or twins another.
	//
	//   - replay: it asks for a run and an earlier delivery of its event,
	//     action and head came within the replay window (selectReplayed);
	//   - twin: it asks for a run and a webhook run of its head is queued
	//     (selectQueuedTwin);
	//   - fresh: it asks for a run otherwise: the run (its id chosen by
	//     the caller) is inserted, the other queued runs of its pull
	//     request superseded and its running runs at another head
	//     cancelled (enqueue);
	//   - none: it asks for no run.
	//
	// A delivery is inserted with the outcome of its kind, and only a new
	// one (its id not recorded before) queues anything. The details'
	// texts are the caller's, around what only the database knows: the
	// replayed delivery, the twin's id. It answers each new delivery, the
	// delivery it replays, whether it reuses a twin and whether it has a
	// run (fresh or twin).
	recordDeliveries = `WITH n AS (
		    SELECT * FROM jsonb_to_recordset($1::jsonb) AS n(id text, event text, action text, inst bigint, repo text,
		        outcome text, detail text, pr int, head text, sender text, command text,
		        wants bool, run_id uuid, mode text, trig text, run_inst bigint, run_repo text, run_pr int, run_head text,
		        base text, branch text, requested_by text, options jsonb, diff text, max_attempts int, run_repo_id bigint,
		        replay_before text, replay_after text, twin_before text, twin_after text, fresh_detail text)),
		replays AS (
		    SELECT n.id, f.delivery_id AS first FROM n CROSS JOIN LATERAL (
		        SELECT delivery_id FROM webhook_deliveries
		        WHERE repository = n.repo AND pr_number = n.pr AND event = n.event AND action = n.action AND head_sha = n.head
		          AND delivery_id <> n.id AND received_at > now() - $2 * interval '1 millisecond'
		        ORDER BY received_at LIMIT 1) AS f
		    WHERE n.wants AND n.head <> ''),
		twins AS (
		    SELECT n.id, t.id::text AS twin FROM n CROSS JOIN LATERAL (
		        SELECT id FROM review_runs
		        WHERE status = 'queued' AND mode = 'pr' AND repository = n.run_repo AND pr_number = n.run_pr
		          AND head_sha = n.run_head AND trigger = 'webhook'
		        ORDER BY created_at DESC LIMIT 1) AS t
		    WHERE n.wants),
		d AS (
		    SELECT n.*, r.first, t.twin,
		           CASE WHEN NOT n.wants THEN 'none' WHEN r.first IS NOT NULL THEN 'replay'
		                WHEN t.twin IS NOT NULL THEN 'twin' ELSE 'fresh' END AS kind
		    FROM n LEFT JOIN replays r USING (id) LEFT JOIN twins t USING (id)),
		ins AS (
		    INSERT INTO webhook_deliveries
		        (delivery_id, event, action, installation_id, repository, outcome, detail,
		         pr_number, head_sha, sender, command)
		    SELECT id, event, action, inst, repo,
		           CASE kind WHEN 'replay' THEN '` + OutcomeDuplicate + `' WHEN 'twin' THEN '` + OutcomeDeduplicated + `'
		                     WHEN 'fresh' THEN '` + OutcomeQueued + `' ELSE outcome END,
		           CASE kind WHEN 'replay' THEN replay_before || first || replay_after
		                     WHEN 'twin' THEN twin_before || twin || twin_after
		                     WHEN 'fresh' THEN fresh_detail ELSE detail END,
		           pr, head, sender, command
		    FROM d
		    ON CONFLICT (delivery_id) DO NOTHING
		    RETURNING delivery_id),
		runs AS (
		    INSERT INTO review_runs
		        (mode, trigger, installation_id, repository, pr_number, head_sha, base_sha, branch,
		         delivery_id, requested_by, options, diff_text, max_attempts, repo_id, id)
		    SELECT mode, trig, run_inst, run_repo, run_pr, run_head, base, branch,
		           d.id, requested_by, options, diff, max_attempts, run_repo_id, run_id
		    FROM d JOIN ins ON ins.delivery_id = d.id
		    WHERE d.kind = 'fresh'
		    RETURNING id, repository, pr_number, head_sha),
		superseded AS (
		    UPDATE review_runs r
		    SET status = 'superseded', status_reason = 'superseded by ' || n.id || ' (head ' || n.head_sha || ')',
		        finished_at = now()
		    FROM runs n
		    WHERE r.status = 'queued' AND r.mode = 'pr' AND r.repository = n.repository AND r.pr_number = n.pr_number
		      AND r.id <> n.id),
		cancelled AS (
		    UPDATE review_runs r SET cancel_requested = true
		    FROM runs n
		    WHERE r.status = 'running' AND r.mode = 'pr' AND r.repository = n.repository AND r.pr_number = n.pr_number
		      AND n.head_sha <> '' AND r.head_sha <> n.head_sha)
		SELECT d.id, COALESCE(d.first, ''), d.kind = 'twin', d.kind IN ('fresh', 'twin')
		FROM d JOIN ins ON ins.delivery_id = d.id`

	// selectQueuedRuns reads, after recordDeliveries, the queued webhook
	// run of the pull request and head of each delivery recorded queued
	// or deduplicated: the run a fresh delivery queued or a twin reuses
	// (replays, which need none, are not read).
	selectQueuedRuns = `SELECT ` + runColumns + ` FROM review_runs WHERE id IN (
		    SELECT DISTINCT ON (r.repository, r.pr_number) r.id
		    FROM unnest($1::text[], $2::text[], $3::int[], $4::text[]) AS n(id, repo, pr, head)
		    JOIN webhook_deliveries w ON w.delivery_id = n.id AND w.outcome IN ('` + OutcomeQueued + `', '` + OutcomeDeduplicated + `')
		    JOIN review_runs r ON r.repository = n.repo AND r.pr_number = n.pr AND r.head_sha = n.head
		    WHERE r.status = 'queued' AND r.mode = 'pr' AND r.trigger = 'webhook'
		    ORDER BY r.repository, r.pr_number, r.created_at DESC)`
)

// recordBulk locks the batch's pull requests and records the deliveries
// of p.bulk set-based, into results, in one batch sent by tx:
// lockPullRequests, recordDeliveries and selectQueuedRuns.
func recordBulk(ctx context.Context, p batchPlan, results []DeliveryResult, tx batchSender) error {
	var b pgx.Batch
	if len(p.lockRepos) > 0 {
		b.Queue(lockPullRequests, p.lockRepos, p.lockPRs)
	}
	if len(p.bulk) > 0 {
		queueBulk(&b, p, results)
	}
	if err := tx.send(ctx, &b); err != nil {
		return fmt.Errorf("record deliveries and queue their runs: %w", err)
	}
	return nil
}

// queueBulk queues into b recordDeliveries of p.bulk and, when some ask
// for a run, selectQueuedRuns; they set results once b was sent.
func queueBulk(b *pgx.Batch, p batchPlan, results []DeliveryResult) {
	rows := make([]bulkRow, len(p.bulk))
	index := make(map[string]int, len(p.bulk)) // in items, by delivery id
	wanting := map[prKey]int{}                 // in items, of those asking for a run, by pull request
	var ids, repos, heads []string
	var prs []int
	for k, i := range p.bulk {
		it := p.items[i]
		rows[k] = newBulkRow(it.d, it.run)
		index[it.d.ID] = i
		if r := it.run; r != nil {
			wanting[prKey{r.Repository, r.PRNumber}] = i
			ids, repos = append(ids, it.d.ID), append(repos, r.Repository)
			prs, heads = append(prs, r.PRNumber), append(heads, r.HeadSHA)
		}
	}
	hasRun := make(map[string]bool, len(p.bulk)) // the new deliveries, by id: whether they have a run
	b.Queue(recordDeliveries, rows, ReplayWindow.Milliseconds()).Query(func(rs pgx.Rows) error {
		var (
			id, first   string
			reused, run bool
		)
		_, err := pgx.ForEachRow(rs, []any{&id, &first, &reused, &run}, func() error {
			hasRun[id] = run
			results[index[id]].ReplayOf, results[index[id]].Reused = first, reused
			return nil
		})
		for id, i := range index {
			if _, isNew := hasRun[id]; !isNew {
				results[i].Duplicate = true
			}
		}
		return err
	})
	if len(repos) == 0 {
		return
	}
	b.Queue(selectQueuedRuns, ids, repos, prs, heads).Query(func(rs pgx.Rows) error {
		runs, err := pgx.CollectRows(rs, pgx.RowToStructByName[Run])
		for _, run := range runs {
			if i, ok := wanting[prKey{run.Repository, run.PRNumber}]; ok && hasRun[p.items[i].d.ID] {
				results[i].Run = &run
			}
		}
		return err
	})
}

// bulkRow is one delivery of recordDeliveries and the run it asks for, a
// member of its JSON argument.
type bulkRow struct {
	ID      string  `json:"id"`
	Event   string  `json:"event"`
	Action  string  `json:"action"`
	Inst    *int64  `json:"inst"`
	Repo    *string `json:"repo"`
	Outcome string  `json:"outcome"`
	Detail  string  `json:"detail"`
	PR      *int    `json:"pr"`
	Head    string  `json:"head"`
	Sender  string  `json:"sender"`
	Command string  `json:"command"`

	Wants        bool            `json:"wants"`
	RunID        string          `json:"run_id,omitempty"` // absent: NULL, not an invalid uuid
	Mode         Mode            `json:"mode"`
	Trigger      Trigger         `json:"trig"`
	RunInst      *int64          `json:"run_inst"`
	RunRepo      *string         `json:"run_repo"`
	RunPR        *int            `json:"run_pr"`
	RunHead      string          `json:"run_head"`
	Base         string          `json:"base"`
	Branch       string          `json:"branch"`
	RequestedBy  string          `json:"requested_by"`
	Options      json.RawMessage `json:"options"`
	Diff         *string         `json:"diff"`
	MaxAttempts  int             `json:"max_attempts"`
	RunRepoID    *int64          `json:"run_repo_id"`
	ReplayBefore string          `json:"replay_before"`
	ReplayAfter  string          `json:"replay_after"`
	TwinBefore   string          `json:"twin_before"`
	TwinAfter    string          `json:"twin_after"`
	FreshDetail  string          `json:"fresh_detail"`
}

// newBulkRow is the row of delivery d (normalized) asking for run, nil
// for none. A run's id is chosen here, and the texts of the details its
// kinds record.
func newBulkRow(d Delivery, run *NewRun) bulkRow {
	row := bulkRow{ID: d.ID, Event: d.Event, Action: d.Action, Inst: nullIfZero(d.InstallationID),
		Repo: nullIfEmpty(d.Repository), Outcome: d.Outcome, Detail: d.Detail, PR: nullIfZero(max(d.PRNumber, 0)),
		Head: d.HeadSHA, Sender: d.Sender, Command: d.Command}
	if run == nil {
		return row
	}
	r := *run
	if r.MaxAttempts == 0 {
		r.MaxAttempts = DefaultMaxAttempts
	}
	if r.Options == nil {
		r.Options = json.RawMessage(`{}`)
	}
	row.Wants, row.RunID, row.Mode, row.Trigger = true, uuid.NewString(), r.Mode, r.Trigger
	row.RunInst, row.RunRepo, row.RunPR, row.RunHead = nullIfZero(r.InstallationID), nullIfEmpty(r.Repository), nullIfZero(r.PRNumber), r.HeadSHA
	row.Base, row.Branch, row.RequestedBy, row.Options, row.Diff = r.BaseSHA, r.Branch, r.RequestedBy, r.Options, r.DiffText
	row.MaxAttempts, row.RunRepoID = r.MaxAttempts, nullIfZero(r.RepositoryID)
	row.ReplayBefore, row.ReplayAfter = replayDetailAround(d)
	row.TwinBefore, row.TwinAfter = reusedDetailAround(r.HeadSHA)
	_, row.FreshDetail = queuedOutcome(Run{ID: row.RunID}, false)
	return row
}
