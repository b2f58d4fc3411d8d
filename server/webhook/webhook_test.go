package webhook_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/rs/zerolog"

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/github"
	"github.com/mergeguard/mergeguard/github/githubtest"
	"github.com/mergeguard/mergeguard/server/store"
	"github.com/mergeguard/mergeguard/server/store/storetest"
	"github.com/mergeguard/mergeguard/server/webhook"
)

// intake is the webhook handler on a real database, answering commands
// through a fake GitHub.
type intake struct {
	t      testing.TB
	store  *store.Store
	raw    *pgxpool.Pool
	gh     *githubtest.Server
	url    string
	secret []byte
}

func newIntake(t testing.TB) *intake {
	t.Helper()
	return newIntakeOn(t, "")
}

// newIntakeOn is newIntake on the database at dbURL (see openDB). The handler records
// deliveries in batches (store.Intake), as `mergeguard serve` does.
func newIntakeOn(t testing.TB, dbURL string) *intake {
	t.Helper()
	return newIntakeBatched(t, dbURL, true)
}

// openDB opens a store and a raw pool on the database at dbURL, closed
// when the test ends; with dbURL "", on a fresh database of storetest's,
// kept for the next test when the test ends.
func openDB(t testing.TB, dbURL string) (*store.Store, *pgxpool.Pool) {
	t.Helper()
	if dbURL == "" {
		return storetest.Open(t)
	}
	return storetest.OpenURL(t, dbURL)
}

// newIntakeBatched is newIntakeOn, recording each delivery in a
// transaction of its own unless batched; opts change the intake's Deps.
func newIntakeBatched(t testing.TB, dbURL string, batched bool, opts ...func(*webhook.Deps)) *intake {
	t.Helper()
	st, raw := openDB(t, dbURL)

	gh := githubtest.New(t)
	app := gh.AppConfig(42)
	cc, err := github.NewClientCreator(app, github.ClientOptions{
		Retry: github.RetryPolicy{MaxRetries: 1, MaxWait: time.Second, Backoff: 10 * time.Millisecond},
	})
	if err != nil {
		t.Fatal(err)
	}
	installations, err := github.NewInstallations(context.Background(), cc, "", github.PublisherOptions{MaxInlineComments: 30})
	if err != nil {
		t.Fatal(err)
	}
	gh.ResetCalls() // GET /app at start is not the intake's
	log := zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.WarnLevel)
	switch t.(type) {
	case *testing.B, *testing.F:
		log = zerolog.Nop()
	}
	var rec webhook.Recorder
	if batched {
		rec = st.NewIntake(store.IntakeOptions{})
	}
	deps := webhook.Deps{Config: config.Default().GitHub, Secret: app.App.WebhookSecret, Store: st, Recorder: rec,
		GitHub:   webhook.NewGitHub(installations),
		BotLogin: installations.Login(), AppID: app.App.IntegrationID, Logger: &log}
	for _, opt := range opts {
		opt(&deps)
	}
	h, err := webhook.New(deps)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &intake{t: t, store: st, raw: raw, gh: gh, url: srv.URL + webhook.Route, secret: []byte(app.App.WebhookSecret)}
}

// send posts a delivery signed as GitHub signs it and returns the status.
func (in *intake) send(d githubtest.Delivery) int {
	in.t.Helper()
	req, err := d.Request(in.t.Context(), in.url, in.secret)
	if err != nil {
		in.t.Fatal(err)
	}
	return in.do(req)
}

func (in *intake) do(req *http.Request) int {
	in.t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		in.t.Fatal(err)
	}
	defer resp.Body.Close()
	return resp.StatusCode
}

// count returns the number of rows of a table matching an SQL condition.
func (in *intake) count(table, where string, args ...any) int {
	in.t.Helper()
	var n int
	if err := in.raw.QueryRow(in.t.Context(), "SELECT count(*) FROM "+table+" WHERE "+where, args...).Scan(&n); err != nil {
		in.t.Fatal(err)
	}
	return n
}

// delivery is a recorded delivery's outcome.
type delivery struct {
	Event, Action, Outcome string
}

func (in *intake) delivery(id string) delivery {
	in.t.Helper()
	var d delivery
	err := in.raw.QueryRow(in.t.Context(), `SELECT event, action, outcome FROM webhook_deliveries WHERE delivery_id = $1`, id).
		Scan(&d.Event, &d.Action, &d.Outcome)
	if err != nil {
		in.t.Fatalf("delivery %s: %v", id, err)
	}
	return d
}

// detail is a recorded delivery's detail: what intake did with it.
func (in *intake) detail(id string) string {
	in.t.Helper()
	var detail string
	if err := in.raw.QueryRow(in.t.Context(), `SELECT detail FROM webhook_deliveries WHERE delivery_id = $1`, id).Scan(&detail); err != nil {
		in.t.Fatalf("delivery %s: %v", id, err)
	}
	return detail
}

func (in *intake) runs() []store.Run {
	in.t.Helper()
	runs, err := in.store.ListRuns(in.t.Context(), store.RunFilter{})
	if err != nil {
		in.t.Fatal(err)
	}
	return runs
}

func TestNewRefusesEmptySecret(t *testing.T) {
	t.Parallel() // each test has its own database and fakes
	log := zerolog.Nop()
	_, err := webhook.New(webhook.Deps{Config: config.Default().GitHub, Store: storetest.New(t), GitHub: webhook.NewGitHub(nil), Logger: &log})
	if err == nil || !strings.Contains(err.Error(), "secret") {
		t.Fatalf("New with an empty secret: %v, want an error naming the secret", err)
	}
}

func TestRejectsUnsignedAndMalformedRequests(t *testing.T) {
	t.Parallel() // each test has its own database and fakes
	in := newIntake(t)
	opened := githubtest.Payload(t, "pull_request/opened.payload.json")
	tests := []struct {
		name   string
		modify func(r *http.Request)
		body   []byte
		want   int
	}{
		{name: "wrong signature", want: http.StatusUnauthorized, modify: func(r *http.Request) {
			r.Header.Set("X-Hub-Signature-256", githubtest.Sign([]byte("not the secret"), opened))
		}},
		{name: "missing signature", want: http.StatusUnauthorized, modify: func(r *http.Request) {
			r.Header.Del("X-Hub-Signature-256")
		}},
		{name: "malformed signature", want: http.StatusUnauthorized, modify: func(r *http.Request) {
			r.Header.Set("X-Hub-Signature-256", "sha256=zz")
		}},
		{name: "body changed after signing", want: http.StatusUnauthorized, body: bytes.Replace(opened, []byte(`"opened"`), []byte(`"closed"`), 1)},
		{name: "missing event type", want: http.StatusBadRequest, modify: func(r *http.Request) {
			r.Header.Del("X-GitHub-Event")
		}},
		{name: "unsupported content type", want: http.StatusUnsupportedMediaType, modify: func(r *http.Request) {
			r.Header.Set("Content-Type", "text/plain")
		}},
		{name: "form-encoded", want: http.StatusUnsupportedMediaType, modify: func(r *http.Request) {
			r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}},
		{name: "SHA-1 signature only", want: http.StatusUnauthorized, modify: func(r *http.Request) {
			r.Header.Set("X-Hub-Signature", "sha1="+strings.Repeat("0", 40))
			r.Header.Del("X-Hub-Signature-256")
		}},
		{name: "signature truncated", want: http.StatusUnauthorized, modify: func(r *http.Request) {
			r.Header.Set("X-Hub-Signature-256", githubtest.Sign(in.secret, opened)[:40])
		}},
		{name: "signed but without a delivery id", want: http.StatusBadRequest, modify: func(r *http.Request) {
			r.Header.Del("X-GitHub-Delivery")
		}},
		{name: "announced larger than a payload may be", want: http.StatusRequestEntityTooLarge, modify: func(r *http.Request) {
			r.ContentLength = webhook.MaxPayloadBytes + 1
			r.Body = io.NopCloser(io.LimitReader(zeros{}, r.ContentLength))
		}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := githubtest.Delivery{Event: "pull_request", ID: fmt.Sprintf("bad-%d", i), Payload: opened}.
				Request(t.Context(), in.url, in.secret)
			if err != nil {
				t.Fatal(err)
			}
			if tt.body != nil {
				req.Body, req.ContentLength = io.NopCloser(bytes.NewReader(tt.body)), int64(len(tt.body))
			}
			if tt.modify != nil {
				tt.modify(req)
			}
			if got := in.do(req); got != tt.want {
				t.Errorf("status %d, want %d", got, tt.want)
			}
		})
	}
	if n := in.count("webhook_deliveries", "true"); n != 0 {
		t.Errorf("%d deliveries stored from rejected requests, want 0", n)
	}
	if n := in.count("review_runs", "true"); n != 0 {
		t.Errorf("%d runs queued from rejected requests, want 0", n)
	}
}

func TestRejectsOversizedPayload(t *testing.T) {
	t.Parallel() // each test has its own database and fakes
	in := newIntake(t)
	huge := append([]byte(`{"action":"opened","padding":"`), bytes.Repeat([]byte("x"), webhook.MaxPayloadBytes)...)
	huge = append(huge, `"}`...)
	if got := in.send(githubtest.Delivery{Event: "pull_request", ID: "huge", Payload: huge}); got != http.StatusRequestEntityTooLarge {
		t.Errorf("status %d, want 413", got)
	}
	if n := in.count("webhook_deliveries", "true"); n != 0 {
		t.Errorf("%d deliveries stored, want 0", n)
	}
}

func TestMalformedPayloadIsRecorded(t *testing.T) {
	t.Parallel() // each test has its own database and fakes
	in := newIntake(t)
	for _, event := range []string{"pull_request", "issue_comment", "installation", "installation_repositories",
		"pull_request_review_thread", "check_run", "pull_request_review_comment"} {
		id := "malformed-" + event
		if got := in.send(githubtest.Delivery{Event: event, ID: id, Payload: []byte(`{"action": "opened", `)}); got != http.StatusBadRequest {
			t.Errorf("%s: status %d, want 400", event, got)
		}
		if diff := cmp.Diff(delivery{Event: event, Outcome: "malformed"}, in.delivery(id)); diff != "" {
			t.Errorf("%s: delivery (-want +got):\n%s", event, diff)
		}
	}
	if n := in.count("review_runs", "true"); n != 0 {
		t.Errorf("%d runs queued, want 0", n)
	}
}

func TestPullRequestEvents(t *testing.T) {
	t.Parallel() // each test has its own database and fakes
	const head = "ec26c3e57ca3a959ca5aad62de7213c562f8c821"
	// GitHub's "edited" delivery is the pull request's payload with the
	// action and what changed (changes.title.from, changes.body.from).
	edited := func(changes map[string]any) map[string]any {
		return map[string]any{"action": "edited", "changes": changes}
	}
	tests := []struct {
		name    string
		file    string
		fields  map[string]any
		outcome string
		queued  bool
	}{
		{file: "opened.payload.json", outcome: "queued", queued: true},
		// A new title re-evaluates the gate (ignore_title_keywords);
		// a new description alone asks for nothing.
		{name: "title edited", file: "ready_for_review.with-installation.payload.json",
			fields: edited(map[string]any{"title": map[string]any{"from": "[WIP] Update the README"}}), outcome: "queued", queued: true},
		{name: "body edited", file: "ready_for_review.with-installation.payload.json",
			fields: edited(map[string]any{"body": map[string]any{"from": "old text"}}), outcome: "ignored"},
		{name: "base edited", file: "ready_for_review.with-installation.payload.json",
			fields: edited(map[string]any{"base": map[string]any{"ref": map[string]any{"from": "dev"}}}), outcome: "ignored"},
		{file: "opened.with-null-body.json", outcome: "queued", queued: true},
		{file: "reopened.payload.json", outcome: "queued", queued: true},
		{file: "synchronize.payload.json", outcome: "queued", queued: true},
		{file: "ready_for_review.with-installation.payload.json", outcome: "queued", queued: true},
		{file: "labeled.payload.json", outcome: "ignored"},
		{file: "converted_to_draft.with-installation.payload.json", outcome: "ignored"},
		{file: "closed.payload.json", outcome: "closed"},
	}
	for _, tt := range tests {
		name := tt.name
		if name == "" {
			name = tt.file
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			in := newIntake(t)
			payload := githubtest.Payload(t, "pull_request/"+tt.file)
			if tt.fields != nil {
				payload = githubtest.SetFields(t, payload, tt.fields)
			}
			if got := in.send(githubtest.Delivery{Event: "pull_request", ID: "d-1", Payload: payload}); got != http.StatusOK {
				t.Fatalf("status %d, want 200", got)
			}
			if got := in.delivery("d-1").Outcome; got != tt.outcome {
				t.Errorf("outcome %q, want %q", got, tt.outcome)
			}
			runs := in.runs()
			if !tt.queued {
				if len(runs) != 0 {
					t.Errorf("%d runs queued, want none", len(runs))
				}
				return
			}
			if len(runs) != 1 {
				t.Fatalf("%d runs queued, want 1", len(runs))
			}
			type queued struct {
				Mode           store.Mode
				Trigger        store.Trigger
				Status         store.Status
				InstallationID int64
				Repository     string
				RepositoryID   int64
				PRNumber       int
				HeadSHA        string
				DeliveryID     string
			}
			r := runs[0]
			got := queued{r.Mode, r.Trigger, r.Status, r.InstallationID, r.Repository, r.RepositoryID, r.PRNumber, r.HeadSHA, r.DeliveryID}
			// The run keeps the payload's repository.id: visibility is
			// decided by it, never by the name (docs/security.md).
			want := queued{store.ModePR, store.TriggerWebhook, store.StatusQueued, 1, "Codertocat/Hello-World", 186853002, 2, head, "d-1"}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("run (-want +got):\n%s", diff)
			}
			if r.BaseSHA == "" {
				t.Error("run has no base SHA")
			}
		})
	}
}

func TestClosedStopsTheRuns(t *testing.T) {
	t.Parallel() // each test has its own database and fakes
	in := newIntake(t)
	opened := githubtest.Payload(t, "pull_request/opened.payload.json")
	synced := githubtest.SetFields(t, githubtest.Payload(t, "pull_request/synchronize.payload.json"),
		map[string]any{"pull_request.head.sha": "1111111111111111111111111111111111111111"})
	in.send(githubtest.Delivery{Event: "pull_request", ID: "open", Payload: opened})
	running, err := in.store.ClaimRun(t.Context(), "w", time.Minute)
	if err != nil || running == nil {
		t.Fatalf("claim: %v, %v", running, err)
	}
	in.send(githubtest.Delivery{Event: "pull_request", ID: "sync", Payload: synced})
	if got := in.send(githubtest.Delivery{Event: "pull_request", ID: "close", Payload: githubtest.Payload(t, "pull_request/closed.payload.json")}); got != http.StatusOK {
		t.Fatalf("closed: status %d", got)
	}
	got := map[string]string{}
	for _, r := range in.runs() {
		got[r.DeliveryID] = fmt.Sprintf("%s cancel=%t", r.Status, r.CancelRequested)
	}
	want := map[string]string{"open": "running cancel=true", "sync": "superseded cancel=false"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("runs after closing (-want +got):\n%s", diff)
	}
}

func TestRedeliveryIsANoOp(t *testing.T) {
	t.Parallel() // each test has its own database and fakes
	in := newIntake(t)
	d := githubtest.Delivery{Event: "pull_request", ID: "same-id", Payload: githubtest.Payload(t, "pull_request/opened.payload.json")}
	for i := range 5 {
		if got := in.send(d); got != http.StatusOK {
			t.Fatalf("delivery %d: status %d, want 200", i+1, got)
		}
	}
	if n := in.count("webhook_deliveries", "true"); n != 1 {
		t.Errorf("%d deliveries stored, want 1", n)
	}
	if n := in.count("review_runs", "true"); n != 1 {
		t.Errorf("%d runs queued, want 1", n)
	}
}

func TestInstallationEvents(t *testing.T) {
	t.Parallel() // each test has its own database and fakes
	in := newIntake(t)
	type state struct {
		Installations []string
		Repositories  []string
	}
	read := func() state {
		t.Helper()
		var s state
		rows, err := in.raw.Query(t.Context(), `SELECT id || ' ' || account_login ||
			CASE WHEN suspended_at IS NOT NULL THEN ' suspended' ELSE '' END ||
			CASE WHEN deleted_at IS NOT NULL THEN ' deleted' ELSE '' END FROM installations ORDER BY id`)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var v string
			if err := rows.Scan(&v); err != nil {
				t.Fatal(err)
			}
			s.Installations = append(s.Installations, v)
		}
		rows, err = in.raw.Query(t.Context(), `SELECT full_name || ' ' || installation_id ||
			CASE WHEN removed_at IS NOT NULL THEN ' removed' ELSE '' END FROM repositories ORDER BY id`)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var v string
			if err := rows.Scan(&v); err != nil {
				t.Fatal(err)
			}
			s.Repositories = append(s.Repositories, v)
		}
		return s
	}
	// The deleted and removed payloads name installation 2 and its
	// repository, which the earlier steps never recorded: they are first
	// pointed at what the earlier steps created, so their effect shows.
	steps := []struct {
		event, file string
		set         map[string]any // fields of the payload replaced, if any
		want        state
	}{
		{"installation", "created.payload.json", nil, state{
			Installations: []string{"957387 Codertocat"},
			Repositories:  []string{"Codertocat/Hello-World 957387"}}},
		{"installation_repositories", "added.payload.json", nil, state{
			Installations: []string{"957387 Codertocat"},
			Repositories:  []string{"Codertocat/Hello-World 957387", "Codertocat/Space 957387"}}},
		{"installation", "new_permissions_accepted.payload.json", nil, state{
			Installations: []string{"957387 Codertocat"},
			Repositories:  []string{"Codertocat/Hello-World 957387", "Codertocat/Space 957387"}}},
		{"installation", "suspend.payload.json", nil, state{
			Installations: []string{"957387 Codertocat", "16598467 Codertocat suspended"},
			Repositories:  []string{"Codertocat/Hello-World 957387", "Codertocat/Space 957387"}}},
		{"installation", "unsuspend.payload.json", nil, state{
			Installations: []string{"957387 Codertocat", "16598467 Codertocat"},
			Repositories:  []string{"Codertocat/Hello-World 957387", "Codertocat/Space 957387"}}},
		{"installation", "deleted.payload.json", map[string]any{
			"installation.id": 16598467,
		}, state{
			Installations: []string{"957387 Codertocat", "16598467 Codertocat deleted"},
			Repositories:  []string{"Codertocat/Hello-World 957387", "Codertocat/Space 957387"}}},
		{"installation_repositories", "removed.payload.json", map[string]any{
			"installation.id":            957387,
			"installation.account.login": "Codertocat",
			"repositories_removed": []any{map[string]any{
				"id": 186853007, "node_id": "MDEwOlJlcG9zaXRvcnkxODY4NTMwMDc=", "name": "Space", "full_name": "Codertocat/Space", "private": false,
			}},
		}, state{
			Installations: []string{"957387 Codertocat", "16598467 Codertocat deleted"},
			Repositories:  []string{"Codertocat/Hello-World 957387", "Codertocat/Space 957387 removed"}}},
		// The deletion of an installation never recorded deletes nothing.
		{"installation", "deleted.payload.json", nil, state{
			Installations: []string{"957387 Codertocat", "16598467 Codertocat deleted"},
			Repositories:  []string{"Codertocat/Hello-World 957387", "Codertocat/Space 957387 removed"}}},
	}
	for i, step := range steps {
		id := fmt.Sprintf("inst-%d", i)
		payload := githubtest.Payload(t, step.event+"/"+step.file)
		if step.set != nil {
			payload = githubtest.SetFields(t, payload, step.set)
		}
		d := githubtest.Delivery{Event: step.event, ID: id, Payload: payload}
		if got := in.send(d); got != http.StatusOK {
			t.Fatalf("%s/%s: status %d, want 200", step.event, step.file, got)
		}
		if diff := cmp.Diff(step.want, read()); diff != "" {
			t.Errorf("after %s/%s (-want +got):\n%s", step.event, step.file, diff)
		}
		if got := in.delivery(id).Outcome; got != "applied" {
			t.Errorf("%s/%s: outcome %q, want applied", step.event, step.file, got)
		}
	}
	// A redelivery of the creation does not bring back what came after.
	in.send(githubtest.Delivery{Event: "installation", ID: "inst-0", Payload: githubtest.Payload(t, "installation/created.payload.json")})
	if diff := cmp.Diff(steps[len(steps)-1].want, read()); diff != "" {
		t.Errorf("after a redelivery (-want +got):\n%s", diff)
	}
}

func TestDeliveryWithoutInstallationIsIgnored(t *testing.T) {
	t.Parallel() // each test has its own database and fakes
	in := newIntake(t)
	payload := githubtest.SetFields(t, githubtest.Payload(t, "pull_request/opened.payload.json"), map[string]any{"installation": nil})
	if got := in.send(githubtest.Delivery{Event: "pull_request", ID: "repo-hook", Payload: payload}); got != http.StatusOK {
		t.Fatalf("status %d, want 200", got)
	}
	if got := in.delivery("repo-hook").Outcome; got != "ignored" {
		t.Errorf("outcome %q, want ignored", got)
	}
	if n := len(in.runs()); n != 0 {
		t.Errorf("%d runs queued, want 0", n)
	}
}

// zeros reads as an endless run of zero bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
