package store

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"
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
//     Pull requests are disjoint, so their order does not matter;
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
	var results []DeliveryResult
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		results = make([]DeliveryResult, len(items)) // afresh on a retry
		for _, i := range p.duplicates {
			results[i].Duplicate = true
		}
		if len(p.lockRepos) > 0 {
			if _, err := tx.Exec(ctx, lockPullRequests, p.lockRepos, p.lockPRs); err != nil {
				return fmt.Errorf("lock pull requests: %w", err)
			}
		}
		if err := recordBulk(ctx, tx, p, results); err != nil {
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
	if err != nil {
		return nil, fmt.Errorf("record a batch of %d deliveries: %w", len(items), err)
	}
	return results, nil
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
	// pull requests.
	selectQueuedTwins = `SELECT t.* FROM unnest($1::text[], $2::int[], $3::text[]) AS n(repo, pr, head)
		CROSS JOIN LATERAL (
		    SELECT ` + runColumns + ` FROM review_runs
		    WHERE status = 'queued' AND mode = 'pr' AND repository = n.repo AND pr_number = n.pr AND head_sha = n.head
		      AND trigger = 'webhook'
		    ORDER BY created_at DESC LIMIT 1) AS t`

	insertRuns = `INSERT INTO review_runs
		(mode, trigger, installation_id, repository, pr_number, head_sha, base_sha, branch,
		 delivery_id, requested_by, options, diff_text, max_attempts)
		SELECT m, t, i, r, p, h, b, br, d, rb, o::jsonb, dt, ma
		FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::int[], $6::text[], $7::text[],
		            $8::text[], $9::text[], $10::text[], $11::text[], $12::text[], $13::int[])
		     AS n(m, t, i, r, p, h, b, br, d, rb, o, dt, ma)
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

// recordBulk records the deliveries of p.bulk set-based, into results.
func recordBulk(ctx context.Context, tx pgx.Tx, p batchPlan, results []DeliveryResult) error {
	if len(p.bulk) == 0 {
		return nil
	}
	isNew, err := insertBulkDeliveries(ctx, tx, p.items, p.bulk)
	if err != nil {
		return err
	}
	var queue []int // new deliveries that ask for a run
	for _, i := range p.bulk {
		switch {
		case !isNew[p.items[i].d.ID]:
			results[i].Duplicate = true
		case p.items[i].run != nil:
			queue = append(queue, i)
		}
	}
	if len(queue) == 0 {
		return nil
	}
	return queueBulk(ctx, tx, p.items, queue, results)
}

// insertBulkDeliveries inserts the deliveries of items[idx] and returns the
// ids of those that were not recorded yet.
func insertBulkDeliveries(ctx context.Context, tx pgx.Tx, items []batchItem, idx []int) (map[string]bool, error) {
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
	rows, err := tx.Query(ctx, insertDeliveries, ids, events, actions, insts, repos, outcomes, details,
		prs, heads, senders, commands)
	if err != nil {
		return nil, fmt.Errorf("insert deliveries: %w", err)
	}
	inserted, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("insert deliveries: %w", err)
	}
	isNew := make(map[string]bool, len(inserted))
	for _, id := range inserted {
		isNew[id] = true
	}
	return isNew, nil
}

// outcomes are the outcomes and details set on deliveries once their
// runs are known.
type outcomes struct{ ids, outcomes, details []string }

func (o *outcomes) add(id, outcome, detail string) {
	o.ids, o.outcomes, o.details = append(o.ids, id), append(o.outcomes, outcome), append(o.details, detail)
}

// queueBulk does for the new deliveries items[queue] what recordDeliveryTx
// does after inserting a delivery: a replay queues nothing, a queued twin
// is reused, otherwise a run is queued, superseding the pull request's
// queued runs and asking its running run at another head to stop.
func queueBulk(ctx context.Context, tx pgx.Tx, items []batchItem, queue []int, results []DeliveryResult) error {
	replays, err := bulkReplays(ctx, tx, items, queue)
	if err != nil {
		return err
	}
	var set outcomes
	var enqueue []int
	for _, i := range queue {
		d := items[i].d
		if first, ok := replays[d.ID]; ok {
			results[i].ReplayOf = first
			set.add(d.ID, OutcomeDuplicate, replayDetail(d, first))
			continue
		}
		enqueue = append(enqueue, i)
	}
	twins, err := bulkTwins(ctx, tx, items, enqueue)
	if err != nil {
		return err
	}
	var fresh []int
	for _, i := range enqueue {
		d := items[i].d
		twin, ok := twins[prKey{d.Repository, d.PRNumber}]
		if !ok {
			fresh = append(fresh, i)
			continue
		}
		results[i].Run, results[i].Reused = &twin, true
		outcome, detail := queuedOutcome(twin, true)
		set.add(d.ID, outcome, detail)
	}
	runs, err := insertBulkRuns(ctx, tx, items, fresh)
	if err != nil {
		return err
	}
	for _, i := range fresh {
		run := runs[items[i].d.ID]
		results[i].Run = &run
		outcome, detail := queuedOutcome(run, false)
		set.add(run.DeliveryID, outcome, detail)
	}
	return finishBulk(ctx, tx, items, fresh, runs, set)
}

// bulkReplays returns, by delivery id, the delivery each of items[idx]
// replays (see replayOf); deliveries without a head replay none.
func bulkReplays(ctx context.Context, tx pgx.Tx, items []batchItem, idx []int) (map[string]string, error) {
	var ids, repos, events, actions, heads []string
	var prs []int
	for _, i := range idx {
		d := items[i].d
		if d.HeadSHA == "" {
			continue
		}
		ids, repos, prs = append(ids, d.ID), append(repos, d.Repository), append(prs, d.PRNumber)
		events, actions, heads = append(events, d.Event), append(actions, d.Action), append(heads, d.HeadSHA)
	}
	replays := map[string]string{}
	if len(ids) == 0 {
		return replays, nil
	}
	rows, err := tx.Query(ctx, selectReplays, ids, repos, prs, events, actions, heads, ReplayWindow.Milliseconds())
	if err != nil {
		return nil, fmt.Errorf("look up replays: %w", err)
	}
	var id, first string
	_, err = pgx.ForEachRow(rows, []any{&id, &first}, func() error {
		replays[id] = first
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("look up replays: %w", err)
	}
	return replays, nil
}

// bulkTwins returns, by pull request, the queued webhook run of the head
// of each of items[idx], when there is one.
func bulkTwins(ctx context.Context, tx pgx.Tx, items []batchItem, idx []int) (map[prKey]Run, error) {
	twins := map[prKey]Run{}
	if len(idx) == 0 {
		return twins, nil
	}
	repos, prs, heads := make([]string, 0, len(idx)), make([]int, 0, len(idx)), make([]string, 0, len(idx))
	for _, i := range idx {
		r := items[i].run
		repos, prs, heads = append(repos, r.Repository), append(prs, r.PRNumber), append(heads, r.HeadSHA)
	}
	rows, err := tx.Query(ctx, selectQueuedTwins, repos, prs, heads)
	if err != nil {
		return nil, fmt.Errorf("look up queued runs: %w", err)
	}
	runs, err := pgx.CollectRows(rows, pgx.RowToStructByName[Run])
	if err != nil {
		return nil, fmt.Errorf("look up queued runs: %w", err)
	}
	for _, run := range runs {
		twins[prKey{run.Repository, run.PRNumber}] = run
	}
	return twins, nil
}

// runColumnsIn are the columns of insertRuns' rows.
type runColumnsIn struct {
	modes, triggers                    []string
	installations                      []*int64
	repos, deliveries, diffs           []*string
	prs                                []*int
	heads, bases, branches, requesters []string
	options                            []string
	maxAttempts                        []int
}

func (c *runColumnsIn) add(r NewRun) {
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

// insertBulkRuns queues the runs of items[idx] and returns them by
// delivery id.
func insertBulkRuns(ctx context.Context, tx pgx.Tx, items []batchItem, idx []int) (map[string]Run, error) {
	byDelivery := make(map[string]Run, len(idx))
	if len(idx) == 0 {
		return byDelivery, nil
	}
	var c runColumnsIn
	for _, i := range idx {
		r := *items[i].run
		r.DeliveryID = items[i].d.ID
		c.add(r)
	}
	rows, err := tx.Query(ctx, insertRuns, c.modes, c.triggers, c.installations, c.repos, c.prs, c.heads,
		c.bases, c.branches, c.deliveries, c.requesters, c.options, c.diffs, c.maxAttempts)
	if err != nil {
		return nil, fmt.Errorf("queue runs: %w", err)
	}
	runs, err := pgx.CollectRows(rows, pgx.RowToStructByName[Run])
	if err != nil {
		return nil, fmt.Errorf("queue runs: %w", err)
	}
	for _, run := range runs {
		byDelivery[run.DeliveryID] = run
	}
	return byDelivery, nil
}

// finishBulk supersedes the queued runs of the pull requests of the runs
// queued for items[fresh], asks their running runs at another head to
// stop, and sets the deliveries' outcomes, in one round trip.
func finishBulk(ctx context.Context, tx pgx.Tx, items []batchItem, fresh []int, runs map[string]Run, set outcomes) error {
	var b pgx.Batch
	if len(fresh) > 0 {
		repos, prs, ids, heads := make([]string, 0, len(fresh)), make([]int, 0, len(fresh)), make([]string, 0, len(fresh)), make([]string, 0, len(fresh))
		for _, i := range fresh {
			r := items[i].run
			repos, prs = append(repos, r.Repository), append(prs, r.PRNumber)
			ids, heads = append(ids, runs[items[i].d.ID].ID), append(heads, r.HeadSHA)
		}
		b.Queue(supersedeQueuedOf, repos, prs, ids, heads)
		b.Queue(cancelRunningOf, repos, prs, heads)
	}
	if len(set.ids) > 0 {
		b.Queue(setDeliveryOutcomes, set.ids, set.outcomes, set.details)
	}
	if b.Len() == 0 {
		return nil
	}
	if err := tx.SendBatch(ctx, &b).Close(); err != nil {
		return fmt.Errorf("supersede runs and set outcomes: %w", err)
	}
	return nil
}
