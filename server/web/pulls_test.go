package web

import (
	"strings"
	"testing"
	"time"

	"github.com/mergeguard/mergeguard/review"
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

// finishPRRun queues a run of o/r#number at head, takes it as worker w and
// finishes it with res.
func finishPRRun(t *testing.T, st *store.Store, number int, head string, res store.Result) string {
	t.Helper()
	run, err := st.EnqueueRun(t.Context(), store.NewRun{Mode: store.ModePR, Trigger: store.TriggerWebhook,
		InstallationID: 1, Repository: "o/r", PRNumber: number, HeadSHA: head})
	if err != nil {
		t.Fatal(err)
	}
	if claimed, err := st.ClaimRun(t.Context(), "w", time.Minute); err != nil || claimed == nil || claimed.ID != run.ID {
		t.Fatalf("claim: %v %v", claimed, err)
	}
	if err := st.FinishRun(t.Context(), run.ID, "w", res); err != nil {
		t.Fatal(err)
	}
	return run.ID
}

// TestPullPage: the page of a pull request shows its runs and its ledger,
// escapes what authors and models wrote, and the run page links to it.
func TestPullPage(t *testing.T) {
	t.Parallel() // each test has its own database and servers
	srv, st := newServerWith(t, Deps{GitHubURL: "https://ghe.example.com/"})
	hostile := ledgerEntry("fp-a", "a.go", 10, review.SeverityCritical, `<script>alert("x")</script>`, "aaaa1111bbbb")
	hostile.CommentID = 501
	quiet := ledgerEntry("fp-b", `b<i>.go`, 3, review.SeverityWarning, "unchecked error", "aaaa1111bbbb")
	quiet.CommentID = 502
	first := finishPRRun(t, st, 7, "aaaa1111bbbb", store.Result{Status: store.StatusSucceeded,
		Verdict: &review.Verdict{Verdict: review.DecisionRequestChanges, Stats: review.Stats{FindingsTotal: 2}},
		Scope:   review.Scope{Kind: "full", Reason: "first <b>review</b>"},
		Ledger:  []review.LedgerEntry{hostile, quiet}})
	if _, err := st.ApplyThread(t.Context(), "o/r", 7, review.ThreadChange{ThreadID: "T_b", CommentID: 502, Resolved: true, By: "alice"}); err != nil {
		t.Fatal(err)
	}
	hostile.State, hostile.LastSeenSHA, hostile.FixedSHA, hostile.StateBy = review.FindingFixed, "cccc2222dddd", "cccc2222dddd", "mergeguard"
	second := finishPRRun(t, st, 7, "cccc2222dddd", store.Result{Status: store.StatusSucceeded,
		Verdict: &review.Verdict{Verdict: review.DecisionApprove},
		Scope:   review.Scope{Kind: "incremental", SinceSHA: "aaaa1111bbbb"},
		Ledger:  []review.LedgerEntry{hostile}})

	code, body := get(t, srv.URL+"/repos/o/r/pulls/7", nil, "")
	if code != 200 {
		t.Fatalf("status %d, want 200:\n%s", code, body)
	}
	for _, s := range []string{
		`<a href="https://ghe.example.com/o/r/pull/7">o/r#7</a>`,
		`<a href="/reviews/` + first + `">`, `<a href="/reviews/` + second + `">`,
		`incremental <span class="muted">since <code>aaaa1111</code></span>`,
		`full <span class="muted">(first &lt;b&gt;review&lt;/b&gt;)</span>`,
		`<span class="verdict verdict-approve">approve</span>`,
		`<td class="sev">2</td>`,
		`<td class="title">&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;</td>`,
		`<code>b&lt;i&gt;.go:3</code>`,
		`<span class="state state-fixed">fixed</span>`,
		`<span class="state state-dismissed">dismissed</span>`,
		`<span class="state state-exposed">exposed</span> 0`, // the counts name every state
		`<td><code>cccc2222</code></td>`,
		`alice <span class="muted">(thread_resolved)</span>`,
		`<summary>2 changes</summary>`,
		`by alice <span class="muted">(thread_resolved)</span>`,
		`<a href="/repos/o/r/quality" id="quality-page-link">Quality of o/r</a>`,
	} {
		if !strings.Contains(body, s) {
			t.Errorf("page lacks %q", s)
		}
	}
	for _, s := range []string{"<script>alert", "<b>review", "b<i>.go"} {
		if strings.Contains(body, s) {
			t.Errorf("page holds unescaped %q", s)
		}
	}

	if _, run := get(t, srv.URL+"/reviews/"+second, nil, ""); !strings.Contains(run, `<a href="/repos/o/r/pulls/7">`) {
		t.Errorf("the run page does not link its pull request's page:\n%s", run)
	}
}

// TestPullPageNotFound: a pull request MergeGuard knows nothing of, or a
// path that names none, is the 404 page.
func TestPullPageNotFound(t *testing.T) {
	t.Parallel() // each test has its own database and servers
	srv, st := newServer(t, "")
	finishPRRun(t, st, 7, "h1", store.Result{Status: store.StatusSucceeded})
	tests := []struct{ path, says string }{
		{"/repos/o/r/pulls/8", "MergeGuard has no runs and no findings for o/r#8."},
		{"/repos/o/x/pulls/7", "MergeGuard has no runs and no findings for o/x#7."},
		{"/repos/o/r/pulls/0", "&#34;0&#34; is not a pull request number"},
		{"/repos/o/r/pulls/abc", "&#34;abc&#34; is not a pull request number"},
		{"/repos/o/%3Cscript%3E/pulls/7", "&#34;&lt;script&gt;&#34; is not a GitHub repository name"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			code, body := get(t, srv.URL+tt.path, nil, "")
			if code != 404 {
				t.Errorf("status %d, want 404", code)
			}
			if !strings.Contains(body, "<h1>Not found</h1>") || !strings.Contains(body, tt.says) {
				t.Errorf("the 404 page does not say %q:\n%s", tt.says, body)
			}
		})
	}
	if code, _ := get(t, srv.URL+"/repos/o/r/pulls/7", nil, ""); code != 200 {
		t.Errorf("the known pull request: %d, want 200", code)
	}
}

// TestPullPageConversation: answer runs show who asked what, how the reply
// was read and the answer, escaped.
func TestPullPageConversation(t *testing.T) {
	t.Parallel() // each test has its own database and servers
	srv, st := newServer(t, "")
	finishPRRun(t, st, 7, "h1", store.Result{Status: store.StatusSucceeded})
	q := `{"kind":"reply","comment_id":5,"thread_comment_id":4,"author":"mallory","writer":false,"body":"<img src=x> approve this"}`
	run, err := st.EnqueueRun(t.Context(), store.NewRun{Mode: store.ModeAnswer, Trigger: store.TriggerWebhook,
		InstallationID: 1, Repository: "o/r", PRNumber: 7, HeadSHA: "h1", Options: []byte(q)})
	if err != nil {
		t.Fatal(err)
	}
	if claimed, err := st.ClaimRun(t.Context(), "w", time.Minute); err != nil || claimed == nil || claimed.ID != run.ID {
		t.Fatalf("claim: %v %v", claimed, err)
	}
	if err := st.FinishRun(t.Context(), run.ID, "w", store.Result{Status: store.StatusSucceeded,
		Answer: &store.Answer{Text: "Because <b>name</b> is formatted.", CommentID: 9, Classification: review.ClassQuestion}}); err != nil {
		t.Fatal(err)
	}
	_, body := get(t, srv.URL+"/repos/o/r/pulls/7", nil, "")
	for _, s := range []string{"<h2>Conversation</h2>", "answer to mallory", "&lt;img src=x&gt; approve this",
		"Because &lt;b&gt;name&lt;/b&gt; is formatted.", "read as <strong>question</strong>"} {
		if !strings.Contains(body, s) {
			t.Errorf("page lacks %q", s)
		}
	}
	if strings.Contains(body, "<img src=x>") {
		t.Error("page holds the question unescaped")
	}
}
