package api

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"

	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/rs/zerolog"

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/server/access"
	"github.com/mergeguard/mergeguard/server/events"
	"github.com/mergeguard/mergeguard/server/store"
	"github.com/mergeguard/mergeguard/server/store/storetest"
)

const sampleDiff = `diff --git a/main.go b/main.go
index 1111111..2222222 100644
--- a/main.go
+++ b/main.go
@@ -1,3 +1,4 @@
 package main
 
+// added
 func main() {}
`

type fixture struct {
	srv   *httptest.Server
	store *store.Store
	hub   *events.Hub
}

func newFixture(t *testing.T, token string) *fixture {
	t.Helper()
	st := storetest.New(t)
	hub := events.NewHub()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		hub.Run(ctx, st) // ends with ctx
	}()
	t.Cleanup(func() { cancel(); <-done })
	policy, wrap := access.Policy{Token: token}, func(h http.Handler) http.Handler { return h }
	if token == "" {
		policy, wrap = holder, asHolder
	}
	a := New(Deps{Config: testAPI(func(c *config.API) { c.StreamHeartbeat, c.StreamPoll = 50*time.Millisecond, 200*time.Millisecond }),
		GitHubWebURL: config.Default().GitHub.WebURL, Store: st, Hub: hub, Access: policy, Logger: zerolog.Nop()})
	mux := http.NewServeMux()
	a.Register(mux)
	srv := httptest.NewServer(wrap(mux))
	t.Cleanup(srv.Close)
	return &fixture{srv: srv, store: st, hub: hub}
}

// holder is the policy of the servers whose tests are not about access:
// their requests come from the token holder (asHolder).
var holder = access.Policy{Token: "holder-token"}

// asHolder gives requests without an Authorization header the holder's
// bearer token, as a script of the token holder sends it; the guard's
// other checks (origin, CSRF) still apply.
func asHolder(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "" {
			r.Header.Set("Authorization", "Bearer "+holder.Token)
		}
		h.ServeHTTP(w, r)
	})
}

func (f *fixture) do(t *testing.T, method, path, body string, header map[string]string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, f.srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	if h := header["Host"]; h != "" {
		req.Host = h
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	err = json.NewDecoder(res.Body).Decode(&out)
	if err := errors.Join(err, res.Body.Close()); err != nil {
		t.Fatalf("%s %s: decode answer: %v", method, path, err)
	}
	return res.StatusCode, out
}

func TestCreateThenGet(t *testing.T) {
	t.Parallel() // each test has its own database and servers
	f := newFixture(t, "")
	body, _ := json.Marshal(map[string]any{"diff_text": sampleDiff, "options": map[string]any{"focus_areas": []string{"Security", "bug"}, "severity_threshold": "WARNING"}})
	code, out := f.do(t, http.MethodPost, "/api/review", string(body), nil)
	if code != http.StatusAccepted {
		t.Fatalf("POST /api/review = %d %v, want 202", code, out)
	}
	id, _ := out["review_id"].(string)
	if id == "" || out["status"] != "queued" || out["stream_url"] != "/api/review/"+id+"/stream" || out["created_at"] == nil {
		t.Fatalf("unexpected answer %v", out)
	}
	run, err := f.store.GetRun(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	if run.Mode != store.ModeDiff || run.DiffText == nil || *run.DiffText != sampleDiff {
		t.Errorf("stored run mode=%s diff=%v, want diff mode with the posted text", run.Mode, run.DiffText)
	}
	var opts review.Options
	if err := json.Unmarshal(run.Options, &opts); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(review.Options{FocusAreas: []review.Category{"security", "bug"}, SeverityThreshold: "warning"}, opts); diff != "" {
		t.Errorf("stored options (-want +got):\n%s", diff)
	}

	code, out = f.do(t, http.MethodGet, "/api/review/"+id, "", nil)
	if code != http.StatusOK || out["status"] != "queued" || out["review_id"] != id {
		t.Fatalf("GET = %d %v, want 200 queued", code, out)
	}
	for _, bad := range []string{"00000000-0000-0000-0000-000000000000", "not-a-uuid"} {
		if code, _ := f.do(t, http.MethodGet, "/api/review/"+bad, "", nil); code != http.StatusNotFound {
			t.Errorf("GET unknown %q = %d, want 404", bad, code)
		}
	}
}

func TestGetFinishedRunAnswersVerdict(t *testing.T) {
	t.Parallel() // each test has its own database and servers
	f := newFixture(t, "")
	ctx := t.Context()
	text := sampleDiff
	run, err := f.store.EnqueueRun(ctx, store.NewRun{Mode: store.ModeDiff, Trigger: store.TriggerAPI, DiffText: &text})
	if err != nil {
		t.Fatal(err)
	}
	claimed, err := f.store.ClaimRun(ctx, "w1", time.Minute)
	if err != nil || claimed == nil {
		t.Fatalf("claim: %v %v", claimed, err)
	}
	v := review.Verdict{Verdict: review.DecisionComment, Summary: "One nit.", Confidence: 0.8,
		Files: []review.FileReview{}, FalsePositives: []review.Finding{}, Recommendations: []string{}}
	if err := f.store.FinishRun(ctx, run.ID, "w1", store.Result{Status: store.StatusSucceeded, Verdict: &v}); err != nil {
		t.Fatal(err)
	}
	code, out := f.do(t, http.MethodGet, "/api/review/"+run.ID, "", nil)
	if code != http.StatusOK {
		t.Fatalf("GET = %d", code)
	}
	for k, want := range map[string]any{"verdict": "comment", "summary": "One nit.", "status": "succeeded", "review_id": run.ID} {
		if out[k] != want {
			t.Errorf("%s = %v, want %v", k, out[k], want)
		}
	}
	for _, k := range []string{"confidence", "files", "stats", "false_positives", "recommendations", "review_duration_ms"} {
		if _, ok := out[k]; !ok {
			t.Errorf("ReviewVerdict field %q missing from %v", k, out)
		}
	}
}

func TestCreateRejectsBadInput(t *testing.T) {
	t.Parallel() // each test has its own database and servers
	f := newFixture(t, "")
	big := `{"diff_text":"` + strings.Repeat("a", MaxBodyBytes) + `"}`
	tests := []struct {
		name, body string
		code       int
		errHas     string
	}{
		{"not json", `{`, 400, "invalid JSON"},
		{"unknown field", `{"diff":"x"}`, 400, `unknown field "diff"`},
		{"nothing to review", `{}`, 400, "give diff_text or github_url"},
		{"both", `{"diff_text":"x","github_url":"https://github.com/o/r/pull/1"}`, 400, "not both"},
		{"not a diff", `{"diff_text":"hello world"}`, 400, "diff_text"},
		{"bad focus area", `{"diff_text":"x","options":{"focus_areas":["security","vibes"]}}`, 400, `"vibes"`},
		{"bad severity", `{"diff_text":"x","options":{"severity_threshold":"urgent"}}`, 400, `"urgent"`},
		{"bad url", `{"github_url":"https://github.com/o/r/issues/1"}`, 400, "not a pull request's address"},
		{"no app", `{"github_url":"https://github.com/o/r/pull/1"}`, 422, "not configured"},
		{"too large", big, 413, "larger than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out := f.do(t, http.MethodPost, "/api/review", tt.body, nil)
			msg, _ := out["error"].(string)
			if code != tt.code || !strings.Contains(msg, tt.errHas) {
				t.Errorf("got %d %q, want %d containing %q", code, msg, tt.code, tt.errHas)
			}
		})
	}
	runs, err := f.store.ListRuns(t.Context(), store.RunFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 0 {
		t.Errorf("%d runs stored from bad requests, want 0", len(runs))
	}
}

type fakePRs struct{ err error }

func (p fakePRs) Resolve(context.Context, string, string, int) (int64, review.PullHead, error) {
	if p.err != nil {
		return 0, review.PullHead{}, p.err
	}
	return 7, review.PullHead{SHA: "abc", BaseSHA: "def", Branch: "feature"}, nil
}

func TestCreateFromGitHubURL(t *testing.T) {
	t.Parallel() // each test has its own database and servers
	tests := []struct {
		name string
		prs  fakePRs
		code int
	}{
		{"installed", fakePRs{}, http.StatusAccepted},
		{"not installed", fakePRs{err: ErrNotInstalled}, http.StatusUnprocessableEntity},
		{"no such PR", fakePRs{err: fmt.Errorf("get: %w", review.ErrNotFound)}, http.StatusNotFound},
		{"GitHub down", fakePRs{err: io.ErrUnexpectedEOF}, http.StatusBadGateway},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := storetest.New(t)
			a := New(Deps{Config: testAPI(), GitHubWebURL: config.Default().GitHub.WebURL, Store: st, PullRequests: tt.prs, Hub: events.NewHub(), Logger: zerolog.Nop(), Access: holder})
			mux := http.NewServeMux()
			a.Register(mux)
			srv := httptest.NewServer(asHolder(mux))
			defer srv.Close()
			f := &fixture{srv: srv, store: st}
			code, out := f.do(t, http.MethodPost, "/api/review", `{"github_url":"https://github.com/octo/hello/pull/12"}`, nil)
			if code != tt.code {
				t.Fatalf("status %d %v, want %d", code, out, tt.code)
			}
			if tt.code != http.StatusAccepted {
				return
			}
			runs, err := st.ListRuns(t.Context(), store.RunFilter{Repository: "octo/hello"})
			if err != nil || len(runs) != 1 {
				t.Fatalf("runs %v %v, want one", runs, err)
			}
			r := runs[0]
			if r.Mode != store.ModePR || r.PRNumber != 12 || r.InstallationID != 7 || r.HeadSHA != "abc" {
				t.Errorf("stored run %+v", r)
			}
		})
	}
}

func TestAuth(t *testing.T) {
	t.Parallel() // each test has its own database and servers
	f := newFixture(t, "s3cret")
	remote := map[string]string{"X-Forwarded-For": "203.0.113.7"}
	withToken := map[string]string{"X-Forwarded-For": "203.0.113.7", "Authorization": "Bearer s3cret"}
	wrong := map[string]string{"X-Forwarded-For": "203.0.113.7", "Authorization": "Bearer nope"}
	body := `{"diff_text":` + jsonString(sampleDiff) + `}`
	if code, _ := f.do(t, http.MethodPost, "/api/review", body, remote); code != http.StatusUnauthorized {
		t.Errorf("remote without token: %d, want 401", code)
	}
	if code, _ := f.do(t, http.MethodPost, "/api/review", body, wrong); code != http.StatusUnauthorized {
		t.Errorf("remote with wrong token: %d, want 401", code)
	}
	code, out := f.do(t, http.MethodPost, "/api/review", body, withToken)
	if code != http.StatusAccepted {
		t.Fatalf("remote with token: %d, want 202", code)
	}
	id := out["review_id"].(string)
	if code, _ := f.do(t, http.MethodGet, "/api/review/"+id, "", remote); code != http.StatusUnauthorized {
		t.Errorf("GET remote without token: %d, want 401", code)
	}
	if code, _ := f.do(t, http.MethodGet, "/api/review/"+id, "", withToken); code != http.StatusOK {
		t.Errorf("GET remote with token: %d, want 200", code)
	}
	// A reverse proxy on the same host that adds no X-Forwarded-For
	// connects from loopback: with a token set, that is not enough.
	for _, h := range []map[string]string{nil, {"Host": "localhost"}} {
		if code, _ := f.do(t, http.MethodGet, "/api/review/"+id, "", h); code != http.StatusUnauthorized {
			t.Errorf("GET from loopback (Host %q) without token: %d, want 401", h["Host"], code)
		}
		if code, _ := f.do(t, http.MethodGet, "/api/review/"+id+"/stream", "", h); code != http.StatusUnauthorized {
			t.Errorf("stream from loopback (Host %q) without token: %d, want 401", h["Host"], code)
		}
		if code, _ := f.do(t, http.MethodPost, "/api/review", body, h); code != http.StatusUnauthorized {
			t.Errorf("POST from loopback (Host %q) without token: %d, want 401", h["Host"], code)
		}
	}
	lower := map[string]string{"Authorization": "bearer s3cret"}
	if code, _ := f.do(t, http.MethodGet, "/api/review/"+id, "", lower); code != http.StatusOK {
		t.Errorf("GET with a lower-case bearer scheme: %d, want 200", code)
	}
}

// TestNoTokenNoAccess: without a token nothing passes, from loopback to
// a loopback host (what a same-host reverse proxy sends for every client)
// or to any other (DNS rebinding).
func TestNoTokenNoAccess(t *testing.T) {
	t.Parallel() // each test has its own database and servers
	st := storetest.New(t)
	mux := http.NewServeMux()
	New(Deps{Config: testAPI(), Store: st, Hub: events.NewHub(), Logger: zerolog.Nop()}).Register(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	f := &fixture{srv: srv, store: st}
	for _, host := range []string{"localhost", "localhost:8080", "127.0.0.1", "[::1]:80", "attacker.example"} {
		code, out := f.do(t, http.MethodGet, "/api/review/00000000-0000-0000-0000-000000000000", "", map[string]string{"Host": host})
		if code != http.StatusUnauthorized {
			t.Errorf("Host %q: %d %v, want 401", host, code, out)
		}
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

type sseEvent struct {
	ID, Type string
	Data     store.StoredEvent
}

// readSSE reads events until the stream ends or max events arrived.
func readSSE(t *testing.T, r io.Reader, max int) []sseEvent {
	t.Helper()
	var out []sseEvent
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var cur sseEvent
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "id: "):
			cur.ID = strings.TrimPrefix(line, "id: ")
		case strings.HasPrefix(line, "event: "):
			cur.Type = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &cur.Data); err != nil {
				t.Fatalf("bad data line %q: %v", line, err)
			}
		case line == "" && cur.Type != "":
			out = append(out, cur)
			cur = sseEvent{}
			if len(out) == max {
				return out
			}
		}
	}
	return out
}

// stream opens a run's event stream and returns its body, closed when the
// test ends.
func (f *fixture) stream(t *testing.T, id, lastID string) io.Reader {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, f.srv.URL+"/api/review/"+id+"/stream", nil)
	if err != nil {
		t.Fatal(err)
	}
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = res.Body.Close() }) // read to the end or abandoned
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("stream answered %d %q", res.StatusCode, res.Header.Get("Content-Type"))
	}
	return res.Body
}

func types(evs []sseEvent) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.ID+":"+e.Type)
	}
	return out
}

func TestStreamReplaysResumesAndFollowsLive(t *testing.T) {
	t.Parallel() // each test has its own database and servers
	f := newFixture(t, "")
	ctx := t.Context()
	text := sampleDiff
	run, err := f.store.EnqueueRun(ctx, store.NewRun{Mode: store.ModeDiff, Trigger: store.TriggerAPI, DiffText: &text})
	if err != nil {
		t.Fatal(err)
	}
	appendEv := func(typ review.EventType, stage string) {
		t.Helper()
		if _, err := f.store.AppendEvent(ctx, run.ID, review.Event{Type: typ, Stage: stage, Data: map[string]any{"n": 1}}); err != nil {
			t.Fatal(err)
		}
	}
	appendEv(review.EventPipelineStarted, review.StagePlanner)
	appendEv(review.EventAgentStarted, review.StagePlanner)

	// A late subscriber gets the past first, then live events.
	body := f.stream(t, run.ID, "")
	got := readSSE(t, body, 2)
	if diff := cmp.Diff([]string{"1:pipeline.started", "2:agent.started"}, types(got)); diff != "" {
		t.Fatalf("replayed events (-want +got):\n%s", diff)
	}
	if got[0].Data.Stage != review.StagePlanner || got[0].Data.RunID != run.ID {
		t.Errorf("event data %+v", got[0].Data)
	}
	// A failed attempt that is retried does not end the stream.
	appendEv(review.EventPipelineFailed, review.StageReviewer)
	appendEv(review.EventPipelineStarted, review.StagePlanner)
	appendEv(review.EventAgentHandoff, review.StageReviewer)
	appendEv(review.EventPipelineCompleted, review.StageReporter)
	// The run is recorded after its pipeline ends; only then does the
	// stream end.
	go func() {
		time.Sleep(300 * time.Millisecond)
		if _, err := f.store.ClaimRun(context.WithoutCancel(ctx), "w", time.Minute); err != nil {
			t.Error(err)
			return
		}
		if err := f.store.FinishRun(context.WithoutCancel(ctx), run.ID, "w", store.Result{Status: store.StatusSucceeded}); err != nil {
			t.Error(err)
		}
	}()
	rest := readSSE(t, body, 10)
	want := []string{"3:pipeline.failed", "4:pipeline.started", "5:agent.handoff", "6:pipeline.completed"}
	if diff := cmp.Diff(want, types(rest)); diff != "" {
		t.Fatalf("live events (-want +got):\n%s", diff)
	}

	// Resuming after event 4 replays only 5 and 6, then ends.
	resumed := readSSE(t, f.stream(t, run.ID, "4"), 10)
	if diff := cmp.Diff(want[2:], types(resumed)); diff != "" {
		t.Fatalf("resumed events (-want +got):\n%s", diff)
	}
}

func TestStreamEndsForRunWithoutPipeline(t *testing.T) {
	t.Parallel() // each test has its own database and servers
	f := newFixture(t, "")
	ctx := t.Context()
	run, err := f.store.EnqueueRun(ctx, store.NewRun{Mode: store.ModePR, Trigger: store.TriggerWebhook,
		Repository: "o/r", PRNumber: 3, HeadSHA: "abc"})
	if err != nil {
		t.Fatal(err)
	}
	if claimed, err := f.store.ClaimRun(ctx, "w1", time.Minute); err != nil || claimed == nil {
		t.Fatalf("claim: %v %v", claimed, err)
	}
	if err := f.store.FinishRun(ctx, run.ID, "w1", store.Result{Status: store.StatusSkipped, Reason: "draft pull request"}); err != nil {
		t.Fatal(err)
	}
	done := make(chan []sseEvent)
	go func() { done <- readSSE(t, f.stream(t, run.ID, ""), 10) }()
	select {
	case evs := <-done:
		if len(evs) != 0 {
			t.Errorf("events %v, want none", types(evs))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("stream of a skipped run did not end")
	}
}

// TestStreamOutlivesServerTimeouts holds a stream open past the server's
// read and write timeouts (serve's defaults are 30s and more): the events
// stored after them still arrive on the same connection.
func TestStreamOutlivesServerTimeouts(t *testing.T) {
	t.Parallel() // each test has its own database and servers
	st := storetest.New(t)
	hub := events.NewHub()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		hub.Run(ctx, st) // ends with ctx
	}()
	t.Cleanup(func() { cancel(); <-done })
	a := New(Deps{Config: testAPI(func(c *config.API) { c.StreamHeartbeat, c.StreamPoll = time.Hour, time.Hour }), Store: st, Hub: hub, Logger: zerolog.Nop(), Access: holder})
	mux := http.NewServeMux()
	a.Register(mux)
	srv := httptest.NewUnstartedServer(asHolder(mux))
	srv.Config.ReadTimeout = 200 * time.Millisecond
	srv.Config.WriteTimeout = 200 * time.Millisecond
	srv.Start()
	t.Cleanup(srv.Close)
	f := &fixture{srv: srv, store: st, hub: hub}

	text := sampleDiff
	run, err := st.EnqueueRun(t.Context(), store.NewRun{Mode: store.ModeDiff, Trigger: store.TriggerAPI, DiffText: &text})
	if err != nil {
		t.Fatal(err)
	}
	body := f.stream(t, run.ID, "")
	time.Sleep(600 * time.Millisecond) // past both timeouts
	for _, typ := range []review.EventType{review.EventPipelineStarted, review.EventPipelineCompleted} {
		if _, err := st.AppendEvent(t.Context(), run.ID, review.Event{Type: typ}); err != nil {
			t.Fatal(err)
		}
	}
	got := readSSE(t, body, 2) // the run is not final: the stream stays open
	if diff := cmp.Diff([]string{"1:pipeline.started", "2:pipeline.completed"}, types(got)); diff != "" {
		t.Errorf("events after the timeouts (-want +got):\n%s", diff)
	}
}

// quietFixture serves the API over s (reading st, or a wrapper of it) with
// no live notifications, heartbeats or polls of its own.
func quietFixture(t *testing.T, st *store.Store, s Store) *fixture {
	t.Helper()
	a := New(Deps{Config: testAPI(func(c *config.API) { c.StreamHeartbeat, c.StreamPoll = time.Hour, time.Hour }), Store: s, Hub: events.NewHub(), Logger: zerolog.Nop(), Access: holder})
	mux := http.NewServeMux()
	a.Register(mux)
	srv := httptest.NewServer(asHolder(mux))
	t.Cleanup(srv.Close)
	return &fixture{srv: srv, store: st}
}

// runningRun queues a diff run, claims it as worker w1 and stores events
// of the given types.
func runningRun(t *testing.T, st *store.Store, kinds ...review.EventType) store.Run {
	t.Helper()
	text := sampleDiff
	run, err := st.EnqueueRun(t.Context(), store.NewRun{Mode: store.ModeDiff, Trigger: store.TriggerAPI, DiffText: &text})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.ClaimRun(t.Context(), "w1", time.Minute); err != nil {
		t.Fatal(err)
	}
	for _, typ := range kinds {
		if _, err := st.AppendEvent(t.Context(), run.ID, review.Event{Type: typ}); err != nil {
			t.Fatal(err)
		}
	}
	return run
}

// TestStreamOfFinishedRunEnds opens the stream of a run that failed
// without a pipeline.failed event (a worker error outside the pipeline):
// the stream replays its events and ends at once, without waiting for the
// poll that notices runs ending later.
func TestStreamOfFinishedRunEnds(t *testing.T) {
	t.Parallel() // each test has its own database and servers
	st := storetest.New(t)
	f := quietFixture(t, st, st)
	run := runningRun(t, st, review.EventPipelineStarted, review.EventAgentStarted)
	if err := st.FinishRun(t.Context(), run.ID, "w1", store.Result{Status: store.StatusFailed, Error: "worker crashed"}); err != nil {
		t.Fatal(err)
	}
	got := make(chan []sseEvent, 1)
	go func() { got <- readSSE(t, f.stream(t, run.ID, ""), 10) }()
	select {
	case evs := <-got:
		if diff := cmp.Diff([]string{"1:pipeline.started", "2:agent.started"}, types(evs)); diff != "" {
			t.Errorf("events (-want +got):\n%s", diff)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the stream of a finished run stayed open")
	}
}

// readLog is a Store that logs the reads a stream makes.
type readLog struct {
	Store
	mu    sync.Mutex
	reads []string
}

func (l *readLog) add(read string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reads = append(l.reads, read)
}

func (l *readLog) log() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.reads)
}

func (l *readLog) GetRun(ctx context.Context, id string) (store.Run, error) {
	l.add("GetRun")
	return l.Store.GetRun(ctx, id)
}

func (l *readLog) Events(ctx context.Context, runID string, afterSeq, limit int) ([]store.StoredEvent, error) {
	l.add("Events")
	return l.Store.Events(ctx, runID, afterSeq, limit)
}

// TestStreamChecksEndedRunOncePerPoll follows a run whose pipeline ended
// before the run is recorded: each poll reads the run once, after reading
// the events, never twice in a row.
func TestStreamChecksEndedRunOncePerPoll(t *testing.T) {
	t.Parallel() // each test has its own database and servers
	st := storetest.New(t)
	rl := &readLog{Store: st}
	f := quietFixture(t, st, rl)
	run := runningRun(t, st, review.EventPipelineStarted, review.EventPipelineCompleted)
	body := f.stream(t, run.ID, "")
	readSSE(t, body, 2)
	// The stream looks again every finalPoll: let it look a few times.
	for deadline := time.Now().Add(10 * time.Second); len(rl.log()) < 10 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	if err := st.FinishRun(t.Context(), run.ID, "w1", store.Result{Status: store.StatusSucceeded}); err != nil {
		t.Fatal(err)
	}
	if rest := readSSE(t, body, 10); len(rest) != 0 {
		t.Errorf("events after the end %v, want none", types(rest))
	}
	reads := rl.log()
	for i := 1; i < len(reads); i++ {
		if reads[i-1] == "GetRun" && reads[i] == "GetRun" {
			t.Fatalf("the run was read twice in a row (read %d): %v", i, reads)
		}
	}
}

func TestStreamUnknownRun(t *testing.T) {
	t.Parallel() // each test has its own database and servers
	f := newFixture(t, "")
	code, out := f.do(t, http.MethodGet, "/api/review/00000000-0000-0000-0000-000000000000/stream", "", nil)
	if code != http.StatusNotFound {
		t.Errorf("status %d %v, want 404", code, out)
	}
}

// TestCreateRefusesHostileRequests: what a page of another site, a client
// sending junk, or a body Postgres cannot store gets — a clear 4xx, never a
// review.
func TestCreateRefusesHostileRequests(t *testing.T) {
	t.Parallel() // each test has its own database and servers
	diff := `{"diff_text": "diff --git a/x b/x\n"}`
	tests := map[string]struct {
		body   string
		header map[string]string
		want   int
	}{
		"text/plain form from another site": {body: diff, header: map[string]string{"Content-Type": "text/plain"}, want: http.StatusUnsupportedMediaType},
		"form encoding":                     {body: "diff_text=x", header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, want: http.StatusUnsupportedMediaType},
		"cross-site fetch":                  {body: diff, header: map[string]string{"Sec-Fetch-Site": "cross-site"}, want: http.StatusForbidden},
		"foreign origin":                    {body: diff, header: map[string]string{"Origin": "https://evil.example"}, want: http.StatusForbidden},
		"trailing data after the JSON":      {body: diff + ` {"x":1}`, want: http.StatusBadRequest},
		"NUL in diff_text":                  {body: `{"diff_text": "diff --git a/x b/x\n\u0000"}`, want: http.StatusBadRequest},
		"github_url on another host":        {body: `{"github_url": "https://anything.invalid/acme/priv/pull/3"}`, want: http.StatusBadRequest},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, "")
			code, out := f.do(t, http.MethodPost, "/api/review", tt.body, tt.header)
			if code != tt.want {
				t.Errorf("status %d %v, want %d", code, out, tt.want)
			}
			runs, err := f.store.ListRuns(t.Context(), store.RunFilter{})
			if err != nil || len(runs) != 0 {
				t.Errorf("%d runs queued (%v), want none", len(runs), err)
			}
		})
	}
}

// TestCreateTitle: a diff review may be named; the title is checked,
// stored with the run's options and answered by GET.
func TestCreateTitle(t *testing.T) {
	t.Parallel() // each test has its own database and servers
	f := newFixture(t, "")
	diffText := jsonString(sampleDiff)
	tests := []struct {
		name, body string
		code       int
		want       string // the stored title, or a part of the error
	}{
		{"named", `{"diff_text":` + diffText + `,"title":"  Fix <b>login</b> & co  "}`, 202, "Fix <b>login</b> & co"},
		{"200 characters", `{"diff_text":` + diffText + `,"title":"` + strings.Repeat("é", 200) + `"}`, 202, strings.Repeat("é", 200)},
		{"blank", `{"diff_text":` + diffText + `,"title":"   "}`, 202, ""},
		{"only in options is ignored", `{"diff_text":` + diffText + `,"options":{"title":"sneaky"}}`, 202, ""},
		{"too long", `{"diff_text":` + diffText + `,"title":"` + strings.Repeat("é", 201) + `"}`, 400, "longer than 200"},
		{"two lines", `{"diff_text":` + diffText + `,"title":"a\nb"}`, 400, "one line"},
		{"control character", `{"diff_text":` + diffText + `,"title":"a\u001bb"}`, 400, "one line"},
		{"pull request", `{"github_url":"https://github.com/o/r/pull/1","title":"x"}`, 400, "diff review"},
		{"not a string", `{"diff_text":` + diffText + `,"title":7}`, 400, "title"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out := f.do(t, http.MethodPost, "/api/review", tt.body, nil)
			if code != tt.code {
				t.Fatalf("got %d %v, want %d", code, out, tt.code)
			}
			if code != http.StatusAccepted {
				if msg, _ := out["error"].(string); !strings.Contains(msg, tt.want) {
					t.Errorf("error %q, want one containing %q", msg, tt.want)
				}
				return
			}
			id, _ := out["review_id"].(string)
			run, err := f.store.GetRun(t.Context(), id)
			if err != nil {
				t.Fatal(err)
			}
			var opts review.Options
			if err := json.Unmarshal(run.Options, &opts); err != nil {
				t.Fatal(err)
			}
			if opts.Title != tt.want {
				t.Errorf("stored title %q, want %q", opts.Title, tt.want)
			}
			_, got := f.do(t, http.MethodGet, "/api/review/"+id, "", nil)
			if title, _ := got["title"].(string); title != tt.want {
				t.Errorf("GET title %q, want %q", title, tt.want)
			}
		})
	}
}

// testAPI is the api configuration of the tests: the default one
// (config.Default) with what set changes.
func testAPI(set ...func(*config.API)) config.API {
	cfg := config.Default().API
	for _, f := range set {
		f(&cfg)
	}
	return cfg
}
