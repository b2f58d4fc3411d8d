package webhook_test

import (
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mergeguard/mergeguard/github/githubtest"
	"github.com/mergeguard/mergeguard/server/store/storetest"
)

// TestBatchedIntakeAcknowledgesOnlyCommitted restarts the database (a
// server of the test's own) while senders keep posting deliveries, each
// sent twice at once, to the batched intake: every delivery answered 200
// is stored exactly once, with its run; one never answered 200 may be
// stored (its commit's answer was lost) or not, never twice.
func TestBatchedIntakeAcknowledgesOnlyCommitted(t *testing.T) {
	t.Parallel()
	pg := storetest.StartServer(t)
	in := newIntakeOn(t, pg.URL())
	base := githubtest.Payload(t, "pull_request/opened.payload.json")
	const senders = 16

	var (
		mu     sync.Mutex
		status = map[string][]int{} // by delivery id, one status per copy
		wg     sync.WaitGroup
		stop   = make(chan struct{})
	)
	post := func(id string, body []byte) int {
		req, err := githubtest.Delivery{Event: "pull_request", ID: id, Payload: body}.Request(t.Context(), in.url, in.secret)
		if err != nil {
			t.Error(err)
			return 0
		}
		code, _ := deliver(req) // an error is no acknowledgement (0)
		return code
	}
	for s := range senders {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				id := fmt.Sprintf("s%d-%d", s, i)
				body := githubtest.SetFields(t, base, map[string]any{"number": 1 + s*10000 + i, "pull_request.head.sha": id})
				var copies sync.WaitGroup
				for range 2 { // a redelivery racing the delivery
					copies.Go(func() {
						code := post(id, body)
						mu.Lock()
						defer mu.Unlock()
						status[id] = append(status[id], code)
					})
				}
				copies.Wait()
			}
		})
	}
	time.Sleep(500 * time.Millisecond)
	if err := pg.Restart(); err != nil {
		t.Error(err)
	}
	time.Sleep(time.Second)
	close(stop)
	wg.Wait()

	stored := storedDeliveries(t, pg.URL())
	var acked, failed int
	for id, codes := range status {
		ok := codes[0] == http.StatusOK || codes[1] == http.StatusOK
		switch {
		case ok && stored[id] != 1:
			t.Errorf("delivery %s answered %v, stored with a run %d times; want once", id, codes, stored[id])
		case ok:
			acked++
		default:
			failed++
		}
		if stored[id] > 1 {
			t.Errorf("delivery %s stored %d times", id, stored[id])
		}
	}
	t.Logf("%d deliveries acknowledged, %d not (the database restarting)", acked, failed)
	if acked == 0 {
		t.Error("no delivery was acknowledged")
	}
}

// storedDeliveries counts, by delivery id, the deliveries stored with the
// run they queued.
func storedDeliveries(t *testing.T, url string) map[string]int {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(t.Context())
	rows, err := conn.Query(t.Context(), `SELECT d.delivery_id, count(r.id) FROM webhook_deliveries d
		JOIN review_runs r ON r.delivery_id = d.delivery_id GROUP BY d.delivery_id`)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	var id string
	var n int
	if _, err := pgx.ForEachRow(rows, []any{&id, &n}, func() error { out[id] = n; return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}
