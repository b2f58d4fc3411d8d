package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mergeguard/mergeguard/github/githubtest"
	"github.com/mergeguard/mergeguard/review/llm/llmtest"
	"github.com/mergeguard/mergeguard/server/store"
	"github.com/mergeguard/mergeguard/server/store/storetest"
)

// TestTwoReplicas runs two `mergeguard serve` processes on one database
// (docs/architecture.md: replicas share Postgres and nothing else) with the
// GitHub App on a fake GitHub:
//
//  1. Both start at once on an empty database and migrate it.
//  2. 40 pull requests across 5 repositories are opened, the deliveries
//     split across the replicas; every fourth is redelivered to the other
//     replica (every eighth to both at once), and every fifth gets a new
//     head (synchronize) while its first review runs. Every pull request is
//     then reviewed exactly once per reviewed head, nothing is posted twice,
//     every run is final and no superseded run posted.
//  3. A run executed by one replica is streamed live from the other
//     (LISTEN/NOTIFY across replicas).
//  4. The replica running a review is killed (SIGKILL); the other takes the
//     run over when its lease expires, and posts it once.
func TestTwoReplicas(t *testing.T) {
	t.Parallel()
	const (
		repos      = 5
		prsPerRepo = 8
		workers    = 3
		lease      = 3 * time.Second
		slow       = 1500 * time.Millisecond
	)
	bin := buildBinary(t)
	app := newFakeApp(t)
	llm := llmtest.New(t, reviewModel(slow), llmtest.WithLatency(50*time.Millisecond))
	dbURL := storetest.Empty(t)
	opts := serveOptions{env: app.serveEnv(llm.URL(), workers), config: workerConfig(lease)}
	replicas := startReplicas(t, bin, dbURL, opts)
	// 1. Both replicas migrated the empty database at once. The first
	// migration creates its tables without IF NOT EXISTS: had it run twice,
	// a replica would have failed to start.
	latest, err := store.LatestVersion()
	if err != nil {
		t.Fatal(err)
	}
	if v, dirty, err := store.MigrateVersion(t.Context(), dbURL); err != nil || v != latest || dirty {
		t.Fatalf("schema version %d dirty=%t err=%v after both replicas started; want %d, clean", v, dirty, err, latest)
	}
	db := openDB(t, dbURL)

	// 2. Forty pull requests.
	type scripted struct {
		pr          githubtest.PR
		redeliver   bool
		synchronize bool // a new head while the first review runs
	}
	var prs []*scripted
	for r := range repos {
		for n := 1; n <= prsPerRepo; n++ {
			i := len(prs)
			s := &scripted{redeliver: i%4 == 0, synchronize: i%5 == 1}
			title := fmt.Sprintf("Add user lookup %d", i)
			if s.synchronize || i == streamed {
				title = slowTitle + " " + title
			}
			s.pr = app.gh.AddPR(newPR("acme", fmt.Sprintf("repo-%d", r), n, 3, title, sha("head", r, n, 1)))
			prs = append(prs, s)
		}
	}
	streamDone := make(chan streamResult, 1)
	var wg sync.WaitGroup
	for i, s := range prs {
		to, other := replicas[i%2], replicas[(i+1)%2]
		wg.Go(func() {
			d := githubtest.Delivery{Event: "pull_request", ID: fmt.Sprintf("open-%d", i), Payload: payload(t, s.pr, "opened")}
			switch {
			case s.redeliver && i%8 == 0: // to both replicas at once
				var both sync.WaitGroup
				for _, r := range replicas {
					both.Go(func() { app.mustDeliver(t, r.url, d) })
				}
				both.Wait()
			case s.redeliver:
				app.mustDeliver(t, to.url, d)
				app.mustDeliver(t, other.url, d)
			default:
				app.mustDeliver(t, to.url, d)
			}
			if i == streamed {
				run := waitRun(t, db, s.pr, s.pr.HeadSHA, 30*time.Second, "running")
				streamDone <- streamFromOther(t, replicas, run)
			}
			if !s.synchronize {
				return
			}
			waitRun(t, db, s.pr, s.pr.HeadSHA, 30*time.Second, "running")
			head := sha("head", s.pr.Repo, s.pr.Number, 2)
			app.gh.SetHeadSHA(s.pr.Owner, s.pr.Repo, s.pr.Number, head)
			s.pr.HeadSHA = head
			app.mustDeliver(t, other.url, githubtest.Delivery{Event: "pull_request", ID: fmt.Sprintf("sync-%d", i), Payload: payload(t, s.pr, "synchronize")})
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	waitFor(t, 60*time.Second, "every run final", func() bool { return unfinished(t, db) == 0 })

	var current []githubtest.PR
	for _, s := range prs {
		current = append(current, s.pr)
	}
	all := runs(t, db)
	checkReviews(t, app.gh, all, current)
	perPR := map[string][]runRow{}
	ran := map[string]int{}
	for _, r := range all {
		perPR[r.pr()] = append(perPR[r.pr()], r)
		for _, rep := range replicas {
			if rep.owns(r.LockedBy) {
				ran[rep.name]++
			}
		}
	}
	for _, s := range prs {
		key := prKey(s.pr.Owner, s.pr.Repo, s.pr.Number)
		var got []string
		for _, r := range perPR[key] {
			got = append(got, r.Status)
		}
		want := "[succeeded]"
		if s.synchronize {
			want = "[superseded succeeded]"
		}
		if fmt.Sprint(got) != want {
			t.Errorf("%s: runs %v, want %s", key, got, want)
		}
	}
	for _, rep := range replicas {
		if ran[rep.name] == 0 {
			t.Errorf("%s ran no review (runs by replica: %v)", rep.name, ran)
		}
	}
	t.Logf("runs by replica: %v", ran)

	// 3. The run streamed from the other replica.
	checkStream(t, <-streamDone)

	// 4. Kill the replica running a review.
	killPR := app.gh.AddPR(newPR("acme", "repo-0", 100, 3, slowTitle+" Killed mid-review", sha("kill", 1)))
	app.mustDeliver(t, replicas[0].url, githubtest.Delivery{Event: "pull_request", ID: "open-kill", Payload: payload(t, killPR, "opened")})
	run := waitRun(t, db, killPR, killPR.HeadSHA, 30*time.Second, "running")
	victim, survivor := replicas[0], replicas[1]
	if survivor.owns(run.LockedBy) {
		victim, survivor = survivor, victim
	}
	waitFor(t, 10*time.Second, "the run to reach the model", func() bool { return llmAsked(llm, "Killed mid-review") })
	victim.kill(t)
	killedAt := time.Now()
	final := waitRun(t, db, killPR, killPR.HeadSHA, 30*time.Second, "succeeded", "failed", "superseded", "skipped")
	t.Logf("run %s finished %s by %s %.1fs after %s was killed (lease %s)", final.ID, final.Status, final.LockedBy,
		time.Since(killedAt).Seconds(), victim.name, lease)
	if final.Status != "succeeded" || !survivor.owns(final.LockedBy) || final.Attempts != 2 {
		t.Errorf("run after its replica was killed: %s by %s in %d attempts; want succeeded by %s (pid %d) in 2",
			final.Status, final.LockedBy, final.Attempts, survivor.name, survivor.pid())
	}
	waitFor(t, 10*time.Second, "the run's review", func() bool {
		return len(app.gh.Reviews(killPR.Owner, killPR.Repo, killPR.Number)) > 0
	})
	checkReviews(t, app.gh, runs(t, db), append(current, killPR))
}

// streamed is the pull request (by index) whose run is streamed from the
// replica that does not run it.
const streamed = 2

// llmAsked reports whether a model request mentioned s.
func llmAsked(llm *llmtest.Server, s string) bool {
	for _, r := range llm.Requests() {
		for _, m := range r.Messages {
			if strings.Contains(m.Content, s) {
				return true
			}
		}
	}
	return false
}

// prKey names a pull request as runs do: "owner/repo#n".
func prKey(owner, repo string, number int) string {
	return fmt.Sprintf("%s/%s#%d", owner, repo, number)
}

// checkReviews checks the database's runs against the reviews on the fake
// GitHub. prs are the pull requests, each at its current head.
//
//   - Every run is final; none failed.
//   - A pull request has at most one review per head SHA, and exactly one
//     of its current head.
//   - Every review is the one a succeeded run recorded as posted: on the
//     run's head, carrying the run's marker.
//   - No superseded or skipped run posted, or began to post.
//   - GitHub was asked to create as many reviews as there are.
func checkReviews(t testing.TB, gh *githubtest.Server, all []runRow, prs []githubtest.PR) {
	t.Helper()
	byReview := map[int64]runRow{}
	for _, r := range all {
		switch {
		case r.Status == "queued" || r.Status == "running":
			t.Errorf("run %s of %s is still %s", r.ID, r.pr(), r.Status)
		case r.Status == "failed":
			t.Errorf("run %s of %s failed: %s", r.ID, r.pr(), r.Error)
		case r.Status == "succeeded" && r.PostedReviewID == 0:
			t.Errorf("run %s of %s succeeded without posting", r.ID, r.pr())
		case r.Status == "succeeded":
			if twin, dup := byReview[r.PostedReviewID]; dup {
				t.Errorf("runs %s and %s of %s recorded the same review %d", twin.ID, r.ID, r.pr(), r.PostedReviewID)
			}
			byReview[r.PostedReviewID] = r
		case r.PostedReviewID != 0 || r.PostStarted:
			t.Errorf("%s run %s of %s posted (review %d, post started %t)", r.Status, r.ID, r.pr(), r.PostedReviewID, r.PostStarted)
		}
	}
	total := 0
	for _, pr := range prs {
		key := prKey(pr.Owner, pr.Repo, pr.Number)
		perHead := map[string]int{}
		for _, rv := range gh.Reviews(pr.Owner, pr.Repo, pr.Number) {
			total++
			perHead[rv.CommitID]++
			r, ok := byReview[rv.ID]
			switch {
			case !ok:
				t.Errorf("%s: review %d on %.7s was recorded by no succeeded run", key, rv.ID, rv.CommitID)
			case r.HeadSHA != rv.CommitID || !strings.Contains(rv.Body, r.ID):
				t.Errorf("%s: review %d on %.7s does not belong to run %s of head %.7s", key, rv.ID, rv.CommitID, r.ID, r.HeadSHA)
			}
		}
		for commit, n := range perHead {
			if n > 1 {
				t.Errorf("%s: %d reviews of head %.7s, want one", key, n, commit)
			}
		}
		if perHead[pr.HeadSHA] != 1 {
			t.Errorf("%s: %d reviews of the current head %.7s, want 1", key, perHead[pr.HeadSHA], pr.HeadSHA)
		}
	}
	created := 0
	for _, c := range gh.CallsTo(githubtest.RouteCreateReview) {
		if c.Status < 300 {
			created++
		}
	}
	if created != total || total != len(byReview) {
		t.Errorf("GitHub created %d reviews; %d are on the pull requests; %d succeeded runs posted", created, total, len(byReview))
	}
}

// streamResult is what a client of /api/review/{id}/stream received.
type streamResult struct {
	runID    string
	from     string // the replica streamed from
	runBy    string // the replica running the run
	since    time.Time
	events   []streamedEvent
	err      error
	finished bool // the stream ended with the run's last event
}

type streamedEvent struct {
	typ      string
	at       time.Time // the event's time
	received time.Time
}

// streamFromOther streams a running run from the replica that does not run
// it, until the stream ends (at most 30s).
func streamFromOther(t testing.TB, replicas []*replica, run runRow) streamResult {
	res := streamResult{runID: run.ID, since: time.Now()}
	from := replicas[0]
	for _, r := range replicas {
		if r.owns(run.LockedBy) {
			res.runBy = r.name
		} else {
			from = r
		}
	}
	res.from = from.name
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, from.url+"/api/review/"+run.ID+"/stream", nil)
	if err != nil {
		res.err = err
		return res
	}
	req.Header.Set("Authorization", "Bearer "+e2eToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		res.err = err
		return res
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		res.err = fmt.Errorf("status %d", resp.StatusCode)
		return res
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var e store.StoredEvent
		if err := json.Unmarshal([]byte(data), &e); err != nil {
			res.err = err
			return res
		}
		res.events = append(res.events, streamedEvent{typ: string(e.Type), at: e.Time, received: time.Now()})
	}
	res.err = sc.Err()
	if n := len(res.events); n > 0 {
		last := res.events[n-1].typ
		res.finished = last == "pipeline.completed" || last == "pipeline.failed"
	}
	return res
}

// checkStream checks that the streamed run's events arrived live: every
// event stored after the client subscribed reached it within a second,
// well under the stream's 5s fallback poll, so the other replica's NOTIFY
// woke it.
func checkStream(t testing.TB, res streamResult) {
	t.Helper()
	if res.err != nil {
		t.Errorf("stream of run %s from %s: %v", res.runID, res.from, res.err)
		return
	}
	if res.runBy == "" || res.runBy == res.from {
		t.Errorf("run %s was run by %q and streamed from %q; want two replicas", res.runID, res.runBy, res.from)
	}
	live := 0
	for _, e := range res.events {
		if e.at.Before(res.since) {
			continue
		}
		live++
		if lag := e.received.Sub(e.at); lag > time.Second {
			t.Errorf("event %s of run %s reached %s %s after it was stored by %s; want < 1s (NOTIFY across replicas)",
				e.typ, res.runID, res.from, lag.Round(time.Millisecond), res.runBy)
		}
	}
	if live < 2 || !res.finished {
		t.Errorf("stream of run %s from %s: %d events, %d live, ended with the pipeline: %t; want live events to the end",
			res.runID, res.from, len(res.events), live, res.finished)
	}
	t.Logf("run %s run by %s, streamed from %s: %d events, %d live", res.runID, res.runBy, res.from, len(res.events), live)
}
