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

// The transaction of a batch of deliveries: the one way a delivery is
// recorded (RecordDelivery records a batch of one, Intake batches of
// concurrent deliveries). It has the effect of recording the batch's
// deliveries one after the other, in order:
//
//   - a delivery whose id came earlier in the batch is Duplicate;
//   - the pull requests of all deliveries and runs are locked first, in
//     the order of their lock keys, so that concurrent batches never
//     deadlock;
//   - the deliveries are recorded in rounds, a few statements each: a
//     delivery joins the round after the last one holding a delivery of
//     its pull requests (nearly always the first round). One statement
//     (recordDeliveries) looks up replays and queued twins for all the
//     deliveries of a round at once, inserts them with their outcomes and
//     their runs, and supersedes and cancels the pull requests' other
//     runs; the next reads the runs. The pull requests of a round are
//     disjoint, so their order within it does not matter; the rounds keep
//     the order of the deliveries of one pull request;
//   - BEGIN, the statements and COMMIT are pipelined (pgx.Batch): the
//     whole batch costs one round trip, whatever its size.

// batchPlan is a batch sorted into rounds.
type batchPlan struct {
	items      []batchItem // normalized
	rounds     [][]int     // indexes, of distinct pull requests in each round
	duplicates []int       // ids that came earlier in the batch
	lockRepos  []string    // the pull requests to lock
	lockPRs    []int
}

type prKey struct {
	repo   string
	number int
}

// planBatch normalizes items (see Delivery.normalized) and sorts them.
func planBatch(items []batchItem) batchPlan {
	p := batchPlan{items: make([]batchItem, len(items))}
	seen := make(map[string]bool, len(items))
	round := make(map[prKey]int, len(items)) // the last round of each pull request, from 1
	for i, it := range items {
		it.d = it.d.normalized(it.run)
		p.items[i] = it
		if seen[it.d.ID] {
			p.duplicates = append(p.duplicates, i)
			continue
		}
		seen[it.d.ID] = true
		keys := it.prKeys()
		r := 0
		for _, k := range keys {
			if round[k] == 0 {
				p.lockRepos, p.lockPRs = append(p.lockRepos, k.repo), append(p.lockPRs, k.number)
			}
			r = max(r, round[k])
		}
		for _, k := range keys {
			round[k] = r + 1
		}
		if r == len(p.rounds) {
			p.rounds = append(p.rounds, nil)
		}
		p.rounds[r] = append(p.rounds[r], i)
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

// recordBatch records items in one transaction (see the top of the file)
// and returns their results, in order.
func (s *Store) recordBatch(ctx context.Context, items []batchItem) ([]DeliveryResult, error) {
	p := planBatch(items)
	results := make([]DeliveryResult, len(items))
	for _, i := range p.duplicates {
		results[i].Duplicate = true
	}
	var b pgx.Batch
	if len(p.lockRepos) > 0 {
		b.Queue(lockPullRequests, p.lockRepos, p.lockPRs)
	}
	for _, round := range p.rounds {
		queueRound(&b, p.items, round, results)
	}
	if err := s.sendInTx(ctx, &b); err != nil {
		return nil, fmt.Errorf("record a batch of %d deliveries: %w", len(items), err)
	}
	return results, nil
}

// sendInTx sends b in a transaction of its own: BEGIN is queued before
// its statements and COMMIT after them, so the transaction costs no round
// trip of its own.
func (s *Store) sendInTx(ctx context.Context, b *pgx.Batch) error {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("acquire a connection: %w", err)
	}
	defer conn.Release()
	qs := make([]*pgx.QueuedQuery, 0, len(b.QueuedQueries)+2)
	qs = append(append(append(qs, &pgx.QueuedQuery{SQL: "BEGIN"}), b.QueuedQueries...), &pgx.QueuedQuery{SQL: "COMMIT"})
	if err := conn.SendBatch(ctx, &pgx.Batch{QueuedQueries: qs}).Close(); err != nil {
		rollback(ctx, conn)
		return err
	}
	return nil
}

// rollback ends the transaction after a failure, if the connection is
// still in one (the failure left it there); if the rollback fails too,
// the pool drops the connection on release (it does any connection not
// idle).
func rollback(ctx context.Context, conn *pgxpool.Conn) {
	if conn.Conn().PgConn().TxStatus() == 'I' {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	_, _ = conn.Exec(ctx, "ROLLBACK")
}

const (
	// lockPullRequests takes lockPullRequest's lock of each pull request,
	// in the order of the keys.
	lockPullRequests = `SELECT pg_advisory_xact_lock(k) FROM (
		    SELECT DISTINCT hashtextextended('review_runs:' || r || '#' || n::int, 0) AS k
		    FROM unnest($1::text[], $2::int[]) AS t(r, n)
		    ORDER BY k) AS keys`

	// recordDeliveries records the deliveries of a round in one
	// statement, after lockPullRequests. Each delivery n is decided (kind)
	// against the rows as they were before the statement, which is what
	// recording the deliveries one at a time would see too: the
	// deliveries of a round are of distinct pull requests, so none
	// replays or twins another.
	//
	//   - replay: it asks for a webhook run and an earlier delivery of its
	//     pull request, event, action and head came within the replay
	//     window;
	//   - twin: it asks for a pull request run, not a command's, and a run
	//     of that head and trigger is queued;
	//   - fresh: it asks for a run otherwise: the run (its id chosen by
	//     the caller) is inserted and, for a pull request run, the other
	//     queued runs of its pull request superseded and its running runs
	//     at another head cancelled (as EnqueueRun does);
	//   - none: it asks for no run.
	//
	// A delivery is inserted with the outcome of its kind, and only a new
	// one (its id not recorded before) queues anything. The details'
	// texts are the caller's, around what only the database knows: the
	// replayed delivery, the twin's id. It answers each new delivery, the
	// delivery it replays, whether it reuses a twin and the id of its run
	// (fresh or twin; '' for none).
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
		    WHERE n.wants AND n.trig = 'webhook' AND n.head <> ''),
		twins AS (
		    SELECT n.id, t.id::text AS twin FROM n CROSS JOIN LATERAL (
		        SELECT id FROM review_runs
		        WHERE status = 'queued' AND mode = 'pr' AND repository = n.run_repo AND pr_number = n.run_pr
		          AND head_sha = n.run_head AND trigger = n.trig
		        ORDER BY created_at DESC LIMIT 1) AS t
		    WHERE n.wants AND n.mode = 'pr' AND n.trig <> 'command'),
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
		    RETURNING id, mode, repository, pr_number, head_sha),
		older AS (
		    SELECT o.id, o.status, o.head_sha AS old_head, n.id AS by, n.head_sha FROM runs n CROSS JOIN LATERAL (
		        SELECT id, status, head_sha FROM review_runs
		        WHERE status IN ('queued', 'running') AND mode = 'pr' AND repository = n.repository
		          AND pr_number = n.pr_number) AS o
		    WHERE n.mode = 'pr'),
		superseded AS (
		    UPDATE review_runs r
		    SET status = 'superseded', status_reason = 'superseded by ' || o.by || ' (head ' || o.head_sha || ')',
		        finished_at = now()
		    FROM older o
		    WHERE r.id = o.id AND o.status = 'queued'),
		cancelled AS (
		    UPDATE review_runs r SET cancel_requested = true
		    FROM older o
		    WHERE r.id = o.id AND o.status = 'running' AND o.head_sha <> '' AND o.old_head <> o.head_sha)
		SELECT d.id, COALESCE(d.first, ''), d.kind = 'twin',
		       CASE d.kind WHEN 'fresh' THEN d.run_id::text WHEN 'twin' THEN d.twin ELSE '' END
		FROM d JOIN ins ON ins.delivery_id = d.id`

	// selectRoundRuns reads, after recordDeliveries, the runs of a round:
	// those of the ids chosen for fresh runs ($1) and the queued runs of
	// the pull requests, heads and triggers that may have twins ($2-$5).
	// The caller keeps those recordDeliveries named.
	selectRoundRuns = `SELECT ` + runColumns + ` FROM review_runs WHERE id IN (
		    SELECT unnest($1::uuid[])
		    UNION ALL
		    SELECT t.id FROM unnest($2::text[], $3::int[], $4::text[], $5::text[]) AS n(repo, pr, head, trig)
		    CROSS JOIN LATERAL (
		        SELECT id FROM review_runs
		        WHERE status = 'queued' AND mode = 'pr' AND repository = n.repo AND pr_number = n.pr
		          AND head_sha = n.head AND trigger = n.trig) AS t)`
)

// queueRound queues into b recordDeliveries of the deliveries round (of
// items) and, when some ask for a run, selectRoundRuns; they set results
// once b was sent.
func queueRound(b *pgx.Batch, items []batchItem, round []int, results []DeliveryResult) {
	rows := make([]batchRow, len(round))
	index := make(map[string]int, len(round)) // in items, by delivery id
	var (
		runIDs, repos, heads, triggers []string
		prs                            []int
	)
	for k, i := range round {
		it := items[i]
		rows[k] = newBatchRow(it.d, it.run)
		index[it.d.ID] = i
		if r := it.run; r != nil {
			runIDs = append(runIDs, rows[k].RunID)
			if r.Mode == ModePR && r.Trigger != TriggerCommand {
				repos, prs = append(repos, r.Repository), append(prs, r.PRNumber)
				heads, triggers = append(heads, r.HeadSHA), append(triggers, string(r.Trigger))
			}
		}
	}
	runOf := make(map[string]int, len(round)) // in items, by the id of the run a new delivery has
	b.Queue(recordDeliveries, rows, ReplayWindow.Milliseconds()).Query(func(rs pgx.Rows) error {
		var (
			id, first, run string
			reused         bool
		)
		isNew := make(map[string]bool, len(round))
		_, err := pgx.ForEachRow(rs, []any{&id, &first, &reused, &run}, func() error {
			i := index[id]
			isNew[id] = true
			results[i].ReplayOf, results[i].Reused = first, reused
			if run != "" {
				runOf[run] = i
			}
			return nil
		})
		for id, i := range index {
			results[i].Duplicate = !isNew[id]
		}
		return err
	})
	if len(runIDs) == 0 {
		return
	}
	b.Queue(selectRoundRuns, runIDs, repos, prs, heads, triggers).Query(func(rs pgx.Rows) error {
		runs, err := pgx.CollectRows(rs, pgx.RowToStructByName[Run])
		for _, run := range runs {
			if i, ok := runOf[run.ID]; ok {
				results[i].Run = &run
			}
		}
		return err
	})
}

// batchRow is one delivery of recordDeliveries and the run it asks for, a
// member of its JSON argument.
type batchRow struct {
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

// newBatchRow is the row of delivery d (normalized) asking for run, nil
// for none. A run's id is chosen here, and the texts of the details its
// kinds record.
func newBatchRow(d Delivery, run *NewRun) batchRow {
	row := batchRow{ID: d.ID, Event: d.Event, Action: d.Action, Inst: nullIfZero(d.InstallationID),
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
	row.FreshDetail = "run " + row.RunID
	return row
}
