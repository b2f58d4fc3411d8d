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
//     whole batch ("bulk"): replays and queued twins are looked up for all
//     of them at once, then the runs inserted, superseded and cancelled.
//     Pull requests are disjoint, so their order does not matter. The
//     statements are pipelined (pgx.Batch) in two round trips, with the
//     lock in the first. When every delivery of the batch is recorded so,
//     BEGIN and COMMIT travel with them: the whole batch costs two round
//     trips, whatever its size;
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
// statements (ownTx): two round trips in all.
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

// batchSender sends the two batches of recordBulk; last is set on the
// second.
type batchSender interface {
	send(ctx context.Context, b *pgx.Batch, last bool) error
}

// inTx sends batches in an open transaction.
type inTx struct{ tx pgx.Tx }

func (t inTx) send(ctx context.Context, b *pgx.Batch, _ bool) error {
	if b.Len() == 0 {
		return nil
	}
	return t.tx.SendBatch(ctx, b).Close()
}

// ownTx sends batches in a transaction of their own on conn: BEGIN is
// queued before the first batch's statements and COMMIT after the last
// one's, so the transaction costs no round trip of its own. After an
// error it must be rolled back: the connection is left in it (or, if
// the connection broke, the pool drops it on release).
type ownTx struct {
	conn  *pgxpool.Conn
	begun bool
}

func (t *ownTx) send(ctx context.Context, b *pgx.Batch, last bool) error {
	qs := b.QueuedQueries
	if !t.begun {
		qs = append([]*pgx.QueuedQuery{{SQL: "BEGIN"}}, qs...)
		t.begun = true
	}
	if last {
		qs = append(qs, &pgx.QueuedQuery{SQL: "COMMIT"})
	}
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

	insertDeliveries = `INSERT INTO webhook_deliveries
		(delivery_id, event, action, installation_id, repository, outcome, detail,
		 pr_number, head_sha, sender, command)
		SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::text[], $6::text[], $7::text[],
		                     $8::int[], $9::text[], $10::text[], $11::text[])
		ON CONFLICT (delivery_id) DO NOTHING
		RETURNING delivery_id`

	// selectReplays is selectReplayed for several deliveries.
	selectReplays = `SELECT n.id, f.delivery_id
		FROM unnest($1::text[], $2::text[], $3::int[], $4::text[], $5::text[], $6::text[]) AS n(id, repo, pr, event, action, head)
		CROSS JOIN LATERAL (
		    SELECT delivery_id FROM webhook_deliveries
		    WHERE repository = n.repo AND pr_number = n.pr AND event = n.event AND action = n.action AND head_sha = n.head
		      AND delivery_id <> n.id AND received_at > now() - $7 * interval '1 millisecond'
		    ORDER BY received_at LIMIT 1) AS f`

	// selectQueuedTwins is selectQueuedTwin of webhook runs for several
	// pull requests, answering the runs' ids.
	selectQueuedTwins = `SELECT n.repo, n.pr, t.id::text FROM unnest($1::text[], $2::int[], $3::text[]) AS n(repo, pr, head)
		CROSS JOIN LATERAL (
		    SELECT id FROM review_runs
		    WHERE status = 'queued' AND mode = 'pr' AND repository = n.repo AND pr_number = n.pr AND head_sha = n.head
		      AND trigger = 'webhook'
		    ORDER BY created_at DESC LIMIT 1) AS t`

	// selectRunsByID reads runs.
	selectRunsByID = `SELECT ` + runColumns + ` FROM review_runs WHERE id = ANY($1::uuid[])`

	insertRuns = `INSERT INTO review_runs
		(mode, trigger, installation_id, repository, pr_number, head_sha, base_sha, branch,
		 delivery_id, requested_by, options, diff_text, max_attempts, id)
		SELECT m, t, i, r, p, h, b, br, d, rb, o::jsonb, dt, ma, id
		FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::int[], $6::text[], $7::text[],
		            $8::text[], $9::text[], $10::text[], $11::text[], $12::text[], $13::int[], $14::uuid[])
		     AS n(m, t, i, r, p, h, b, br, d, rb, o, dt, ma, id)
		RETURNING ` + runColumns

	// supersedeQueuedOf is supersedeQueued for several pull requests.
	supersedeQueuedOf = `UPDATE review_runs r
		SET status = 'superseded', status_reason = 'superseded by ' || n.id || ' (head ' || n.head || ')',
		    finished_at = now()
		FROM unnest($1::text[], $2::int[], $3::text[], $4::text[]) AS n(repo, pr, id, head)
		WHERE r.status = 'queued' AND r.mode = 'pr' AND r.repository = n.repo AND r.pr_number = n.pr AND r.id <> n.id::uuid`

	// cancelRunningOf is cancelRunning for several pull requests.
	cancelRunningOf = `UPDATE review_runs r SET cancel_requested = true
		FROM unnest($1::text[], $2::int[], $3::text[]) AS n(repo, pr, head)
		WHERE r.status = 'running' AND r.mode = 'pr' AND r.repository = n.repo AND r.pr_number = n.pr
		  AND n.head <> '' AND r.head_sha <> n.head`

	setDeliveryOutcomes = `UPDATE webhook_deliveries w SET outcome = n.outcome, detail = n.detail
		FROM unnest($1::text[], $2::text[], $3::text[]) AS n(id, outcome, detail)
		WHERE w.delivery_id = n.id`
)

// recordBulk locks the batch's pull requests and records the deliveries
// of p.bulk set-based, into results, in two batches sent by tx: one
// inserts the deliveries and looks up their replays and queued twins, the
// other queues the runs left to queue and sets the outcomes.
func recordBulk(ctx context.Context, p batchPlan, results []DeliveryResult, tx batchSender) error {
	var b pgx.Batch
	l := queueLookUp(&b, p)
	if err := tx.send(ctx, &b, false); err != nil {
		return fmt.Errorf("insert deliveries, look up replays and queued runs: %w", err)
	}
	var q queuing
	for _, i := range p.bulk {
		d := p.items[i].d
		twin, reused := l.twins[prKey{d.Repository, d.PRNumber}]
		first, replay := l.replays[d.ID]
		switch {
		case !l.isNew[d.ID]:
			results[i].Duplicate = true
		case p.items[i].run == nil:
		case replay:
			results[i].ReplayOf = first
			q.set.add(d.ID, OutcomeDuplicate, replayDetail(d, first))
		case reused:
			results[i].Reused = true
			q.reused = append(q.reused, i)
			q.twins = append(q.twins, twin)
			outcome, detail := queuedOutcome(Run{ID: twin, HeadSHA: p.items[i].run.HeadSHA}, true)
			q.set.add(d.ID, outcome, detail)
		default:
			q.fresh = append(q.fresh, i)
		}
	}
	b = pgx.Batch{}
	q.queue(&b, p.items, results)
	if err := tx.send(ctx, &b, true); err != nil {
		return fmt.Errorf("queue runs, supersede runs and set outcomes: %w", err)
	}
	return nil
}

// queuing is what the second batch of recordBulk does.
type queuing struct {
	fresh  []int    // new deliveries that queue a run of their own
	reused []int    // new deliveries whose head has a queued run: twins
	twins  []string // the ids of those runs, in the order of reused
	set    outcomes // the outcomes of deliveries that queue nothing
}

// deliveryColumns are insertDeliveries' arguments for items[idx].
func deliveryColumns(items []batchItem, idx []int) []any {
	n := len(idx)
	ids, events, actions, repos := make([]string, 0, n), make([]string, 0, n), make([]string, 0, n), make([]*string, 0, n)
	outcomes, details, heads := make([]string, 0, n), make([]string, 0, n), make([]string, 0, n)
	senders, commands := make([]string, 0, n), make([]string, 0, n)
	insts, prs := make([]*int64, 0, n), make([]*int, 0, n)
	for _, i := range idx {
		d := items[i].d
		ids, events, actions = append(ids, d.ID), append(events, d.Event), append(actions, d.Action)
		insts, repos = append(insts, nullIfZero(d.InstallationID)), append(repos, nullIfEmpty(d.Repository))
		outcomes, details = append(outcomes, d.Outcome), append(details, d.Detail)
		prs, heads = append(prs, nullIfZero(max(d.PRNumber, 0))), append(heads, d.HeadSHA)
		senders, commands = append(senders, d.Sender), append(commands, d.Command)
	}
	return []any{ids, events, actions, insts, repos, outcomes, details, prs, heads, senders, commands}
}

// queueReplays queues the look-up of the delivery each of items[idx] that
// asks for a run replays (see replayOf), into replays by delivery id;
// deliveries without a head replay none.
func queueReplays(b *pgx.Batch, items []batchItem, idx []int, replays map[string]string) {
	var ids, repos, events, actions, heads []string
	var prs []int
	for _, i := range idx {
		d := items[i].d
		if items[i].run == nil || d.HeadSHA == "" {
			continue
		}
		ids, repos, prs = append(ids, d.ID), append(repos, d.Repository), append(prs, d.PRNumber)
		events, actions, heads = append(events, d.Event), append(actions, d.Action), append(heads, d.HeadSHA)
	}
	if len(ids) == 0 {
		return
	}
	b.Queue(selectReplays, ids, repos, prs, events, actions, heads, ReplayWindow.Milliseconds()).Query(func(rows pgx.Rows) error {
		var id, first string
		_, err := pgx.ForEachRow(rows, []any{&id, &first}, func() error {
			replays[id] = first
			return nil
		})
		return err
	})
}

// queueTwins queues the look-up of the queued webhook run of the head of
// each of items[idx] that asks for a run, into twins by pull request: its
// id only, as most deliveries of a head are replays that need none.
func queueTwins(b *pgx.Batch, items []batchItem, idx []int, twins map[prKey]string) {
	var repos, heads []string
	var prs []int
	for _, i := range idx {
		if r := items[i].run; r != nil {
			repos, prs, heads = append(repos, r.Repository), append(prs, r.PRNumber), append(heads, r.HeadSHA)
		}
	}
	if len(repos) == 0 {
		return
	}
	b.Queue(selectQueuedTwins, repos, prs, heads).Query(func(rows pgx.Rows) error {
		var k prKey
		var id string
		_, err := pgx.ForEachRow(rows, []any{&k.repo, &k.number, &id}, func() error {
			twins[k] = id
			return nil
		})
		return err
	})
}

// outcomes are the outcomes and details set on deliveries once their
// runs are known.
type outcomes struct{ ids, outcomes, details []string }

func (o *outcomes) add(id, outcome, detail string) {
	o.ids, o.outcomes, o.details = append(o.ids, id), append(o.outcomes, outcome), append(o.details, detail)
}

// lookups are what the first batch of recordBulk finds.
type lookups struct {
	isNew   map[string]bool   // the bulk deliveries not recorded before, by id
	replays map[string]string // the delivery each replays (replayOf), by id
	twins   map[prKey]string  // the id of the queued webhook run of each head
}

// queueLookUp queues into b the locking of p's pull requests, the insert
// of the deliveries of p.bulk and, for those that ask for a run, the
// look-ups of the deliveries they replay and of the queued runs of their
// heads. The lookups hold what they find once b was sent.
func queueLookUp(b *pgx.Batch, p batchPlan) *lookups {
	l := &lookups{isNew: map[string]bool{}, replays: map[string]string{}, twins: map[prKey]string{}}
	if len(p.lockRepos) > 0 {
		b.Queue(lockPullRequests, p.lockRepos, p.lockPRs)
	}
	if len(p.bulk) > 0 {
		b.Queue(insertDeliveries, deliveryColumns(p.items, p.bulk)...).Query(func(rows pgx.Rows) error {
			var id string
			_, err := pgx.ForEachRow(rows, []any{&id}, func() error {
				l.isNew[id] = true
				return nil
			})
			return err
		})
	}
	queueReplays(b, p.items, p.bulk, l.replays)
	queueTwins(b, p.items, p.bulk, l.twins)
	return l
}

// runColumnsIn are the columns of insertRuns' rows.
type runColumnsIn struct {
	ids                                []string
	modes, triggers                    []string
	installations                      []*int64
	repos, deliveries, diffs           []*string
	prs                                []*int
	heads, bases, branches, requesters []string
	options                            []string
	maxAttempts                        []int
}

func (c *runColumnsIn) add(id string, r NewRun) {
	c.ids = append(c.ids, id)
	if r.MaxAttempts == 0 {
		r.MaxAttempts = DefaultMaxAttempts
	}
	if r.Options == nil {
		r.Options = json.RawMessage(`{}`)
	}
	c.modes, c.triggers = append(c.modes, string(r.Mode)), append(c.triggers, string(r.Trigger))
	c.installations, c.repos = append(c.installations, nullIfZero(r.InstallationID)), append(c.repos, nullIfEmpty(r.Repository))
	c.prs, c.heads = append(c.prs, nullIfZero(r.PRNumber)), append(c.heads, r.HeadSHA)
	c.bases, c.branches = append(c.bases, r.BaseSHA), append(c.branches, r.Branch)
	c.deliveries, c.requesters = append(c.deliveries, nullIfEmpty(r.DeliveryID)), append(c.requesters, r.RequestedBy)
	c.options, c.diffs = append(c.options, string(r.Options)), append(c.diffs, r.DiffText)
	c.maxAttempts = append(c.maxAttempts, r.MaxAttempts)
}

// queue queues into b the insert of a run for each of items[q.fresh], the
// supersession of the queued runs of their pull requests, the cancelling
// of their running runs at another head, the reading of the twins of
// items[q.reused] and the setting of the deliveries' outcomes. The new
// runs' ids are chosen here, so nothing waits for the insert's answer.
func (q queuing) queue(b *pgx.Batch, items []batchItem, results []DeliveryResult) {
	q.queueRuns(b, items, results)
	if len(q.reused) > 0 {
		at := make(map[string]int, len(q.reused)) // index in items by run id
		for k, i := range q.reused {
			at[q.twins[k]] = i
		}
		b.Queue(selectRunsByID, q.twins).Query(func(rows pgx.Rows) error {
			return assignRuns(rows, results, func(r Run) int { return at[r.ID] })
		})
	}
	if len(q.set.ids) > 0 {
		b.Queue(setDeliveryOutcomes, q.set.ids, q.set.outcomes, q.set.details)
	}
}

// queueRuns queues into b the insert of a run for each of items[q.fresh],
// the supersession of the other queued runs of their pull requests and
// the cancelling of their running runs at another head, and adds the
// deliveries' outcomes to q.set.
func (q *queuing) queueRuns(b *pgx.Batch, items []batchItem, results []DeliveryResult) {
	if len(q.fresh) == 0 {
		return
	}
	var c runColumnsIn
	n := len(q.fresh)
	repos, prs, heads := make([]string, 0, n), make([]int, 0, n), make([]string, 0, n)
	at := make(map[string]int, n) // index in items by delivery id
	for _, i := range q.fresh {
		r, id := *items[i].run, uuid.NewString()
		r.DeliveryID = items[i].d.ID
		c.add(id, r)
		repos, prs, heads = append(repos, r.Repository), append(prs, r.PRNumber), append(heads, r.HeadSHA)
		outcome, detail := queuedOutcome(Run{ID: id}, false)
		q.set.add(r.DeliveryID, outcome, detail)
		at[r.DeliveryID] = i
	}
	b.Queue(insertRuns, c.modes, c.triggers, c.installations, c.repos, c.prs, c.heads,
		c.bases, c.branches, c.deliveries, c.requesters, c.options, c.diffs, c.maxAttempts, c.ids).Query(func(rows pgx.Rows) error {
		return assignRuns(rows, results, func(r Run) int { return at[r.DeliveryID] })
	})
	b.Queue(supersedeQueuedOf, repos, prs, c.ids, heads)
	b.Queue(cancelRunningOf, repos, prs, heads)
}

// assignRuns sets the run of results[index(run)] to each run of rows.
func assignRuns(rows pgx.Rows, results []DeliveryResult, index func(Run) int) error {
	runs, err := pgx.CollectRows(rows, pgx.RowToStructByName[Run])
	for _, run := range runs {
		results[index(run)].Run = &run
	}
	return err
}
