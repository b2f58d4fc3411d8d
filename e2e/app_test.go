package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mergeguard/mergeguard/github/githubtest"
	"github.com/mergeguard/mergeguard/review/llm/llmtest"
)

// installationID is the installation of the fixture payloads.
const installationID = 1

// fakeApp is MergeGuard's GitHub App on a fake GitHub that requires
// installation tokens, and a client that delivers its webhooks.
type fakeApp struct {
	gh     *githubtest.Server
	env    map[string]string // GITHUB_* variables of serve
	secret []byte
	client *http.Client
}

func newFakeApp(t testing.TB) *fakeApp {
	t.Helper()
	gh := githubtest.New(t)
	gh.RequireAuth()
	cfg := gh.AppConfig(4242)
	a := &fakeApp{
		gh: gh,
		env: map[string]string{
			"GITHUB_APP_INTEGRATION_ID": strconv.FormatInt(cfg.App.IntegrationID, 10),
			"GITHUB_APP_WEBHOOK_SECRET": cfg.App.WebhookSecret,
			"GITHUB_APP_PRIVATE_KEY":    cfg.App.PrivateKey,
			"GITHUB_V3_API_URL":         cfg.V3APIURL,
			"GITHUB_V4_API_URL":         cfg.V4APIURL,
		},
		secret: []byte(cfg.App.WebhookSecret),
		client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}, Timeout: 30 * time.Second},
	}
	t.Cleanup(a.client.CloseIdleConnections)
	return a
}

// serveEnv is the environment of a replica: the App, the LLM at llmURL and
// the number of review workers.
func (a *fakeApp) serveEnv(llmURL string, workers int) map[string]string {
	env := map[string]string{
		"OPENAI_BASE_URL":            llmURL,
		"OPENAI_API_KEY":             "test",
		"MERGEGUARD_MODEL":           "gpt-4o-mini",
		"MERGEGUARD_WORKERS":         strconv.Itoa(workers),
		"MERGEGUARD_LLM_CONCURRENCY": strconv.Itoa(max(4, workers)),
	}
	for k, v := range a.env {
		env[k] = v
	}
	return env
}

// workerConfig is a --config file with the given lease, a short poll
// interval, and max_files raised for the large pull requests of the load
// test.
func workerConfig(lease time.Duration) string {
	return fmt.Sprintf("workers:\n  lease: %s\n  poll_interval: 200ms\nreview:\n  max_files: 5000\n", lease)
}

// The change every generated pull request carries: store/users.go with an
// SQL injection on line 10, which the model reports.
const (
	usersGo = "package store\n\nimport (\n\t\"database/sql\"\n\t\"fmt\"\n)\n\n" +
		"// FindUser returns the user with the given name.\n" +
		"func FindUser(db *sql.DB, name string) (*sql.Rows, error) {\n" +
		"\tq := fmt.Sprintf(\"SELECT id FROM users WHERE name = '%s'\", name)\n" +
		"\treturn db.Query(q)\n}\n"
	// usersMarker is only in prompts that show store/users.go.
	usersMarker = "FindUser returns the user"
	// slowTitle in a pull request's title slows the model down on it.
	slowTitle = "[slow]"
)

// newPR is owner/repo#number adding store/users.go and files-1 small Go
// files to a base holding a README, at head.
func newPR(owner, repo string, number, files int, title, head string) githubtest.PR {
	base := map[string]string{"README.md": "Hello\n"}
	headFiles := map[string]string{"README.md": "Hello\n", "store/users.go": usersGo}
	for i := range files - 1 {
		headFiles[fmt.Sprintf("pkg/f%04d.go", i)] = fmt.Sprintf("package pkg\n\n// F%d returns %d.\nfunc F%d() int { return %d }\n", i, i, i, i)
	}
	paths := make([]string, 0, len(headFiles))
	for p := range headFiles {
		if p != "README.md" {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	var d strings.Builder
	for _, p := range paths {
		d.WriteString(githubtest.AddedFileDiff(p, headFiles[p]))
	}
	return githubtest.PR{
		Owner: owner, Repo: repo, Number: number, Title: title,
		Base: base, Head: headFiles, HeadSHA: head, Diff: d.String(),
	}
}

// sha returns a 40-digit commit id made from parts.
func sha(parts ...any) string {
	s := fmt.Sprintf("%x", fmt.Sprint(parts...))
	return (s + strings.Repeat("0", 40))[:40]
}

// payload is the real pull_request payload for pr at its head, with action,
// from the fixtures' installation.
func payload(t testing.TB, pr githubtest.PR, action string) []byte {
	t.Helper()
	return installationPayload(t, pr, action, installationID)
}

// installationPayload is payload from another installation of the App.
func installationPayload(t testing.TB, pr githubtest.PR, action string, installation int64) []byte {
	t.Helper()
	fields := map[string]any{
		"action":                 action,
		"number":                 pr.Number,
		"pull_request.number":    pr.Number,
		"pull_request.title":     pr.Title,
		"pull_request.head.sha":  pr.HeadSHA,
		"pull_request.base.sha":  pr.BaseSHA,
		"repository.name":        pr.Repo,
		"repository.full_name":   pr.Owner + "/" + pr.Repo,
		"repository.owner.login": pr.Owner,
		"installation.id":        installation,
	}
	return githubtest.SetFields(t, githubtest.Payload(t, "pull_request/opened.payload.json"), fields)
}

// deliver posts a signed delivery to a replica's webhook route and returns
// the status of the answer.
func (a *fakeApp) deliver(ctx context.Context, baseURL string, d githubtest.Delivery) (int, error) {
	req, err := d.Request(ctx, baseURL+"/api/github/hook", a.secret)
	if err != nil {
		return 0, err
	}
	resp, err := a.client.Do(req)
	if err != nil {
		return 0, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, nil
}

// mustDeliver delivers and fails the test unless the answer is 200.
func (a *fakeApp) mustDeliver(t testing.TB, baseURL string, d githubtest.Delivery) {
	t.Helper()
	status, err := a.deliver(t.Context(), baseURL, d)
	if err != nil {
		t.Errorf("delivery %s: %v", d.ID, err)
		return
	}
	if status != http.StatusOK {
		t.Errorf("delivery %s to %s: status %d, want 200", d.ID, baseURL, status)
	}
}

// sqlInjection is the finding the model reports on store/users.go.
var sqlInjection = map[string]any{
	"file_path": "store/users.go", "line_start": 10, "line_end": 10, "side": "RIGHT",
	"severity": "critical", "category": "security", "title": "SQL injection",
	"description": "name is formatted into the query.", "suggestion": "Use a placeholder.",
	"code_snippet": "q := fmt.Sprintf(\"SELECT id FROM users WHERE name = '%s'\", name)", "confidence": 0.9,
}

// reviewModel answers like a model reviewing a generated pull request: an
// agent shown store/users.go reads the file with read_file_part, then
// reports the SQL injection; other agents find nothing. Requests about a
// pull request whose title holds slowTitle are answered after slow.
func reviewModel(slow time.Duration) func(llmtest.Request) llmtest.Response {
	return func(req llmtest.Request) llmtest.Response {
		var b strings.Builder
		for _, m := range req.Messages {
			b.WriteString(m.Content)
		}
		prompt := b.String()
		var resp llmtest.Response
		switch {
		case !strings.Contains(prompt, usersMarker):
			resp = llmtest.JSON(map[string]any{"findings": []any{}, "positive_notes": []any{}})
		case len(req.ToolResults()) == 0 && req.HasTool("read_file_part"):
			resp = llmtest.ToolCalls(llmtest.Call("call_1", "read_file_part",
				map[string]any{"file_path": "store/users.go", "start_line": 1, "end_line": 12}))
		default:
			resp = llmtest.JSON(map[string]any{"findings": []any{sqlInjection}, "positive_notes": []any{}})
		}
		if slow > 0 && strings.Contains(prompt, slowTitle) {
			resp = resp.After(slow)
		}
		return resp
	}
}

// runRow is a review run as the database holds it.
type runRow struct {
	ID, Repository  string
	PRNumber        int
	HeadSHA, Status string
	Reason, Error   string
	LockedBy        string
	Attempts        int
	PostedReviewID  int64
	PostStarted     bool
	InputTokens     int
	OutputTokens    int
	Seconds         float64 // from started to finished
}

// pr is the run's pull request, "owner/repo#n".
func (r runRow) pr() string { return fmt.Sprintf("%s#%d", r.Repository, r.PRNumber) }

// openDB opens a pool on dbURL for the test's own queries.
func openDB(t testing.TB, dbURL string) *pgxpool.Pool {
	t.Helper()
	db, err := pgxpool.New(t.Context(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	return db
}

// runColumns are the columns of review_runs that scanRun reads.
const runColumns = `id::text, repository, pr_number, head_sha, status,
	status_reason, error, COALESCE(locked_by, ''), attempts, COALESCE(posted_review_id, 0),
	post_started_at IS NOT NULL, input_tokens, output_tokens,
	COALESCE(extract(epoch FROM finished_at - started_at), 0)::float8`

// scanRun reads a row of runColumns.
func scanRun(row pgx.CollectableRow) (runRow, error) {
	var r runRow
	err := row.Scan(&r.ID, &r.Repository, &r.PRNumber, &r.HeadSHA, &r.Status, &r.Reason, &r.Error,
		&r.LockedBy, &r.Attempts, &r.PostedReviewID, &r.PostStarted, &r.InputTokens, &r.OutputTokens, &r.Seconds)
	return r, err
}

// runs returns every pull-request run, oldest first.
func runs(t testing.TB, db *pgxpool.Pool) []runRow {
	t.Helper()
	rows, err := db.Query(t.Context(), `SELECT `+runColumns+` FROM review_runs WHERE mode = 'pr' ORDER BY created_at, id`)
	if err != nil {
		t.Fatal(err)
	}
	out, err := pgx.CollectRows(rows, scanRun)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// unfinished counts the runs that are queued or running.
func unfinished(t testing.TB, db *pgxpool.Pool) int {
	t.Helper()
	var n int
	if err := db.QueryRow(t.Context(), `SELECT count(*) FROM review_runs WHERE status IN ('queued', 'running')`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// waitFor polls cond every 20ms until it holds, failing the test after
// timeout.
func waitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitRun waits until a run of owner/repo#number at head is in one of the
// statuses and returns it.
func waitRun(t testing.TB, db *pgxpool.Pool, pr githubtest.PR, head string, timeout time.Duration, statuses ...string) runRow {
	t.Helper()
	var found runRow
	waitFor(t, timeout, fmt.Sprintf("a run of %s/%s#%d at %.7s in %v", pr.Owner, pr.Repo, pr.Number, head, statuses), func() bool {
		rows, err := db.Query(t.Context(), `SELECT `+runColumns+` FROM review_runs
			WHERE repository = $1 AND pr_number = $2 AND head_sha = $3 AND status = ANY($4)
			ORDER BY created_at DESC LIMIT 1`, pr.Owner+"/"+pr.Repo, pr.Number, head, statuses)
		if err != nil {
			return false
		}
		found, err = pgx.CollectOneRow(rows, scanRun)
		return err == nil
	})
	return found
}
