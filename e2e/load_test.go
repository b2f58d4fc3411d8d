package e2e

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mergeguard/mergeguard/github/githubtest"
	"github.com/mergeguard/mergeguard/review/llm/llmtest"
	"github.com/mergeguard/mergeguard/server/store/storetest"
)

var loadOut = flag.String("load-out", filepath.Join("..", "bench", "load.json"),
	"where TestLoad writes its results as JSON")

// Bounds and settings of the load test.
const (
	intakeMaxDeliveries = 3000             // per concurrency level
	intakeMaxDuration   = 20 * time.Second // per concurrency level
	intakePulls         = 500              // distinct pull requests per level
	loadLLMLatency      = 200 * time.Millisecond
	loadLease           = 30 * time.Second
	reviewsMaxDuration  = 60 * time.Second // per worker count
	memoryPRFiles       = 3000
)

// Goals the load test reports against (issues "Production readiness" and
// "Performance side by side with the peers": the intake figures hold on a
// PostgreSQL with default durability).
const (
	goalIntakePerSecond = 2000
	goalIntakeP99       = 25 * time.Millisecond
	goalIntakeSenders   = 50
	goalCallsFiles      = 20
	goalBaseCalls       = 8
)

// loadResults is the JSON TestLoad writes.
type loadResults struct {
	Machine   machine        `json:"machine"`
	Intake    []intakeLevel  `json:"intake"`
	Reviews   []reviewsLevel `json:"reviews"`
	PerReview []reviewCost   `json:"per_review"`
	Memory    memoryResult   `json:"memory"`
	Goals     []goal         `json:"goals"`
}

type machine struct {
	CPUs int `json:"cpus"`
	// Database is the intake's PostgreSQL: version, fsync and
	// synchronous_commit.
	Database string `json:"database"`
	Go       string `json:"go"`
	OS       string `json:"os"`
	Date     string `json:"date"`
}

// intakeLevel is webhook intake at one number of concurrent senders.
type intakeLevel struct {
	Senders int `json:"senders"`
	// Offered is the pace of the senders together in deliveries/s; 0
	// means each sender sends as soon as its last delivery is answered.
	// Paced latencies count from when a delivery was due.
	Offered    int     `json:"offered_per_second"`
	Deliveries int     `json:"deliveries"`
	Errors     int     `json:"errors"`
	Seconds    float64 `json:"seconds"`
	PerSecond  float64 `json:"per_second"`
	P50MS      float64 `json:"p50_ms"`
	P99MS      float64 `json:"p99_ms"`
	MaxMS      float64 `json:"max_ms"`
	// CPUMSPerDelivery is the CPU time (user and system) of the replica's
	// process per delivery.
	CPUMSPerDelivery float64 `json:"cpu_ms_per_delivery"`
}

// reviewsLevel is end-to-end review throughput with a number of workers.
type reviewsLevel struct {
	Workers int `json:"workers"`
	// Installations is how many App installations the pull requests
	// belong to: each installation's reviews are posted at most one a
	// second per replica (github.RetryPolicy.MinWriteInterval).
	Installations int     `json:"installations"`
	LLMLatencyMS  int64   `json:"llm_latency_ms"`
	Reviews       int     `json:"reviews"`
	Seconds       float64 `json:"seconds"`
	PerMinute     float64 `json:"per_minute"`
	MeanReviewS   float64 `json:"mean_review_seconds"`
	Unfinished    int     `json:"unfinished"`
	LLMCalls      int     `json:"llm_calls"`
	ReviewFiles   int     `json:"files_per_pr"`
	SucceededAll  bool    `json:"all_succeeded"`
}

// reviewCost is what one review of a pull request of a given size cost.
type reviewCost struct {
	Files        int            `json:"files"`
	Status       string         `json:"status"`
	Seconds      float64        `json:"seconds"`
	GitHubCalls  int            `json:"github_calls"`
	ToolReads    int            `json:"tool_reads"`
	ByRoute      map[string]int `json:"github_calls_by_route"`
	LLMCalls     int            `json:"llm_calls"`
	InputTokens  int            `json:"input_tokens"`
	OutputTokens int            `json:"output_tokens"`
}

// memoryResult is the memory of a replica reviewing one large pull request.
type memoryResult struct {
	Files       int     `json:"files"`
	Status      string  `json:"status"`
	Seconds     float64 `json:"seconds"`
	IdleRSSMB   float64 `json:"idle_rss_mb"`
	PeakRSSMB   float64 `json:"peak_rss_mb"`
	AfterRSSMB  float64 `json:"after_rss_mb"`
	LLMCalls    int     `json:"llm_calls"`
	GitHubCalls int     `json:"github_calls"`
}

type goal struct {
	Goal     string `json:"goal"`
	Measured string `json:"measured"`
	Met      bool   `json:"met"`
}

// TestLoad is MergeGuard's load benchmark, run by `make bench` (it is
// skipped unless MERGEGUARD_LOAD=1). It runs the real `mergeguard serve`
// binary on throwaway databases with the fake GitHub and the fake LLM on
// loopback and measures:
//
//   - webhook intake throughput, latency and the replica's CPU time per
//     delivery at 1, 10 and 50 concurrent senders and at 500 and 1,000
//     deliveries/s offered by 50 (each level bounded to 3,000 deliveries or
//     20s), on the test database (MERGEGUARD_PG_DURABLE=1 with
//     scripts/with-postgres.sh makes it one with default durability);
//     MERGEGUARD_LOAD_ONLY=intake measures only this;
//   - end-to-end reviews per minute with 2 and 8 workers, the model
//     answering in 200ms;
//   - GitHub API calls and LLM tokens of one review of a 3, 20, 30 and
//     300-file pull request;
//   - the peak RSS of a replica reviewing a 3,000-file pull request.
//
// It prints a table and writes the numbers as JSON to -load-out (default
// bench/load.json). It asserts only that the runs it measures end; the
// goals are reported, not enforced: speed is measured, never a test.
func TestLoad(t *testing.T) {
	if os.Getenv("MERGEGUARD_LOAD") != "1" {
		t.Skip("set MERGEGUARD_LOAD=1 (make bench) to run the load test")
	}
	bin := buildBinary(t)
	app := newFakeApp(t)
	res := loadResults{Machine: machine{CPUs: runtime.NumCPU(), Go: runtime.Version(), OS: runtime.GOOS + "/" + runtime.GOARCH,
		Date: time.Now().UTC().Format(time.RFC3339)}}

	res.Intake, res.Machine.Database = loadIntake(t, bin, app)
	if os.Getenv("MERGEGUARD_LOAD_ONLY") != "intake" {
		res.Reviews = loadReviews(t, bin, app)
		res.PerReview = loadPerReview(t, bin, app)
		res.Memory = loadMemory(t, bin, app)
	}
	res.Goals = goals(res)

	printResults(os.Stdout, res)
	if *loadOut != "" {
		b, err := json.MarshalIndent(res, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(*loadOut), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(*loadOut, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		abs, _ := filepath.Abs(*loadOut)
		fmt.Fprintf(os.Stdout, "\nresults written to %s\n", abs)
	}
}

// loadIntake measures webhook intake on a replica that runs no workers,
// and describes the database.
func loadIntake(t *testing.T, bin string, app *fakeApp) ([]intakeLevel, string) {
	dbURL := storetest.URL(t)
	r := startReplica(t, bin, "intake", dbURL, serveOptions{env: app.serveEnv("http://127.0.0.1:1/v1", 0)})
	r.waitReady(t)
	defer r.stop(t)
	db := openDB(t, dbURL)
	var version, fsync, syncCommit string
	err := db.QueryRow(t.Context(), `SELECT current_setting('server_version'), current_setting('fsync'),
		    current_setting('synchronous_commit')`).Scan(&version, &fsync, &syncCommit)
	if err != nil {
		t.Fatal(err)
	}
	database := fmt.Sprintf("PostgreSQL %s, fsync %s, synchronous_commit %s", version, fsync, syncCommit)

	// Warm up connections and the database's caches.
	measureIntake(t, app, r.url, 10, 0, intakePayloads(t, "warmup", 100), "warmup-", 200)
	var out []intakeLevel
	for _, level := range []struct{ senders, offered int }{{1, 0}, {10, 0}, {50, 0}, {goalIntakeSenders, 500}, {goalIntakeSenders, 1000}} {
		senders := level.senders
		prefix := fmt.Sprintf("intake-%d-%d-", senders, level.offered)
		payloads := intakePayloads(t, prefix, intakePulls)
		cpu := r.cpuTime(t)
		lvl := measureIntake(t, app, r.url, senders, level.offered, payloads, prefix, intakeMaxDeliveries)
		if lvl.Deliveries > 0 {
			lvl.CPUMSPerDelivery = ms(r.cpuTime(t)-cpu) / float64(lvl.Deliveries)
		}
		var stored int
		if err := db.QueryRow(t.Context(), `SELECT count(*) FROM webhook_deliveries WHERE delivery_id LIKE $1`, prefix+"%").Scan(&stored); err != nil {
			t.Fatal(err)
		}
		if stored != lvl.Deliveries-lvl.Errors {
			t.Errorf("%d senders: %d deliveries answered 200, %d stored", senders, lvl.Deliveries-lvl.Errors, stored)
		}
		out = append(out, lvl)
	}
	return out, database
}

// intakePayloads are pull_request opened payloads of n pull requests of
// load/<repo>.
func intakePayloads(t *testing.T, repo string, n int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = payload(t, githubtest.PR{Owner: "load", Repo: repo, Number: i + 1, Title: "Load",
			HeadSHA: sha(repo, i), BaseSHA: sha("base", repo)}, "opened")
	}
	return out
}

// measureIntake posts up to maxDeliveries deliveries (for at most
// intakeMaxDuration) from senders concurrent senders. With offered 0 each
// sender sends its next delivery when the last one is answered; otherwise
// delivery i is due at start + i/offered seconds, and its latency counts
// from then (a slow answer also delays the deliveries queued behind it).
func measureIntake(t *testing.T, app *fakeApp, url string, senders, offered int, payloads [][]byte, prefix string, maxDeliveries int) intakeLevel {
	var interval time.Duration
	if offered > 0 {
		interval = time.Second / time.Duration(offered)
	}
	var next, errs atomic.Int64
	latencies := make([][]time.Duration, senders)
	var wg sync.WaitGroup
	start := time.Now()
	deadline := start.Add(intakeMaxDuration)
	for s := range senders {
		wg.Go(func() {
			for time.Now().Before(deadline) {
				i := int(next.Add(1)) - 1
				if i >= maxDeliveries {
					return
				}
				d := githubtest.Delivery{Event: "pull_request", ID: fmt.Sprintf("%s%d", prefix, i), Payload: payloads[i%len(payloads)]}
				due := time.Now()
				if interval > 0 {
					due = start.Add(time.Duration(i) * interval)
					time.Sleep(time.Until(due))
				}
				status, err := app.deliver(t.Context(), url, d)
				latencies[s] = append(latencies[s], time.Since(due))
				if err != nil || status != http.StatusOK {
					errs.Add(1)
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	all := slices.Sorted(slices.Values(slices.Concat(latencies...)))
	lvl := intakeLevel{Senders: senders, Offered: offered, Deliveries: len(all), Errors: int(errs.Load()), Seconds: elapsed.Seconds()}
	if len(all) > 0 {
		lvl.PerSecond = float64(len(all)) / elapsed.Seconds()
		lvl.P50MS = ms(all[len(all)/2])
		lvl.P99MS = ms(all[min(len(all)-1, len(all)*99/100)])
		lvl.MaxMS = ms(all[len(all)-1])
	}
	if lvl.Errors > 0 {
		t.Errorf("%d senders: %d of %d deliveries failed", senders, lvl.Errors, lvl.Deliveries)
	}
	return lvl
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// clockTicks is the kernel's USER_HZ, the unit of /proc/<pid>/stat's CPU
// times (100 on Linux's supported architectures).
const clockTicks = 100

// cpuTime is the CPU time the replica's process has used, user and system
// (from /proc/<pid>/stat); 0 where there is no /proc.
func (r *replica) cpuTime(t *testing.T) time.Duration {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", r.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	// The fields after the command name (which is in parentheses):
	// state is field 3, utime 14 and stime 15.
	_, rest, ok := strings.Cut(string(b), ") ")
	fields := strings.Fields(rest)
	if !ok || len(fields) < 13 {
		t.Fatalf("unexpected /proc/<pid>/stat: %q", b)
	}
	var ticks int64
	for _, f := range fields[11:13] {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			t.Fatalf("unexpected /proc/<pid>/stat: %q", b)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / clockTicks
}

// loadReviews measures end-to-end reviews per minute: a replica with n
// workers reviews 20n three-file pull requests delivered at once, of one
// installation or each of its own.
func loadReviews(t *testing.T, bin string, app *fakeApp) []reviewsLevel {
	var out []reviewsLevel
	for _, level := range []struct{ workers, installations int }{{2, 0}, {8, 0}, {8, 1}} {
		workers := level.workers
		llm := llmtest.New(t, reviewModel(0), llmtest.WithLatency(loadLLMLatency))
		dbURL := storetest.URL(t)
		r := startReplica(t, bin, fmt.Sprintf("reviews-%d", workers), dbURL,
			serveOptions{env: app.serveEnv(llm.URL(), workers), config: workerConfig(loadLease), writeInterval: time.Second})
		r.waitReady(t)
		db := openDB(t, dbURL)
		repo := fmt.Sprintf("reviews-%d-%d", workers, level.installations)
		// One installation posts at most a review a second: 20 pull
		// requests show it.
		n := 20 * workers
		installations := level.installations
		switch installations {
		case 0:
			installations = n
		case 1:
			n = 20
		}
		var payloads [][]byte
		for i := range n {
			pr := app.gh.AddPR(newPR("load", repo, i+1, 3, "Add user lookup", sha(repo, i)))
			payloads = append(payloads, installationPayload(t, pr, "opened", int64(i%installations+1)))
		}
		start := time.Now()
		for i, p := range payloads {
			app.mustDeliver(t, r.url, githubtest.Delivery{Event: "pull_request", ID: fmt.Sprintf("%s-%d", repo, i), Payload: p})
		}
		deadline := start.Add(reviewsMaxDuration)
		left := unfinished(t, db)
		for left > 0 && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
			left = unfinished(t, db)
		}
		elapsed := time.Since(start)
		res := reviewsLevel{Workers: workers, Installations: installations, LLMLatencyMS: loadLLMLatency.Milliseconds(), Seconds: elapsed.Seconds(),
			Unfinished: left, LLMCalls: llm.Calls(), ReviewFiles: 3, SucceededAll: true}
		var total float64
		for _, run := range runs(t, db) {
			if run.Status == "succeeded" {
				res.Reviews++
				total += run.Seconds
			} else if run.Status != "queued" && run.Status != "running" {
				res.SucceededAll = false
				t.Errorf("%d workers: run %s of %s %s: %s%s", workers, run.ID, run.pr(), run.Status, run.Reason, run.Error)
			}
		}
		res.PerMinute = float64(res.Reviews) / elapsed.Minutes()
		if res.Reviews > 0 {
			res.MeanReviewS = total / float64(res.Reviews)
		}
		out = append(out, res)
		r.stop(t)
	}
	return out
}

// loadPerReview reviews one pull request of each size on a replica with one
// worker and counts its GitHub API calls and LLM tokens.
func loadPerReview(t *testing.T, bin string, app *fakeApp) []reviewCost {
	llm := llmtest.New(t, reviewModel(0))
	dbURL := storetest.URL(t)
	r := startReplica(t, bin, "per-review", dbURL, serveOptions{env: app.serveEnv(llm.URL(), 1), config: workerConfig(loadLease), writeInterval: time.Second})
	r.waitReady(t)
	defer r.stop(t)
	db := openDB(t, dbURL)
	var out []reviewCost
	for i, files := range []int{3, goalCallsFiles, 30, 300} {
		pr := app.gh.AddPR(newPR("load", fmt.Sprintf("size-%d", files), 1, files, "Add user lookup", sha("size", files)))
		app.gh.ResetCalls()
		llmBefore := llm.Calls()
		// Each its own installation: the reviews do not wait for each
		// other's posts (one a second per installation).
		payload := installationPayload(t, pr, "opened", int64(100+i))
		app.mustDeliver(t, r.url, githubtest.Delivery{Event: "pull_request", ID: fmt.Sprintf("size-%d", files), Payload: payload})
		row := waitRun(t, db, pr, pr.HeadSHA, 2*time.Minute, "succeeded", "failed", "skipped", "superseded")
		c := reviewCost{Files: files, Status: row.Status, Seconds: row.Seconds, ByRoute: map[string]int{},
			LLMCalls: llm.Calls() - llmBefore, InputTokens: row.InputTokens, OutputTokens: row.OutputTokens,
			ToolReads: toolCalls(t, db, row.ID)}
		for _, call := range app.gh.Calls() {
			if call.Route == githubtest.RouteAccessToken || call.Route == githubtest.RouteCodeload {
				continue
			}
			c.GitHubCalls++
			c.ByRoute[call.Route]++
		}
		if row.Status != "succeeded" {
			t.Errorf("%d-file pull request: run %s %s: %s%s", files, row.ID, row.Status, row.Reason, row.Error)
		}
		out = append(out, c)
	}
	return out
}

// toolCalls counts the tool calls the run's reviewers made.
func toolCalls(t *testing.T, db *pgxpool.Pool, runID string) int {
	var n int
	if err := db.QueryRow(t.Context(), `SELECT count(*) FROM review_events WHERE run_id = $1 AND type = 'tool.called'`, runID).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// loadMemory reviews a 3,000-file pull request on a fresh replica and
// samples its resident set size.
func loadMemory(t *testing.T, bin string, app *fakeApp) memoryResult {
	llm := llmtest.New(t, reviewModel(0), llmtest.WithLatency(loadLLMLatency))
	dbURL := storetest.URL(t)
	r := startReplica(t, bin, "memory", dbURL, serveOptions{env: app.serveEnv(llm.URL(), 1), config: workerConfig(loadLease), writeInterval: time.Second})
	r.waitReady(t)
	defer r.stop(t)
	db := openDB(t, dbURL)
	pr := app.gh.AddPR(newPR("load", "huge", 1, memoryPRFiles, "Add user lookup", sha("huge")))
	app.gh.ResetCalls()
	res := memoryResult{Files: memoryPRFiles, IdleRSSMB: mb(r.memory(t).RSS)}
	app.mustDeliver(t, r.url, githubtest.Delivery{Event: "pull_request", ID: "huge", Payload: payload(t, pr, "opened")})
	row := waitRun(t, db, pr, pr.HeadSHA, 3*time.Minute, "succeeded", "failed", "skipped", "superseded")
	m := r.memory(t)
	res.Status, res.Seconds = row.Status, row.Seconds
	res.PeakRSSMB, res.AfterRSSMB = mb(m.PeakRSS), mb(m.RSS)
	res.LLMCalls, res.GitHubCalls = llm.Calls(), app.gh.APICallCount()
	if row.Status != "succeeded" {
		t.Errorf("%d-file pull request: run %s %s: %s%s", memoryPRFiles, row.ID, row.Status, row.Reason, row.Error)
	}
	return res
}

func mb(b int64) float64 { return float64(b) / (1 << 20) }

// goals compares the results with the goals of issue "Production
// readiness".
func goals(res loadResults) []goal {
	var out []goal
	for _, lvl := range res.Intake {
		switch {
		case lvl.Senders != goalIntakeSenders:
		case lvl.Offered == 0:
			out = append(out, goal{
				Goal:     fmt.Sprintf("intake >= %d deliveries/s at %d senders", goalIntakePerSecond, goalIntakeSenders),
				Measured: fmt.Sprintf("%.0f/s at saturation (p99 %.1f ms, %.2f ms CPU a delivery)", lvl.PerSecond, lvl.P99MS, lvl.CPUMSPerDelivery),
				Met:      lvl.PerSecond >= goalIntakePerSecond,
			})
		default:
			out = append(out, goal{
				Goal:     fmt.Sprintf("intake p99 < %s at %d deliveries/s from %d senders", goalIntakeP99, lvl.Offered, goalIntakeSenders),
				Measured: fmt.Sprintf("p99 %.1f ms, %.0f/s delivered", lvl.P99MS, lvl.PerSecond),
				Met:      lvl.P99MS < ms(goalIntakeP99) && lvl.PerSecond >= 0.95*float64(lvl.Offered),
			})
		}
	}
	for _, c := range res.PerReview {
		if c.Files != goalCallsFiles {
			continue
		}
		limit := goalBaseCalls + c.ToolReads
		out = append(out, goal{
			Goal:     fmt.Sprintf("<= %d GitHub API calls + 1 per file a tool reads, %d-file PR", goalBaseCalls, goalCallsFiles),
			Measured: fmt.Sprintf("%d calls, %d tool reads (limit %d)", c.GitHubCalls, c.ToolReads, limit),
			Met:      c.GitHubCalls <= limit,
		})
	}
	return out
}

// printResults writes the results as tables.
func printResults(w io.Writer, res loadResults) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(w, "\nMergeGuard load test: %d CPUs, %s, %s\n\n", res.Machine.CPUs, res.Machine.Go, res.Machine.Date)
	fmt.Fprintf(w, "Webhook intake (signed 28 KB pull_request deliveries, one replica, no workers; %s)\n", res.Machine.Database)
	fmt.Fprintln(tw, "senders\toffered/s\tdeliveries\terrors\tseconds\tdeliveries/s\tp50 ms\tp99 ms\tmax ms\tCPU ms/delivery\t")
	for _, l := range res.Intake {
		offered := "max"
		if l.Offered > 0 {
			offered = fmt.Sprint(l.Offered)
		}
		fmt.Fprintf(tw, "%d\t%s\t%d\t%d\t%.1f\t%.0f\t%.1f\t%.1f\t%.1f\t%.3f\t\n", l.Senders, offered, l.Deliveries, l.Errors, l.Seconds, l.PerSecond, l.P50MS, l.P99MS, l.MaxMS, l.CPUMSPerDelivery)
	}
	_ = tw.Flush()

	fmt.Fprintf(w, "\nEnd-to-end reviews (3-file PRs, model latency %s per call)\n", loadLLMLatency)
	fmt.Fprintln(tw, "workers\tinstallations\treviews\tunfinished\tseconds\treviews/min\tmean review s\tLLM calls\t")
	for _, l := range res.Reviews {
		fmt.Fprintf(tw, "%d\t%d\t%d\t%d\t%.1f\t%.0f\t%.2f\t%d\t\n", l.Workers, l.Installations, l.Reviews, l.Unfinished, l.Seconds, l.PerMinute, l.MeanReviewS, l.LLMCalls)
	}
	_ = tw.Flush()

	fmt.Fprintln(w, "\nCost of one review")
	fmt.Fprintln(tw, "files\tstatus\tseconds\tGitHub calls\ttool reads\tLLM calls\tinput tokens\toutput tokens\t")
	for _, c := range res.PerReview {
		fmt.Fprintf(tw, "%d\t%s\t%.2f\t%d\t%d\t%d\t%d\t%d\t\n", c.Files, c.Status, c.Seconds, c.GitHubCalls, c.ToolReads, c.LLMCalls, c.InputTokens, c.OutputTokens)
	}
	_ = tw.Flush()
	for _, c := range res.PerReview {
		var parts []string
		for _, route := range slices.Sorted(maps.Keys(c.ByRoute)) {
			parts = append(parts, fmt.Sprintf("%d %s", c.ByRoute[route], route))
		}
		fmt.Fprintf(w, "  %d files: %s\n", c.Files, strings.Join(parts, ", "))
	}

	m := res.Memory
	fmt.Fprintf(w, "\nMemory of a %d-file review (%s in %.1fs, %d LLM calls, %d GitHub calls): RSS idle %.0f MB, peak %.0f MB, after %.0f MB\n",
		m.Files, m.Status, m.Seconds, m.LLMCalls, m.GitHubCalls, m.IdleRSSMB, m.PeakRSSMB, m.AfterRSSMB)

	fmt.Fprintln(w, "\nGoals")
	for _, g := range res.Goals {
		verdict := "MET"
		if !g.Met {
			verdict = "NOT MET"
		}
		fmt.Fprintf(w, "  %-7s  %s: %s\n", verdict, g.Goal, g.Measured)
	}
}
