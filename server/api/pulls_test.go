package api

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/memory"
	"github.com/mergeguard/mergeguard/server/store"
)

func ledgerEntry(fp, file string, line int, sev review.Severity, title, sha string) review.LedgerEntry {
	return review.LedgerEntry{
		Finding: review.Finding{FilePath: file, LineStart: line, LineEnd: line, Side: review.SideRight, Severity: sev,
			Category: review.CategoryBug, Title: title, Description: "d", VerificationStatus: review.Verified,
			Confidence: 0.9, Fingerprint: fp},
		State: review.FindingOpen, FirstSeenSHA: sha, LastSeenSHA: sha,
	}
}

// finishPRRun queues a run of o/r#number at head, takes it as worker w1 and
// finishes it with res.
func finishPRRun(t *testing.T, st *store.Store, number int, head string, res store.Result) string {
	t.Helper()
	run, err := st.EnqueueRun(t.Context(), store.NewRun{Mode: store.ModePR, Trigger: store.TriggerWebhook,
		InstallationID: 1, Repository: "o/r", PRNumber: number, HeadSHA: head})
	if err != nil {
		t.Fatal(err)
	}
	if claimed, err := st.ClaimRun(t.Context(), "w1", time.Minute); err != nil || claimed == nil || claimed.ID != run.ID {
		t.Fatalf("claim: %v %v", claimed, err)
	}
	if err := st.FinishRun(t.Context(), run.ID, "w1", res); err != nil {
		t.Fatal(err)
	}
	return run.ID
}

// normalize turns an answer into comparable JSON: each id becomes its
// name in ids, and each time field (a key named at or ending in _at)
// "<time>".
func normalize(t *testing.T, v any, ids map[string]string) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for id, name := range ids {
		s = strings.ReplaceAll(s, id, name)
	}
	var out any
	if err := json.Unmarshal([]byte(s), &out); err != nil {
		t.Fatal(err)
	}
	return maskTimes(out)
}

func maskTimes(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if k == "at" || strings.HasSuffix(k, "_at") {
				v[k] = "<time>"
				continue
			}
			v[k] = maskTimes(x)
		}
	case []any:
		for i, x := range v {
			v[i] = maskTimes(x)
		}
	}
	return v
}

const wantPull = `{
  "repository": "o/r", "number": 7,
  "runs": [
    {"review_id": "RUN3", "status": "failed", "error": "llm: Post \"[url]\": dial tcp [address]: connection refused",
     "created_at": "<time>", "started_at": "<time>", "finished_at": "<time>", "stream_url": "/api/review/RUN3/stream",
     "head_sha": "h3"},
    {"review_id": "RUN2", "status": "succeeded", "created_at": "<time>", "started_at": "<time>", "finished_at": "<time>",
     "stream_url": "/api/review/RUN2/stream", "head_sha": "h2", "verdict": "approve",
     "review_kind": "incremental", "since_sha": "h1"},
    {"review_id": "RUN1", "status": "succeeded", "created_at": "<time>", "started_at": "<time>", "finished_at": "<time>",
     "stream_url": "/api/review/RUN1/stream", "head_sha": "h1", "verdict": "request_changes",
     "review_kind": "full", "kind_reason": "first review of the pull request"}
  ],
  "findings": [
    {"finding": {"file_path": "a.go", "line_start": 10, "line_end": 10, "side": "RIGHT", "severity": "critical",
                 "category": "bug", "title": "<script>alert(1)</script>", "description": "d",
                 "verification_status": "verified", "confidence": 0.9, "fingerprint": "fp-a"},
     "state": "fixed", "first_seen_sha": "h1", "last_seen_sha": "h2", "fixed_sha": "h2", "state_by": "mergeguard",
     "comment_id": 501, "updated_at": "<time>",
     "history": [
       {"fingerprint": "fp-a", "state": "open", "sha": "h1", "run_id": "RUN1", "at": "<time>"},
       {"fingerprint": "fp-a", "state": "fixed", "sha": "h2", "by": "mergeguard", "run_id": "RUN2", "at": "<time>"}
     ]},
    {"finding": {"file_path": "b.go", "line_start": 3, "line_end": 3, "side": "RIGHT", "severity": "warning",
                 "category": "bug", "title": "unchecked error", "description": "d",
                 "verification_status": "verified", "confidence": 0.9, "fingerprint": "fp-b"},
     "state": "dismissed", "first_seen_sha": "h1", "last_seen_sha": "h1", "state_by": "alice",
     "state_how": "thread_resolved", "comment_id": 502, "thread_id": "T_b", "updated_at": "<time>",
     "history": [
       {"fingerprint": "fp-b", "state": "open", "sha": "h1", "run_id": "RUN1", "at": "<time>"},
       {"fingerprint": "fp-b", "state": "dismissed", "sha": "h1", "by": "alice", "how": "thread_resolved",
        "at": "<time>"}
     ]}
  ]
}`

// TestGetPull: a pull request's runs, newest first, and its ledger with
// each entry's history, as three runs and a resolved thread left them.
func TestGetPull(t *testing.T) {
	t.Parallel() // each test has its own database and servers
	f := newFixture(t, "")
	ctx := t.Context()
	a := ledgerEntry("fp-a", "a.go", 10, review.SeverityCritical, "<script>alert(1)</script>", "h1")
	a.CommentID = 501
	b := ledgerEntry("fp-b", "b.go", 3, review.SeverityWarning, "unchecked error", "h1")
	b.CommentID = 502
	run1 := finishPRRun(t, f.store, 7, "h1", store.Result{Status: store.StatusSucceeded,
		Verdict: &review.Verdict{Verdict: review.DecisionRequestChanges},
		Scope:   review.Scope{Kind: "full", Reason: "first review of the pull request"},
		Ledger:  []review.LedgerEntry{a, b}})
	changed, err := f.store.ApplyThread(ctx, "o/r", 7, review.ThreadChange{ThreadID: "T_b", CommentID: 502, Resolved: true, By: "alice"})
	if err != nil || !changed {
		t.Fatalf("ApplyThread = %t, %v; want a change", changed, err)
	}
	a.State, a.LastSeenSHA, a.FixedSHA, a.StateBy = review.FindingFixed, "h2", "h2", "mergeguard"
	run2 := finishPRRun(t, f.store, 7, "h2", store.Result{Status: store.StatusSucceeded,
		Verdict: &review.Verdict{Verdict: review.DecisionApprove},
		Scope:   review.Scope{Kind: "incremental", SinceSHA: "h1"},
		Ledger:  []review.LedgerEntry{a}})
	run3 := finishPRRun(t, f.store, 7, "h3", store.Result{Status: store.StatusFailed,
		Error: `llm: Post "http://10.1.2.3:8000/v1/chat/completions": dial tcp 10.1.2.3:8000: connection refused`})

	code, out := f.do(t, http.MethodGet, "/api/pulls/o/r/7", "", nil)
	if code != http.StatusOK {
		t.Fatalf("GET = %d %v, want 200", code, out)
	}
	var want any
	if err := json.Unmarshal([]byte(wantPull), &want); err != nil {
		t.Fatal(err)
	}
	got := normalize(t, out, map[string]string{run1: "RUN1", run2: "RUN2", run3: "RUN3"})
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("GET /api/pulls/o/r/7 (-want +got):\n%s", diff)
	}
}

// TestGetPullRunsOnly: a pull request with a queued run and no ledger yet
// answers its run and an empty list of findings.
func TestGetPullRunsOnly(t *testing.T) {
	t.Parallel() // each test has its own database and servers
	f := newFixture(t, "")
	run, err := f.store.EnqueueRun(t.Context(), store.NewRun{Mode: store.ModePR, Trigger: store.TriggerWebhook,
		InstallationID: 1, Repository: "o/r", PRNumber: 8, HeadSHA: "h1"})
	if err != nil {
		t.Fatal(err)
	}
	code, out := f.do(t, http.MethodGet, "/api/pulls/o/r/8", "", nil)
	if code != http.StatusOK {
		t.Fatalf("GET = %d %v, want 200", code, out)
	}
	want := map[string]any{"repository": "o/r", "number": 8.0, "findings": []any{}, "runs": []any{
		map[string]any{"review_id": "RUN", "status": "queued", "created_at": "<time>",
			"stream_url": "/api/review/RUN/stream", "head_sha": "h1"},
	}}
	if diff := cmp.Diff(any(want), normalize(t, out, map[string]string{run.ID: "RUN"})); diff != "" {
		t.Errorf("GET /api/pulls/o/r/8 (-want +got):\n%s", diff)
	}
}

// TestGetPullRefusals: bad paths are 400, a pull request MergeGuard knows
// nothing of 404, a request without the token 401.
func TestGetPullRefusals(t *testing.T) {
	t.Parallel() // each test has its own database and servers
	f := newFixture(t, "")
	finishPRRun(t, f.store, 7, "h1", store.Result{Status: store.StatusSucceeded,
		Ledger: []review.LedgerEntry{ledgerEntry("fp-a", "a.go", 1, review.SeverityInfo, "t", "h1")}})
	tests := []struct {
		path string
		code int
		err  string
	}{
		{"/api/pulls/o/r/8", 404, "MergeGuard has no runs and no findings for o/r#8"},
		{"/api/pulls/o/other/7", 404, "MergeGuard has no runs and no findings for o/other#7"},
		{"/api/pulls/O/R/7", 404, "MergeGuard has no runs and no findings for O/R#7"},
		{"/api/pulls/o/r/0", 400, `"0" is not a pull request number`},
		{"/api/pulls/o/r/-1", 400, `"-1" is not a pull request number`},
		{"/api/pulls/o/r/+7", 400, `"+7" is not a pull request number`},
		{"/api/pulls/o/r/7.0", 400, `"7.0" is not a pull request number`},
		{"/api/pulls/o/r/abc", 400, `"abc" is not a pull request number`},
		{"/api/pulls/o/r/2147483648", 400, `"2147483648" is not a pull request number`},
		{"/api/pulls/o/a%2Fb/7", 400, `"a/b" is not a GitHub repository name`},
		{"/api/pulls/o%20x/r/7", 400, `"o x" is not a GitHub owner`},
		{"/api/pulls/o/%3Cb%3E/7", 400, `"<b>" is not a GitHub repository name`},
		{"/api/pulls/o/" + strings.Repeat("r", 101) + "/7", 400, `"` + strings.Repeat("r", 101) + `" is not a GitHub repository name`},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			code, out := f.do(t, http.MethodGet, tt.path, "", nil)
			if code != tt.code {
				t.Errorf("status %d, want %d", code, tt.code)
			}
			if diff := cmp.Diff(map[string]any{"error": tt.err}, out); diff != "" {
				t.Errorf("answer (-want +got):\n%s", diff)
			}
		})
	}

	tok := newFixture(t, "s3cret")
	if code, _ := tok.do(t, http.MethodGet, "/api/pulls/o/r/7", "", nil); code != http.StatusUnauthorized {
		t.Errorf("without the token: %d, want 401", code)
	}
	if code, _ := tok.do(t, http.MethodGet, "/api/pulls/o/r/7", "", map[string]string{"Authorization": "Bearer s3cret"}); code != http.StatusNotFound {
		t.Errorf("with the token, on an empty store: %d, want 404", code)
	}
}

// TestDismissFinding: the token's holder dismisses an open finding and an
// exposed secret through the API (each queues a refresh of the gate); a
// finding neither open nor exposed is 409, an unknown one 404, a bad
// fingerprint or pull request 400.
func TestDismissFinding(t *testing.T) {
	t.Parallel() // each test has its own database and servers
	f := newFixture(t, "")
	open := ledgerEntry("fp-open", "a.go", 1, review.SeverityCritical, "open", "h1")
	exposed := ledgerEntry("fp-exposed", "b.env", 2, review.SeverityCritical, "secret", "h1")
	exposed.Finding.Agent, exposed.State, exposed.StateHow = "analyzer:secrets", review.FindingExposed, "secret_removed"
	fixed := ledgerEntry("fp-fixed", "c.go", 3, review.SeverityWarning, "fixed", "h1")
	fixed.State, fixed.FixedSHA = review.FindingFixed, "h1"
	finishPRRun(t, f.store, 7, "h1", store.Result{Status: store.StatusSucceeded,
		Verdict: &review.Verdict{Verdict: review.DecisionRequestChanges}, Ledger: []review.LedgerEntry{open, exposed, fixed}})

	tests := []struct {
		path  string
		code  int
		state review.FindingState // of the answered entry
	}{
		{"/api/pulls/o/r/7/findings/fp-open/dismiss", http.StatusOK, review.FindingDismissed},
		{"/api/pulls/o/r/7/findings/fp-exposed/dismiss", http.StatusOK, review.FindingDismissed},
		{"/api/pulls/o/r/7/findings/fp-open/dismiss", http.StatusConflict, ""},
		{"/api/pulls/o/r/7/findings/fp-fixed/dismiss", http.StatusConflict, ""},
		{"/api/pulls/o/r/7/findings/fp-none/dismiss", http.StatusNotFound, ""},
		{"/api/pulls/o/r/8/findings/fp-open/dismiss", http.StatusNotFound, ""},
		{"/api/pulls/o/r/7/findings/fp%2F..%2Fx/dismiss", http.StatusBadRequest, ""},
		{"/api/pulls/o/r/0/findings/fp-open/dismiss", http.StatusBadRequest, ""},
	}
	for _, tt := range tests {
		code, out := f.do(t, http.MethodPost, tt.path, "", nil)
		if code != tt.code || (tt.state != "" && out["state"] != string(tt.state)) || (tt.state == "" && out["error"] == nil) {
			t.Errorf("POST %s = %d %v; want %d (state %q)", tt.path, code, out, tt.code, tt.state)
		}
	}
	entries, err := f.store.Ledger(t.Context(), "o/r", 7)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, e := range entries {
		got[e.Finding.Fingerprint] = string(e.State) + " " + e.StateBy + " " + e.StateHow
	}
	want := map[string]string{"fp-open": "dismissed api api", "fp-exposed": "dismissed api api", "fp-fixed": "fixed  "}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ledger after the dismissals (-want +got):\n%s", diff)
	}
}

// TestReviveSuppressed: the pull request's suppressed findings are in its
// answer; the token's holder revives one (recorded as by api), a second
// revival is 409, an unknown finding 404, a bad fingerprint 400.
func TestReviveSuppressed(t *testing.T) {
	t.Parallel() // each test has its own database and servers
	f := newFixture(t, "")
	run := finishPRRun(t, f.store, 7, "h1", store.Result{Status: store.StatusSucceeded})
	nit := review.Finding{FilePath: "a.go", LineStart: 2, LineEnd: 2, Severity: review.SeverityStyle, Category: review.CategoryQuality,
		Title: "Error string should not be capitalized", Fingerprint: "fp-nit"}
	matches := []memory.Match{{PRNumber: 3, Fingerprint: "d3", CommentID: 30, By: "ann", How: review.DismissedCommand, Similarity: 0.5}}
	if err := f.store.RecordSuppressed(t.Context(), "o/r", 7, run, "h1", []memory.Suppressed{{Finding: nit, Matches: matches}}); err != nil {
		t.Fatal(err)
	}
	code, out := f.do(t, http.MethodGet, "/api/pulls/o/r/7", "", nil)
	sup, _ := out["suppressed"].([]any)
	if code != http.StatusOK || len(sup) != 1 {
		t.Fatalf("GET = %d %v, want the suppressed finding", code, out)
	}
	tests := []struct {
		path string
		code int
	}{
		{"/api/pulls/o/r/7/suppressed/fp-nit/revive", http.StatusOK},
		{"/api/pulls/o/r/7/suppressed/fp-nit/revive", http.StatusConflict},
		{"/api/pulls/o/r/7/suppressed/fp-none/revive", http.StatusNotFound},
		{"/api/pulls/o/r/7/suppressed/fp%20x/revive", http.StatusBadRequest},
	}
	for _, tt := range tests {
		code, out := f.do(t, http.MethodPost, tt.path, "", nil)
		if code != tt.code || (code == http.StatusOK && out["revived_by"] != "api") || (code != http.StatusOK && out["error"] == nil) {
			t.Errorf("POST %s = %d %v; want %d", tt.path, code, out, tt.code)
		}
	}
}
