package e2e

import (
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mergeguard/mergeguard/github/githubtest"
	"github.com/mergeguard/mergeguard/review/llm/llmtest"
	"github.com/mergeguard/mergeguard/server/store/storetest"
)

// Settings of the soak test.
const (
	soakRepos          = 50
	soakPRsPerRepo     = 4  // 200 pull requests in flight
	soakInstallations  = 10 // the repositories' App installations
	soakWorkers        = 4  // per replica
	soakLease          = 10 * time.Second
	soakLLMLatency     = 200 * time.Millisecond
	soakDefaultRun     = 3 * time.Minute
	soakTick           = 250 * time.Millisecond
	soakMaxPushes      = 100 // per tick
	soakSample         = 5 * time.Second
	soakWarmUp         = 30 * time.Second
	soakDrain          = 2 * time.Minute
	soakMemoryGrowth   = 0.25     // allowed RSS growth, start to end
	soakMemorySlackRSS = 16 << 20 // allowed on top, for small processes
)

// TestSoak keeps 200 pull requests across 50 repositories in flight through
// two replicas for a few minutes (MERGEGUARD_SOAK_DURATION, default 3m): as
// soon as a pull request's review ends, a new head is pushed; some heads
// are pushed while their review runs, and some deliveries are redelivered
// to the other replica. Then it checks the database and the fake GitHub's
// record: every pull request reviewed exactly once per reviewed head, no
// job left queued or running, and the memory of both replicas flat (the
// median RSS of the last quarter of the run within 25% + 16 MB of the first
// quarter after a warm-up). Opt in with MERGEGUARD_SOAK=1 (make soak).
func TestSoak(t *testing.T) {
	if os.Getenv("MERGEGUARD_SOAK") != "1" {
		t.Skip("set MERGEGUARD_SOAK=1 (make soak) to run the soak test")
	}
	duration := soakDefaultRun
	if v := os.Getenv("MERGEGUARD_SOAK_DURATION"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 2*soakWarmUp || d > 30*time.Minute {
			t.Fatalf("MERGEGUARD_SOAK_DURATION=%q: want a duration from %s to 30m", v, 2*soakWarmUp)
		}
		duration = d
	}
	bin := buildBinary(t)
	app := newFakeApp(t)
	llm := llmtest.New(t, reviewModel(0), llmtest.WithLatency(soakLLMLatency))
	dbURL := storetest.Empty(t)
	opts := serveOptions{env: app.serveEnv(llm.URL(), soakWorkers), config: workerConfig(soakLease), writeInterval: time.Second}
	replicas := startReplicas(t, bin, dbURL, opts)
	db := openDB(t, dbURL)

	// The pull requests, by prKey, and the number of heads each had.
	type pull struct {
		pr           githubtest.PR
		installation int64
		heads        int
	}
	pulls := map[string]*pull{}
	deliveries := 0
	send := func(p *pull, action string) {
		deliveries++
		d := githubtest.Delivery{Event: "pull_request", ID: fmt.Sprintf("soak-%d", deliveries),
			Payload: installationPayload(t, p.pr, action, p.installation)}
		app.mustDeliver(t, replicas[deliveries%2].url, d)
		if deliveries%10 == 0 {
			app.mustDeliver(t, replicas[(deliveries+1)%2].url, d) // a redelivery
		}
	}
	push := func(p *pull) {
		p.heads++
		head := sha("soak", p.pr.Repo, p.pr.Number, p.heads)
		app.gh.SetHeadSHA(p.pr.Owner, p.pr.Repo, p.pr.Number, head)
		p.pr.HeadSHA = head
		send(p, "synchronize")
	}
	for r := range soakRepos {
		for n := 1; n <= soakPRsPerRepo; n++ {
			repo := fmt.Sprintf("repo-%02d", r)
			p := &pull{heads: 1, installation: int64(r%soakInstallations + 1)}
			p.pr = app.gh.AddPR(newPR("soak", repo, n, 3, "Add user lookup", sha("soak", repo, n, 1)))
			pulls[prKey(p.pr.Owner, p.pr.Repo, p.pr.Number)] = p
			send(p, "opened")
		}
	}

	var samples [][2]memory // per sample, replica A and B
	start := time.Now()
	nextSample := start
	pushedWhileRunning := 0
	inFlight := []int{}
	for time.Since(start) < duration {
		if time.Now().After(nextSample) {
			samples = append(samples, [2]memory{replicas[0].memory(t), replicas[1].memory(t)})
			nextSample = nextSample.Add(soakSample)
			inFlight = append(inFlight, unfinished(t, db))
		}
		pushes, whileRunning := 0, 0
		for _, l := range latestRuns(t, db) {
			p := pulls[l.pr()]
			if p == nil || l.HeadSHA != p.pr.HeadSHA || pushes >= soakMaxPushes {
				continue
			}
			switch {
			case l.Status != "queued" && l.Status != "running":
				push(p)
				pushes++
			case l.Status == "running" && whileRunning < 2 && deliveries%7 == 0:
				push(p) // supersedes the running review
				pushes++
				whileRunning++
			}
		}
		pushedWhileRunning += whileRunning
		if t.Failed() {
			t.FailNow()
		}
		time.Sleep(soakTick)
	}
	elapsed := time.Since(start)
	// Reviews per minute count only the reviews done in the soak window,
	// not those still in flight when it ended.
	var reviews int
	if err := db.QueryRow(t.Context(), `SELECT count(*) FROM review_runs WHERE status = 'succeeded'`).Scan(&reviews); err != nil {
		t.Fatal(err)
	}
	waitFor(t, soakDrain, "every run final after the soak", func() bool { return unfinished(t, db) == 0 })
	drained := time.Since(start) - elapsed

	var current []githubtest.PR
	for _, p := range pulls {
		current = append(current, p.pr)
	}
	all := runs(t, db)
	checkReviews(t, app.gh, all, current)

	statuses := map[string]int{}
	var longest float64
	for _, r := range all {
		statuses[r.Status]++
		longest = max(longest, r.Seconds)
	}
	t.Logf("soak: %s with 200 pull requests in flight (queued or running at the samples: %v), drained in %s",
		elapsed.Round(time.Second), inFlight, drained.Round(time.Second))
	t.Logf("soak: %d deliveries, %d runs %v, %d reviews in the soak (%.0f reviews/min) and %d while draining, %d heads pushed while reviewed, longest run %.1fs, %d LLM calls",
		deliveries, len(all), statuses, reviews, float64(reviews)/elapsed.Minutes(), statuses["succeeded"]-reviews, pushedWhileRunning, longest, llm.Calls())
	checkMemoryFlat(t, replicas, samples)
}

// latestRuns returns the newest run of every pull request.
func latestRuns(t testing.TB, db *pgxpool.Pool) []runRow {
	t.Helper()
	rows, err := db.Query(t.Context(), `SELECT DISTINCT ON (repository, pr_number) repository, pr_number, head_sha, status
		FROM review_runs WHERE mode = 'pr' ORDER BY repository, pr_number, created_at DESC`)
	if err != nil {
		t.Fatal(err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (runRow, error) {
		var r runRow
		err := row.Scan(&r.Repository, &r.PRNumber, &r.HeadSHA, &r.Status)
		return r, err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// checkMemoryFlat compares each replica's median RSS over the first and
// the last quarter of the samples taken after the warm-up.
func checkMemoryFlat(t testing.TB, replicas []*replica, samples [][2]memory) {
	t.Helper()
	skip := int(soakWarmUp / soakSample)
	if len(samples)-skip < 4 {
		t.Errorf("only %d memory samples after the warm-up; run longer", len(samples)-skip)
		return
	}
	samples = samples[skip:]
	q := len(samples) / 4
	for i, r := range replicas {
		var all []int64
		for _, s := range samples {
			all = append(all, s[i].RSS)
		}
		first, last := median(all[:q]), median(all[len(all)-q:])
		limit := int64(float64(first)*(1+soakMemoryGrowth)) + soakMemorySlackRSS
		t.Logf("%s: RSS median %.1f MB in the first quarter, %.1f MB in the last (limit %.1f MB), max %.1f MB, peak %.1f MB; samples (MB): %s",
			r.name, mb(first), mb(last), mb(limit), mb(slices.Max(all)), mb(samples[len(samples)-1][i].PeakRSS), formatMB(all))
		if last > limit {
			t.Errorf("%s: RSS grew from %.1f MB to %.1f MB over the soak (limit %.1f MB)", r.name, mb(first), mb(last), mb(limit))
		}
	}
}

func median(v []int64) int64 {
	s := slices.Sorted(slices.Values(v))
	return s[len(s)/2]
}

func formatMB(v []int64) string {
	out := make([]string, len(v))
	for i, b := range v {
		out[i] = fmt.Sprintf("%.0f", mb(b))
	}
	return fmt.Sprint(out)
}
