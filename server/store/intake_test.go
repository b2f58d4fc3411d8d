package store_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mergeguard/mergeguard/server/store"
)

// recording is one delivery to record, with the run it asks for.
type recording struct {
	d   store.Delivery
	run *store.NewRun
}

// opened is a pull_request delivery of o/r#n at head asking for a webhook
// review.
func opened(id string, n int, action, head string) recording {
	r := prRun("o/r", n, head)
	r.RepositoryID = 4242
	return recording{
		d:   store.Delivery{ID: id, Event: "pull_request", Action: action, InstallationID: 7, Repository: "o/r", PRNumber: n},
		run: &r,
	}
}

// arrange puts s in the state the batch below meets: queued, running and
// command runs, and recorded deliveries.
func arrange(t *testing.T, s *store.Store) {
	t.Helper()
	record := func(r recording) {
		if _, err := s.RecordDelivery(t.Context(), r.d, r.run); err != nil {
			t.Fatal(err)
		}
	}
	record(opened("pre-2", 2, "opened", "x"))
	if run := claim(t, s, "w"); run == nil || run.PRNumber != 2 {
		t.Fatalf("claimed %+v, want the run of o/r#2", run)
	}
	record(opened("pre-1", 1, "opened", "h1"))
	record(opened("pre-6", 6, "opened", "h6"))
	record(opened("pre-9", 9, "opened", "h9"))
	record(opened("pre-10", 10, "opened", "c10"))
	record(opened("pre-14", 14, "opened", "h14"))
	rerun := prRun("o/r", 3, "c")
	rerun.Trigger = store.TriggerCommand
	enqueue(t, s, rerun)
}

// batchOfEverything is a batch with every case the group commit tells
// apart.
func batchOfEverything() []recording {
	ignored := recording{d: store.Delivery{ID: "b-ignored", Event: "pull_request", Action: "edited",
		Repository: "o/r", PRNumber: 7, Outcome: "ignored", Detail: "edited"}}
	install := recording{d: store.Delivery{ID: "b-install", Event: "installation", Action: "created", Outcome: "applied"}}
	rerun := opened("b-rerun", 10, "rerequested", "c10")
	rerun.run.Trigger = store.TriggerCommand
	api := opened("b-api", 14, "synchronize", "h14")
	api.run.Trigger = store.TriggerAPI
	diff := diffRun()
	answer := store.NewRun{Mode: store.ModeAnswer, Trigger: store.TriggerCommand, InstallationID: 7,
		Repository: "o/r", PRNumber: 11, HeadSHA: "h11", Options: []byte(`{"question": "why?"}`)}
	other := opened("b-other", 13, "opened", "h13")
	other.d.PRNumber = 12 // about #12, asking for a review of #13
	return []recording{
		opened("b-twin", 1, "synchronize", "h1"), // the queued run of h1 is reused
		opened("b-newer", 2, "synchronize", "y"), // queued; a running run at x is asked to stop
		opened("b-cmd", 3, "opened", "z"),        // queued, supersedes the queued rerun
		opened("pre-1", 1, "opened", "h1"),       // a redelivery
		opened("b-same", 4, "opened", "w"),       // queued
		opened("b-same", 4, "opened", "w"),       // the same id again in the batch
		opened("b-5a", 5, "opened", "v"),         // queued
		opened("b-5b", 5, "opened", "v"),         // replays b-5a, in the same batch
		opened("b-replay", 6, "opened", "h6"),    // replays pre-6
		ignored, install,
		opened("b-8a", 8, "opened", "p"),      // queued
		opened("b-8b", 8, "synchronize", "q"), // queued, supersedes b-8a's run
		rerun,                                 // a command: queued again, supersedes pre-10's run
		api,                                   // another trigger: queued, supersedes pre-14's run
		{d: store.Delivery{ID: "b-diff", Event: "ping"}, run: &diff},                                 // not of a pull request
		{d: store.Delivery{ID: "b-answer", Event: "issue_comment", Repository: "o/r"}, run: &answer}, // an answer
		other, // a run of another pull request than the delivery's
	}
}

var update = flag.Bool("update", false, "rewrite the golden files of testdata/")

// TestRecordBatchRecordsEveryCase: a batch records what recording its
// deliveries one after the other would, and returns the same results (the
// golden files were written when a second path recorded deliveries one at
// a time, and agreed): a batch with every case, several of one pull
// request among them, and one whose deliveries are all alone of their
// pull request.
func TestRecordBatchRecordsEveryCase(t *testing.T) {
	t.Parallel()
	everything := batchOfEverything()
	// Each alone of its pull request (the id twice in the batch is one),
	// and a redelivery.
	alone := slices.Concat(everything[0:3], everything[4:6], everything[8:11],
		[]recording{opened("pre-9", 9, "opened", "h9")})
	for name, recs := range map[string][]recording{"every_case": everything, "alone": alone} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s, raw := newStore(t)
			arrange(t, s)
			ds, runs := make([]store.Delivery, len(recs)), make([]*store.NewRun, len(recs))
			for i, r := range recs {
				ds[i], runs[i] = r.d, r.run
			}
			results, err := s.RecordBatch(t.Context(), ds, runs)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, res := range results {
				got = append(got, describe(res))
			}
			got = append(append(got, "--- database"), snapshot(t, raw)...)
			golden := filepath.Join("testdata", "batch_"+name+".golden")
			if *update {
				if err := os.WriteFile(golden, []byte(strings.Join(got, "\n")+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			data, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			want := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("results and database (-%s +got):\n%s", golden, diff)
			}
		})
	}
}

// describe is a result without its run ids.
func describe(res store.DeliveryResult) string {
	s := fmt.Sprintf("duplicate=%t replay_of=%q reused=%t", res.Duplicate, res.ReplayOf, res.Reused)
	if res.Run != nil {
		s += fmt.Sprintf(" run=%s/%s#%d@%s %s", res.Run.Trigger, res.Run.Repository, res.Run.PRNumber, res.Run.HeadSHA, res.Run.Status)
	}
	return s
}

var uuidRE = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// snapshot lists the deliveries and runs of a database, run ids replaced
// by what the run is.
func snapshot(t *testing.T, raw *pgxpool.Pool) []string {
	t.Helper()
	names := map[string]string{}
	var lines []string
	rows, err := raw.Query(t.Context(), `SELECT id::text, mode || '/' || trigger || '/' || COALESCE(repository, '') || '(' || COALESCE(repo_id, 0) || ')#' || COALESCE(pr_number, 0) || '@' || head_sha,
		    status, status_reason, cancel_requested, COALESCE(delivery_id, '') FROM review_runs`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id, name, status, reason, delivery string
		var cancel bool
		if err := rows.Scan(&id, &name, &status, &reason, &cancel, &delivery); err != nil {
			t.Fatal(err)
		}
		names[id] = name
		lines = append(lines, fmt.Sprintf("run %s %s %q cancel=%t delivery=%s", name, status, reason, cancel, delivery))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows, err = raw.Query(t.Context(), `SELECT delivery_id, event, action, COALESCE(installation_id, 0), COALESCE(repository, ''),
		    outcome, detail, COALESCE(pr_number, 0), head_sha FROM webhook_deliveries`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id, event, action, repo, outcome, detail, head string
		var inst int64
		var pr int
		if err := rows.Scan(&id, &event, &action, &inst, &repo, &outcome, &detail, &pr, &head); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, fmt.Sprintf("delivery %s %s %s %d %s#%d@%s %s %q", id, event, action, inst, repo, pr, head, outcome, detail))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	for i, l := range lines {
		lines[i] = uuidRE.ReplaceAllStringFunc(l, func(id string) string { return "<" + names[id] + ">" })
	}
	sort.Strings(lines)
	return lines
}

// TestIntakeStoresEachDeliveryOnce: concurrent calls, each delivery sent
// three times at once, are recorded exactly once each; one call of each
// reports it new, the others Duplicate.
func TestIntakeStoresEachDeliveryOnce(t *testing.T) {
	t.Parallel()
	s, raw := newStore(t)
	in := s.NewIntake(store.IntakeOptions{MaxDeliveries: 16, MaxWait: 5 * time.Millisecond})
	const deliveries, copies, pulls = 150, 3, 20
	var (
		mu    sync.Mutex
		fresh = map[string]int{}
		wg    sync.WaitGroup
	)
	for c := range copies {
		for i := range deliveries {
			wg.Go(func() {
				r := opened(fmt.Sprintf("d%d", i), 1+i%pulls, "synchronize", fmt.Sprintf("head%d", i))
				res, err := in.RecordDelivery(t.Context(), r.d, r.run)
				if err != nil {
					t.Errorf("copy %d of d%d: %v", c, i, err)
					return
				}
				mu.Lock()
				defer mu.Unlock()
				if !res.Duplicate {
					fresh[r.d.ID]++
				}
			})
		}
	}
	wg.Wait()
	for i := range deliveries {
		if id := fmt.Sprintf("d%d", i); fresh[id] != 1 {
			t.Errorf("%s reported new by %d calls, want 1", id, fresh[id])
		}
	}
	var stored, runs, queued int
	err := raw.QueryRow(t.Context(), `SELECT (SELECT count(*) FROM webhook_deliveries),
		    (SELECT count(*) FROM review_runs WHERE delivery_id IS NOT NULL),
		    (SELECT count(*) FROM review_runs WHERE status = 'queued')`).Scan(&stored, &runs, &queued)
	if err != nil {
		t.Fatal(err)
	}
	if stored != deliveries || runs != deliveries || queued != pulls {
		t.Errorf("%d deliveries, %d runs, %d queued stored; want %d, %d and %d (one per pull request)",
			stored, runs, queued, deliveries, deliveries, pulls)
	}
}

// TestIntakeFailedBatchRecordsEachAlone: when a batch fails because of
// one delivery — at its commit or in the middle of its statements — the
// others are recorded each in its own transaction, and the failing one is
// neither recorded nor acknowledged.
func TestIntakeFailedBatchRecordsEachAlone(t *testing.T) {
	t.Parallel()
	for name, timing := range map[string]string{
		"at commit":     "DEFERRABLE INITIALLY DEFERRED",
		"at the insert": "NOT DEFERRABLE",
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s, raw := newStore(t)
			// A constraint trigger fails any transaction that inserts
			// the delivery "poison", at the insert or at commit.
			_, err := raw.Exec(t.Context(), `
				CREATE FUNCTION refuse_poison() RETURNS trigger AS $$
				BEGIN
				    IF NEW.delivery_id = 'poison' THEN RAISE EXCEPTION 'poisoned'; END IF;
				    RETURN NULL;
				END $$ LANGUAGE plpgsql;
				CREATE CONSTRAINT TRIGGER refuse_poison AFTER INSERT ON webhook_deliveries
				    `+timing+` FOR EACH ROW EXECUTE FUNCTION refuse_poison();`)
			if err != nil {
				t.Fatal(err)
			}
			recordWithPoison(t, s, raw)
		})
	}
}

// recordWithPoison records ten deliveries at once, the fifth "poison",
// and checks that all others are recorded and acknowledged.
func recordWithPoison(t *testing.T, s *store.Store, raw *pgxpool.Pool) {
	t.Helper()
	in := s.NewIntake(store.IntakeOptions{MaxDeliveries: 10, MaxWait: time.Second})
	errs := make([]error, 10)
	var wg sync.WaitGroup
	for i := range errs {
		wg.Go(func() {
			id := fmt.Sprintf("d%d", i)
			if i == 4 {
				id = "poison"
			}
			r := opened(id, i+1, "opened", "h")
			_, errs[i] = in.RecordDelivery(t.Context(), r.d, r.run)
		})
	}
	wg.Wait()
	for i, err := range errs {
		if (err != nil) != (i == 4) {
			t.Errorf("delivery %d: error %v; want one only for the poisoned delivery", i, err)
		}
	}
	rows, err := raw.Query(t.Context(), `SELECT delivery_id FROM webhook_deliveries ORDER BY delivery_id`)
	if err != nil {
		t.Fatal(err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"d0", "d1", "d2", "d3", "d5", "d6", "d7", "d8", "d9"}
	if diff := cmp.Diff(want, ids); diff != "" {
		t.Errorf("recorded deliveries (-want +got):\n%s", diff)
	}
}

// TestIntakeSharesCommitsAtASteadyRate: a delivery that comes within
// MaxWait of the one before opens a batch that waits for company even
// though no other batch is being written, so deliveries arriving at a
// steady rate share a transaction (rows a transaction inserted carry its
// id, xmin); the first delivery, after a pause, is written at once. The
// batch holds two deliveries, so the test waits for no timer.
func TestIntakeSharesCommitsAtASteadyRate(t *testing.T) {
	t.Parallel()
	s, raw := newStore(t)
	const wait = 10 * time.Second
	in := s.NewIntake(store.IntakeOptions{MaxWait: wait, MaxDeliveries: 2})
	record := func(id string, n int) {
		r := opened(id, n, "opened", "h")
		if _, err := in.RecordDelivery(t.Context(), r.d, r.run); err != nil {
			t.Error(err)
		}
	}
	start := time.Now()
	record("first", 1)
	if took := time.Since(start); took >= wait {
		t.Errorf("the first delivery took %v: a delivery after a pause must not wait for company", took)
	}
	var wg sync.WaitGroup
	wg.Go(func() { record("steady-a", 2) }) // within wait of "first": waits
	time.Sleep(20 * time.Millisecond)
	wg.Go(func() { record("steady-b", 3) }) // joins steady-a's batch, which is then full
	wg.Wait()

	rows, err := raw.Query(t.Context(), `SELECT delivery_id, xmin::text FROM webhook_deliveries`)
	if err != nil {
		t.Fatal(err)
	}
	xmin := map[string]string{}
	var id, tx string
	if _, err := pgx.ForEachRow(rows, []any{&id, &tx}, func() error {
		xmin[id] = tx
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if xmin["steady-a"] == "" || xmin["steady-a"] != xmin["steady-b"] {
		t.Errorf("steady deliveries in transactions %q and %q, want one", xmin["steady-a"], xmin["steady-b"])
	}
	if xmin["first"] == xmin["steady-a"] {
		t.Errorf("transactions %v: the first delivery must be written alone", xmin)
	}
}
