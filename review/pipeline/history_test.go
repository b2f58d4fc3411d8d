package pipeline

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/diff"
	"github.com/mergeguard/mergeguard/review/llm"
	"github.com/mergeguard/mergeguard/review/llm/llmtest"
	"github.com/mergeguard/mergeguard/review/task"
)

// prFile is the content of file i of a generated pull request: 60 lines,
// of which lines 30 and 31 change at the second head when i is touched.
func prFile(i int, pushed bool) string {
	var b strings.Builder
	for k := 1; k <= 60; k++ {
		switch {
		case pushed && (k == 30 || k == 31):
			fmt.Fprintf(&b, "\tvalue%d, err := computeChecked(ctx, %d, items[%d])\n", k, k, i)
		default:
			fmt.Fprintf(&b, "\tvalue%d := compute(ctx, %d, items[%d]) // step %d of file %d\n", k, k, i, k, i)
		}
	}
	return b.String()
}

func prPath(i int) string { return fmt.Sprintf("pkg/mod%02d/file%02d.go", i/5, i) }

// pushDiff is the git diff of the push changing lines 30-31 of file i.
func pushDiff(i int) string {
	before, after := strings.Split(prFile(i, false), "\n"), strings.Split(prFile(i, true), "\n")
	p := prPath(i)
	var b strings.Builder
	fmt.Fprintf(&b, "diff --git a/%s b/%s\nindex 1111111..2222222 100644\n--- a/%s\n+++ b/%s\n@@ -27,8 +27,8 @@\n", p, p, p, p)
	for k := 27; k <= 34; k++ {
		switch k {
		case 30, 31:
		default:
			b.WriteString(" " + before[k-1] + "\n")
			continue
		}
		if k == 30 {
			b.WriteString("-" + before[29] + "\n-" + before[30] + "\n+" + after[29] + "\n+" + after[30] + "\n")
		}
	}
	return b.String()
}

// twentyFilePR is a 20-file pull request after a push of one commit
// changing 2 of its files (3 and 7): the source at the new head and the
// diff of the push.
func twentyFilePR() (*memSource, string) {
	src := &memSource{change: review.Change{Repository: "o/r", Number: 1, Title: "Compute in context", HeadSHA: "h2", BaseSHA: "b"},
		head: map[string]string{}}
	var pr, push strings.Builder
	for i := range 20 {
		touched := i == 3 || i == 7
		content := prFile(i, touched)
		src.head[prPath(i)] = content
		pr.WriteString(addedFileDiff(prPath(i), strings.Split(strings.TrimSuffix(content, "\n"), "\n")...))
		if touched {
			push.WriteString(pushDiff(i))
		}
	}
	src.diff = pr.String()
	return src, push.String()
}

func TestScope(t *testing.T) {
	repo := config.DefaultRepo()
	digest := configDigest(repo)
	off := repo
	off.Incremental = false
	src, push := twentyFilePR()
	d, err := diff.ParseString(src.diff)
	if err != nil {
		t.Fatal(err)
	}
	since := &task.Since{SHA: "h1", Commits: 1, Diff: push, ConfigDigest: digest}
	tests := map[string]struct {
		history   *task.History
		repo      config.Repo
		want      review.Scope
		wantFiles []string
	}{
		"no history": {nil, repo, review.Scope{Kind: review.ScopeFull, ConfigDigest: digest}, nil},
		"caller says full": {&task.History{FullReason: "the branch was force-pushed"}, repo,
			review.Scope{Kind: review.ScopeFull, Reason: "the branch was force-pushed", ConfigDigest: digest}, nil},
		"incremental: false": {&task.History{Since: since}, off,
			review.Scope{Kind: review.ScopeFull, Reason: reasonNotIncremental, ConfigDigest: configDigest(off)}, nil},
		"configuration changed": {&task.History{Since: &task.Since{SHA: "h1", Diff: push, ConfigDigest: "other"}}, repo,
			review.Scope{Kind: review.ScopeFull, Reason: reasonConfigChanged, ConfigDigest: digest}, nil},
		"incremental": {&task.History{Since: since}, repo,
			review.Scope{Kind: review.ScopeIncremental, SinceSHA: "h1", Commits: 1, Files: 2, ConfigDigest: digest},
			[]string{prPath(3), prPath(7)}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			sc, focus, _ := scope(tt.history, tt.repo, d)
			if diff := cmp.Diff(tt.want, sc); diff != "" {
				t.Errorf("scope (-want +got):\n%s", diff)
			}
			var files []string
			for _, f := range focus.Files {
				files = append(files, f.Path())
			}
			if tt.wantFiles == nil {
				if len(files) != 20 {
					t.Errorf("a full review reads %d files, want 20", len(files))
				}
				return
			}
			if diff := cmp.Diff(tt.wantFiles, files); diff != "" {
				t.Errorf("incremental files (-want +got):\n%s", diff)
			}
		})
	}
}

// TestNarrowKeepsOnlyTouchedHunks: of a file with two hunks, the one the
// push touched is kept with its PR-diff line numbers.
func TestNarrowKeepsOnlyTouchedHunks(t *testing.T) {
	d, err := diff.ParseString(generatedDiff(2, 3)) // hunks at new lines 10.. and 200..
	if err != nil {
		t.Fatal(err)
	}
	path := d.Files[1].Path()
	got := narrow(d, map[string][]int{path: {205}})
	if len(got.Files) != 1 || got.Files[0].Path() != path || len(got.Files[0].Hunks) != 1 || got.Files[0].Hunks[0].NewStart != 200 {
		t.Fatalf("narrowed to %+v, want the second file's second hunk", got.Files)
	}
	if f := got.Files[0]; f.Additions != 6 || f.Deletions != 3 {
		t.Errorf("narrowed counts +%d -%d, want +6 -3", f.Additions, f.Deletions)
	}
	if len(d.Files[1].Hunks) != 2 {
		t.Error("narrow changed the pull request's diff")
	}
}

// TestIncrementalReviewTokens: on a 20-file pull request, the review of a
// push of one commit changing 2 files sends the model at most a quarter of
// the input tokens of a full review of the same head (issue 13), shows it
// only those files, and lists the open findings on them.
//
// With the model's walkthrough on, the full review makes one more call
// (the incremental one builds its walkthrough from the diff alone), and the
// assertions hold all the same.
func TestIncrementalReviewTokens(t *testing.T) {
	for _, walkthrough := range []bool{false, true} {
		t.Run(fmt.Sprintf("walkthrough=%v", walkthrough), func(t *testing.T) {
			testIncrementalTokens(t, walkthrough)
		})
	}
}

// testIncrementalTokens is TestIncrementalReviewTokens with or without the
// model's walkthrough.
func testIncrementalTokens(t *testing.T, walkthrough bool) {
	full, incr := incrementalTokens(t, walkthrough)
	if full.tokens == 0 || incr.tokens*4 > full.tokens {
		t.Errorf("input tokens: incremental %d, full %d; want incremental ≤ 25%% of full", incr.tokens, full.tokens)
	}
	t.Logf("input tokens: full %d, incremental %d (%.1f%%)", full.tokens, incr.tokens, 100*float64(incr.tokens)/float64(full.tokens))
	for _, p := range []string{prPath(3), prPath(7)} {
		if !strings.Contains(incr.prompts, p) {
			t.Errorf("the incremental review never showed %s", p)
		}
	}
	for _, p := range []string{prPath(4), prPath(12)} {
		if strings.Contains(incr.prompts, p) {
			t.Errorf("the incremental review showed %s, which the push did not touch", p)
		}
	}
	if !strings.Contains(incr.prompts, "<<<BEGIN KNOWN") || !strings.Contains(incr.prompts, "Unchecked step") {
		t.Error("the open finding on a touched file was not given as context")
	}
}

type reviewCost struct {
	tokens  int
	prompts string
}

// incrementalTokens reviews the same head of twentyFilePR fully and
// incrementally and returns what each sent the model.
func incrementalTokens(t testing.TB, walkthrough bool) (full, incr reviewCost) {
	src, push := twentyFilePR()
	repo := config.DefaultRepo()
	open := review.LedgerEntry{State: review.FindingOpen, FirstSeenSHA: "h1", LastSeenSHA: "h1", Finding: review.Finding{
		FilePath: prPath(3), LineStart: 10, LineEnd: 10, Side: review.SideRight, Severity: review.SeverityWarning,
		Category: review.CategoryBug, Title: "Unchecked step", VerificationStatus: review.Verified, Fingerprint: "fp-open",
		CodeSnippet: strings.Split(prFile(3, true), "\n")[9]}}
	histories := []*task.History{
		{Ledger: []review.LedgerEntry{open}, FullReason: "a full review was asked for"},
		{Ledger: []review.LedgerEntry{open}, Since: &task.Since{SHA: "h1", Commits: 1, Diff: push, ConfigDigest: configDigest(repo)}},
	}
	var out [2]reviewCost
	for i, h := range histories {
		srv := llmtest.New(t, func(llmtest.Request) llmtest.Response { return answer() })
		p := newTest(Deps{Config: testLLM(func(c *config.LLM) { c.Model, c.Walkthrough = "gpt-4o", walkthrough }), LLM: llm.New(llm.Config{BaseURL: srv.URL(), Model: "gpt-4o"}, nil)})
		res, err := p.Run(t.Context(), task.Request{Source: src, Repo: repo, History: h})
		if err != nil {
			t.Fatal(err)
		}
		out[i].tokens = res.Cost.InputTokens
		for _, req := range srv.Requests() {
			for _, m := range req.Messages {
				out[i].prompts += m.Content + "\n"
			}
		}
	}
	return out[0], out[1]
}

// BenchmarkIncrementalTokens reports the model input tokens of a full and
// an incremental review of the same head of a 20-file pull request after
// a push of one commit changing 2 files.
func BenchmarkIncrementalTokens(b *testing.B) {
	var full, incr reviewCost
	for b.Loop() {
		full, incr = incrementalTokens(b, false)
	}
	b.ReportMetric(float64(full.tokens), "full-input-tokens")
	b.ReportMetric(float64(incr.tokens), "incremental-input-tokens")
	b.ReportMetric(100*float64(incr.tokens)/float64(full.tokens), "incremental-%")
}

// TestCarry: how the ledger moves to the new head of twentyFilePR after the
// push that rewrote lines 30-31 of files 3 and 7.
func TestCarry(t *testing.T) {
	src, push := twentyFilePR()
	d, err := diff.ParseString(src.diff)
	if err != nil {
		t.Fatal(err)
	}
	since, err := diff.ParseString(push)
	if err != nil {
		t.Fatal(err)
	}
	line := func(i, k int, pushed bool) string { return strings.Split(prFile(i, pushed), "\n")[k-1] }
	entry := func(fp, path string, at int, snippet string, sev review.Severity, state review.FindingState) review.LedgerEntry {
		return review.LedgerEntry{State: state, FirstSeenSHA: "h1", LastSeenSHA: "h1", CommentID: 100, ThreadID: "T_" + fp,
			Finding: review.Finding{FilePath: path, LineStart: at, LineEnd: at, Side: review.SideRight, Severity: sev,
				Category: review.CategoryBug, Title: fp, VerificationStatus: review.Verified, CodeSnippet: snippet, Fingerprint: fp}}
	}
	ledger := []review.LedgerEntry{
		entry("fixed", prPath(3), 30, line(3, 30, false), review.SeverityCritical, review.FindingOpen),     // its line was rewritten
		entry("kept", prPath(3), 20, line(3, 20, false), review.SeverityWarning, review.FindingOpen),       // untouched line of a touched file
		entry("untouched", prPath(5), 30, line(5, 30, false), review.SeverityCritical, review.FindingOpen), // a file the push left alone
		entry("gone-file", "pkg/old.go", 3, "x()", review.SeverityWarning, review.FindingOpen),             // left the pull request
		entry("dismissed", prPath(7), 31, line(7, 31, true), review.SeverityCritical, review.FindingDismissed),
	}
	ledger[4].StateHow = review.DismissedThreadResolved
	reported := []review.Finding{
		{FilePath: prPath(7), LineStart: 31, LineEnd: 31, Side: review.SideRight, Severity: review.SeverityCritical,
			Category: review.CategoryBug, Title: "again", VerificationStatus: review.Verified, Fingerprint: "dismissed"},
		{FilePath: prPath(7), LineStart: 30, LineEnd: 30, Side: review.SideRight, Severity: review.SeverityWarning,
			Category: review.CategoryBug, Title: "new", VerificationStatus: review.Verified, Fingerprint: "new"},
	}
	r := &run{p: newTest(Deps{Config: testLLM()}), req: task.Request{Source: src, Repo: config.DefaultRepo()}}
	c := r.carry(t.Context(), &task.History{Ledger: ledger}, "h2", d, since, touchedFiles(d, since), reported)

	states := map[string]string{}
	for _, e := range c.ledger.Changed {
		states[e.Finding.Fingerprint] = string(e.State) + "@" + e.LastSeenSHA + "/" + e.FixedSHA
	}
	want := map[string]string{
		"new": "open@h2/", "fixed": "fixed@h2/h2", "kept": "open@h2/", "untouched": "open@h2/", "gone-file": "outdated@h2/",
	}
	if diff := cmp.Diff(want, states); diff != "" {
		t.Errorf("changed entries (-want +got):\n%s", diff)
	}
	names := func(es []review.LedgerEntry) []string {
		var out []string
		for _, e := range es {
			out = append(out, e.Finding.Fingerprint)
		}
		return out
	}
	if diff := cmp.Diff([]string{"kept", "untouched"}, names(c.ledger.StillOpen)); diff != "" {
		t.Errorf("still open (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"fixed"}, names(c.ledger.Fixed)); diff != "" {
		t.Errorf("fixed (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"new"}, fingerprints(c.reported)); diff != "" {
		t.Errorf("reported (-want +got; a dismissed finding is never reported again):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"new", "kept", "untouched"}, fingerprints(c.counted)); diff != "" {
		t.Errorf("counted by the verdict (-want +got):\n%s", diff)
	}
	if c.ledger.BlockingCleared {
		t.Error("BlockingCleared with the untouched critical still open")
	}
	if c.ledger.Fixed[0].ThreadID != "T_fixed" || c.ledger.Fixed[0].StateBy != StateByMergeGuard {
		t.Errorf("fixed entry lost its thread or author: %+v", c.ledger.Fixed[0])
	}
}

func fingerprints(fs []review.Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Fingerprint)
	}
	return out
}

// TestVerdictCountsEarlierFindings: a push bringing nothing new keeps
// REQUEST_CHANGES while an earlier blocking finding is open; once it is
// fixed, the review says the blocking finding is gone.
func TestVerdictCountsEarlierFindings(t *testing.T) {
	src, push := twentyFilePR()
	repo := config.DefaultRepo()
	since := &task.Since{SHA: "h1", Commits: 1, Diff: push, ConfigDigest: configDigest(repo)}
	critical := func(path string, at int, snippet string) review.LedgerEntry {
		return review.LedgerEntry{State: review.FindingOpen, FirstSeenSHA: "h1", LastSeenSHA: "h1", Finding: review.Finding{
			FilePath: path, LineStart: at, LineEnd: at, Side: review.SideRight, Severity: review.SeverityCritical,
			Category: review.CategoryBug, Title: "Lost error", VerificationStatus: review.Verified, CodeSnippet: snippet, Fingerprint: "fp-" + path}}
	}
	tests := map[string]struct {
		entry       review.LedgerEntry
		wantVerdict review.Decision
		wantCleared bool
	}{
		"earlier critical untouched": {critical(prPath(5), 30, strings.Split(prFile(5, false), "\n")[29]), review.DecisionRequestChanges, false},
		"earlier critical fixed":     {critical(prPath(3), 30, strings.Split(prFile(3, false), "\n")[29]), review.DecisionComment, true},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			res, err := newTest(Deps{Config: testLLM()}).Run(t.Context(), task.Request{Source: src, Repo: repo,
				History: &task.History{Ledger: []review.LedgerEntry{tt.entry}, Since: since}})
			if err != nil {
				t.Fatal(err)
			}
			if res.Verdict.Verdict != tt.wantVerdict || res.Ledger.BlockingCleared != tt.wantCleared {
				t.Errorf("verdict %s, cleared %t; want %s, %t (%s)", res.Verdict.Verdict, res.Ledger.BlockingCleared,
					tt.wantVerdict, tt.wantCleared, res.Verdict.Summary)
			}
			if res.Scope.Kind != review.ScopeIncremental {
				t.Errorf("scope %+v, want incremental", res.Scope)
			}
		})
	}
}
