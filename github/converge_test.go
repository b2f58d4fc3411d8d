package github

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mergeguard/mergeguard/github/githubtest"
	"github.com/mergeguard/mergeguard/github/markdown"
	"github.com/mergeguard/mergeguard/github/markdown/markdowntest"
	"github.com/mergeguard/mergeguard/review"
)

// convergeRepo is the handle of testPR(20) on a fake, with the fake's bot.
func convergeRepo(t *testing.T) (*githubtest.Server, githubtest.PR, *Repo) {
	t.Helper()
	fake := githubtest.New(t)
	pr := fake.AddPR(testPR(20))
	repo := &Repo{owner: pr.Owner, name: pr.Repo, client: fake.Client(), v4: fake.V4Client(), login: testBot,
		publisher: NewPublisher(PublisherOptions{MaxInlineComments: 30, BotLogin: testBot}), webURL: DefaultWebURL, sources: map[int]*Source{}}
	return fake, pr, repo
}

// TestCheckSummaryCountsExposed: an exposed secret blocks the check (under
// secrets.removed: block) and its summary names it with the commit that
// pushed it; under warn it is listed without blocking.
func TestCheckSummaryCountsExposed(t *testing.T) {
	key := finding("fp-key", "deploy/cfg.py", 2, 2, review.SeverityCritical)
	key.Title, key.VerificationStatus = "Possible secret committed (aws-access-token)", review.Verified
	tests := map[string]struct {
		how, wantTitle string
	}{
		"block": {review.ExposedBlocking, "1 blocking finding open"},
		"warn":  {review.ExposedWarning, "No open findings"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			entries := []review.LedgerEntry{{Finding: key, State: review.FindingExposed, StateHow: tt.how, FirstSeenSHA: "0123456789abcdef", CommentID: 79}}
			title, summary := markdown.CheckSummary(entries, review.SeverityCritical, testPullURL)
			if title != tt.wantTitle {
				t.Errorf("title %q, want %q", title, tt.wantTitle)
			}
			for _, s := range []string{"exposed secrets: 1", "**Exposed secrets: pushed, so rotate them**", "pushed in `0123456`", "#discussion_r79"} {
				if !strings.Contains(summary, s) {
					t.Errorf("summary lacks %q:\n%s", s, summary)
				}
			}
		})
	}
}

func TestAnnotationsGolden(t *testing.T) {
	fs := append(goldenFindings(), forgedFindings()...)
	fs = append(fs, fs[0]) // a repeated fingerprint is annotated once
	anns := markdown.Annotations(fs, review.SeverityWarning, testPullURL)
	entries := []review.LedgerEntry{
		{Finding: fs[2], State: review.FindingOpen, CommentID: 77},
		{Finding: fs[0], State: review.FindingOpen},
		{Finding: fs[1], State: review.FindingFixed},
		{Finding: fs[4], State: review.FindingDismissed},
		{Finding: forgedFindings()[0], State: review.FindingOpen, CommentID: 78},
	}
	title, summary := markdown.CheckSummary(entries, review.SeverityWarning, testPullURL)
	got, err := json.MarshalIndent(struct {
		Annotations       []markdown.Annotation `json:"annotations"`
		LedgerAnnotations []markdown.Annotation `json:"ledger_annotations"`
		Title             string                `json:"title"`
		Summary           string                `json:"summary"`
	}{anns, markdown.LedgerAnnotations(entries, review.SeverityWarning, testPullURL), title, summary}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "checks/annotations.json", append(got, '\n'))

	var levels []string
	for _, a := range anns {
		levels = append(levels, fmt.Sprintf("%s:%d %s", a.Path, a.StartLine, a.Level))
		if a.StartLine > a.EndLine || a.StartLine < 1 || len([]rune(a.Title)) > 255 || a.Message == "" {
			t.Errorf("annotation GitHub would refuse: %+v", a)
		}
		for _, text := range []string{a.Title, a.Message} {
			if strings.Contains(text, "<") || markdowntest.HasLiveMention(text) {
				t.Errorf("annotation acts on untrusted text: %q", text)
			}
		}
	}
	want := []string{ // most severe first
		"pkg/p00/file.go:10 failure", // critical
		"pkg/p00/file.go:10 failure", // the forged warning: at the warning threshold
		"pkg/p01/file.go:9 failure",  // warning
		"pkg/p02/file.go:30 failure", // warning
		"README.md:1 notice",         // info
		"pkg/p02/file.go:30 notice",  // the forged info
		"pkg/p03/file.go:12 notice",  // info
	}
	if d := cmp.Diff(want, levels); d != "" {
		t.Errorf("annotations (-want +got; none on deleted lines or whole files, one per fingerprint):\n%s", d)
	}
	for _, line := range strings.Split(summary, "\n") {
		if bad := markdowntest.LiveInLine(line); len(bad) > 0 {
			t.Errorf("check summary acts on untrusted text: %v", bad)
		}
	}
	if title != "1 blocking finding open" { // likely findings are reported, never blocking
		t.Errorf("title = %q", title)
	}
}

// manyAnnotations are n annotations on the lines of testPR's Go files.
func manyAnnotations(n int) []markdown.Annotation {
	out := make([]markdown.Annotation, n)
	for i := range out {
		out[i] = markdown.Annotation{Path: fmt.Sprintf("pkg/p%02d/file.go", i%18), StartLine: 1 + i%fileLines, EndLine: 1 + i%fileLines, Level: markdown.AnnotationWarning, Message: fmt.Sprint("note ", i)}
	}
	return out
}

func TestCreateCheckSendsAnnotationsIn50s(t *testing.T) {
	fake, pr, repo := convergeRepo(t)
	id, err := repo.createCheck(t.Context(), checkRun{HeadSHA: pr.HeadSHA, Status: CheckInProgress, DetailsURL: "https://mergeguard.example.com/reviews/1", ExternalID: "1",
		Title: "Reviewing", Summary: "MergeGuard is reviewing this commit.", Annotations: manyAnnotations(120)})
	if err != nil {
		t.Fatal(err)
	}
	if c, u := fake.CallCount(githubtest.RouteCreateCheck), fake.CallCount(githubtest.RouteUpdateCheck); c != 1 || u != 2 {
		t.Errorf("%d creates and %d updates, want 1 and 2 (50 + 50 + 20 annotations)", c, u)
	}
	runs := fake.CheckRuns("acme", "widgets")
	if len(runs) != 1 || runs[0].ID != id || runs[0].Name != CheckName || runs[0].Status != CheckInProgress || len(runs[0].Annotations) != 120 ||
		runs[0].DetailsURL == "" || runs[0].ExternalID != "1" || runs[0].StartedAt.IsZero() {
		t.Fatalf("runs = %+v", runs)
	}
	err = repo.updateCheck(t.Context(), id, checkRun{Conclusion: ConclusionFailure, Title: "1 blocking finding open", Summary: "…", Annotations: manyAnnotations(50)})
	if err != nil {
		t.Fatal(err)
	}
	run := fake.CheckRuns("acme", "widgets")[0]
	if run.Status != CheckCompleted || run.Conclusion != ConclusionFailure || run.CompletedAt.IsZero() || len(run.Annotations) != 170 || run.Title != "1 blocking finding open" {
		t.Errorf("completed run = %+v", run)
	}
	if u := fake.CallCount(githubtest.RouteUpdateCheck); u != 3 {
		t.Errorf("%d updates, want 3 (50 annotations fit in the update itself)", u)
	}
}

func TestCheckAnnotationsGitHubRefuses(t *testing.T) {
	fake, pr, repo := convergeRepo(t)
	bad := append(manyAnnotations(2), markdown.Annotation{Path: "pkg/p00/file.go", StartLine: 90, EndLine: 91, Level: markdown.AnnotationFailure, Message: "past the end"})
	id, err := repo.createCheck(t.Context(), checkRun{HeadSHA: pr.HeadSHA, Conclusion: ConclusionNeutral, Title: "t", Summary: "s", Annotations: bad})
	if !errors.Is(err, review.ErrAnnotationsRejected) || id == 0 {
		t.Fatalf("CreateCheck = %d, %v; want the run and review.ErrAnnotationsRejected", id, err)
	}
	if runs := fake.CheckRuns("acme", "widgets"); len(runs) != 1 || runs[0].Conclusion != ConclusionNeutral || len(runs[0].Annotations) != 0 {
		t.Errorf("runs = %+v", runs)
	}
	for _, c := range []checkRun{
		{HeadSHA: pr.HeadSHA, Status: CheckCompleted},
		{Status: CheckInProgress},
		{HeadSHA: pr.HeadSHA, Status: CheckInProgress, Conclusion: ConclusionSuccess},
		{HeadSHA: pr.HeadSHA, Title: "t"},
		{HeadSHA: pr.HeadSHA, Title: "t", Summary: "s", Annotations: []markdown.Annotation{{Path: "a", StartLine: 3, EndLine: 2, Message: "m"}}},
	} {
		if _, err := repo.createCheck(t.Context(), c); err == nil {
			t.Errorf("CreateCheck(%+v) accepted", c)
		}
	}
	if n := fake.CallCount(githubtest.RouteCreateCheck); n != 2 {
		t.Errorf("%d create calls, want 2: invalid checks are refused before any call", n)
	}
}

func TestCompare(t *testing.T) {
	fake, pr, repo := convergeRepo(t)
	files := maps.Clone(pr.Head)
	files["pkg/p00/file.go"] = replaceLine(files["pkg/p00/file.go"], 20, "var v20 = fixed()")
	files["internal/extra.go"] = "package internal\n"
	second := fake.Push("acme", "widgets", 7, files, "fix")
	got, err := repo.Compare(t.Context(), pr.HeadSHA, second)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != review.CompareAhead || got.AheadBy != 1 || got.BehindBy != 0 ||
		!strings.Contains(got.Diff, "diff --git a/pkg/p00/file.go b/pkg/p00/file.go\n") || !strings.Contains(got.Diff, "+var v20 = fixed()\n") ||
		!strings.Contains(got.Diff, "diff --git a/internal/extra.go b/internal/extra.go\nnew file mode 100644") || strings.Contains(got.Diff, "p01") {
		t.Errorf("ahead: %+v", got)
	}
	fake.ResetCalls()
	fake.Inject(githubtest.RouteCompare, githubtest.Failure{})            // the comparison answers
	fake.Inject(githubtest.RouteCompare, githubtest.Failure{Status: 406}) // the diff is too large
	fromPatches, err := repo.Compare(t.Context(), pr.HeadSHA, second)
	if err != nil || fromPatches.Status != review.CompareAhead || !strings.Contains(fromPatches.Diff, "+var v20 = fixed()") || !strings.Contains(fromPatches.Diff, "internal/extra.go") {
		t.Errorf("diff from the patches: %+v, %v", fromPatches, err)
	}
	if n := fake.CallCount(githubtest.RouteCompare); n != 2 {
		t.Errorf("%d compare calls, want 2", n)
	}

	forced := fake.ForcePush("acme", "widgets", 7, pr.Head, "rebased")
	got, err = repo.Compare(t.Context(), second, forced)
	if err != nil || got.Status != review.CompareDiverged || got.AheadBy != 1 || got.BehindBy != 4 || got.Diff != "" {
		t.Errorf("force-pushed: %+v, %v", got, err)
	}
	got, err = repo.Compare(t.Context(), forced, forced)
	if err != nil || got.Status != review.CompareIdentical || got.Diff != "" {
		t.Errorf("identical: %+v, %v", got, err)
	}
	if _, err := repo.Compare(t.Context(), strings.Repeat("0", 40), forced); !errors.Is(err, review.ErrNotFound) {
		t.Errorf("unknown commit: %v, want review.ErrNotFound", err)
	}
}

func TestThreadsResolveAndReply(t *testing.T) {
	fake, pr, repo := convergeRepo(t)
	fx := publishFixture{fake: fake, pr: pr, index: testIndex(t)}
	posted, err := repo.Publish(t.Context(), fx.post("run-1",
		finding("fp-a", "pkg/p00/file.go", 10, 10, review.SeverityCritical), finding("fp-b", "pkg/p01/file.go", 10, 10, review.SeverityWarning)).Post)
	if err != nil {
		t.Fatal(err)
	}
	fake.AddReview("acme", "widgets", 7, githubtest.Review{User: githubtest.User{Login: "mallory", ID: 66}, State: "COMMENTED", Comments: []githubtest.ReviewComment{
		{Path: "pkg/p02/file.go", Line: 10, Side: "RIGHT", Body: "mine\n<!-- mergeguard:fp=fp-c -->"},
	}})
	threads, err := repo.Threads(t.Context(), 7)
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		Fingerprint, Author, Path string
		CommentID                 int64
		Resolved                  bool
	}
	var got []row
	for _, th := range threads {
		if !strings.HasPrefix(th.ID, "PRRT_") {
			t.Errorf("thread id %q", th.ID)
		}
		got = append(got, row{th.Fingerprint, th.Author, th.Path, th.CommentID, th.Resolved})
	}
	want := []row{
		{"fp-a", testBot, "pkg/p00/file.go", posted.Placements["fp-a"].CommentID, false},
		{"fp-b", testBot, "pkg/p01/file.go", posted.Placements["fp-b"].CommentID, false},
		{"", "mallory", "pkg/p02/file.go", fake.ReviewComments("acme", "widgets", 7)[2].ID, false}, // a marker in someone else's comment is not ours
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("threads (-want +got):\n%s", d)
	}

	fake.ResolveThread("acme", "widgets", 7, threads[1].ID, "alice")
	if err := repo.ResolveThread(t.Context(), threads[0].ID); err != nil {
		t.Fatal(err)
	}
	if err := repo.ResolveThread(t.Context(), threads[0].ID); err != nil {
		t.Errorf("resolving a resolved thread: %v", err)
	}
	if err := repo.ResolveThread(t.Context(), "PRRT_gone"); !errors.Is(err, review.ErrNotFound) {
		t.Errorf("unknown thread: %v, want review.ErrNotFound", err)
	}
	threads, _ = repo.Threads(t.Context(), 7)
	if !threads[0].Resolved || threads[0].ResolvedBy != "" || !threads[1].Resolved || threads[1].ResolvedBy != "alice" || threads[2].Resolved {
		t.Errorf("after resolving: %+v", threads)
	}

	id, err := repo.Reply(t.Context(), 7, threads[0].CommentID, "Fixed in `f3a958e`. Thanks @alice!\n<!-- mergeguard:fp=fp-z -->")
	if err != nil {
		t.Fatal(err)
	}
	th := fake.Threads("acme", "widgets", 7)[0]
	if len(th.Comments) != 2 || th.Comments[1].ID != id || th.Comments[1].InReplyTo != threads[0].CommentID {
		t.Fatalf("thread after the reply: %+v", th)
	}
	body := th.Comments[1].Body
	if strings.Contains(body, "<!--") || markdowntest.HasLiveMention(body) || markdown.ReadMarkers(body) != nil || !strings.HasPrefix(body, "Fixed in `f3a958e`.") {
		t.Errorf("reply body acts on its text: %q", body)
	}
	if _, err := repo.Reply(t.Context(), 7, id, "again"); err == nil || !strings.Contains(err.Error(), "422") {
		t.Errorf("reply to a reply: %v, want GitHub's 422", err)
	}
	if _, err := repo.Reply(t.Context(), 7, 424242, "hello"); !errors.Is(err, review.ErrNotFound) {
		t.Errorf("reply to an unknown comment: %v, want review.ErrNotFound", err)
	}
	if _, err := repo.Threads(t.Context(), 8); !errors.Is(err, review.ErrNotFound) {
		t.Errorf("threads of an unknown pull request: %v, want review.ErrNotFound", err)
	}
}

func TestThreadsPaginate(t *testing.T) {
	fake, _, repo := convergeRepo(t)
	var comments []githubtest.ReviewComment
	for i := range 105 {
		comments = append(comments, githubtest.ReviewComment{Path: fmt.Sprintf("pkg/p%02d/file.go", i%18), Line: 7 + i/18, Side: "RIGHT",
			Body: fmt.Sprintf("finding %d\n<!-- mergeguard:fp=fp-%d -->", i, i)})
	}
	fake.AddReview("acme", "widgets", 7, githubtest.Review{State: "COMMENTED", Body: "r", Comments: comments})
	fake.ResetCalls()
	threads, err := repo.Threads(t.Context(), 7)
	if err != nil {
		t.Fatal(err)
	}
	if len(threads) != 105 || threads[104].Fingerprint != "fp-104" || threads[0].Fingerprint != "fp-0" {
		t.Errorf("%d threads, last %+v", len(threads), threads[len(threads)-1])
	}
	if n := fake.CallCount(githubtest.RouteGraphQL); n != 2 {
		t.Errorf("%d GraphQL calls, want 2 pages of 100", n)
	}
}

func TestPublishNeverRepostsStillOpen(t *testing.T) {
	fake, pr, repo := convergeRepo(t)
	fx := publishFixture{fake: fake, pr: pr, index: testIndex(t)}
	open := finding("fp-open", "pkg/p00/file.go", 10, 10, review.SeverityCritical)
	dismissed := finding("fp-gone", "pkg/p01/file.go", 10, 10, review.SeverityWarning)
	post := fx.post("run-2", open, dismissed, finding("fp-new", "pkg/p02/file.go", 10, 10, review.SeverityInfo))
	post.Verdict.Verdict = review.DecisionRequestChanges
	post.FollowUp = &review.FollowUp{Scope: review.Scope{Kind: review.ScopeIncremental, SinceSHA: pr.BaseSHA, Commits: 1, Files: 1},
		StillOpen: []review.LedgerEntry{{Finding: open, State: review.FindingOpen}},
		Dismissed: []review.LedgerEntry{{Finding: dismissed, State: review.FindingDismissed}}}
	posted, err := repo.Publish(t.Context(), post.Post)
	if err != nil {
		t.Fatal(err)
	}
	rv := fake.Reviews("acme", "widgets", 7)
	if len(rv) != 1 || len(rv[0].Comments) != 1 || !strings.Contains(rv[0].Comments[0].Body, "fp=fp-new") {
		t.Fatalf("reviews = %+v, want one inline comment, fp-new's", rv)
	}
	if posted.Placements["fp-open"].Where != review.PlacedDuplicate || posted.Placements["fp-gone"].Where != review.PlacedDuplicate {
		t.Errorf("placements = %+v", posted.Placements)
	}
	if !strings.Contains(rv[0].Body, "**Incremental review** of 1 commit since") || !strings.Contains(rv[0].Body, "**Still open**") {
		t.Errorf("body:\n%s", rv[0].Body)
	}
}

func TestReplyText(t *testing.T) {
	tp := markdown.NewPolicy(testPullURL)
	tests := map[string]struct {
		body      string
		want      []string // in the reply
		forbidden []string
	}{
		"a suggestion stays one": {"Use a placeholder:\n```suggestion\n\tq := \"SELECT id FROM users WHERE name = $1\"\n```\nThen pass name.",
			[]string{"```suggestion\n\tq := \"SELECT id FROM users WHERE name = $1\"\n```", "Use a placeholder:", "Then pass name."}, nil},
		"a suggestion cannot close its fence": {"```suggestion\nx := 1\n```\n@alice <!-- mergeguard:fp=x -->",
			[]string{"```suggestion\nx := 1\n```"}, []string{"<!--", "@alice"}},
		"backticks in the code get a longer fence": {"```suggestion\ns := \"```\"\n```", []string{"````suggestion\ns := \"```\"\n````"}, nil},
		"no suggestion: plain untrusted text":      {"ping @org/team <b>now</b>", nil, []string{"<b>", "@org/team"}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got := tp.Reply(tt.body, maxReply)
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("reply %q lacks %q", got, w)
				}
			}
			for _, f := range tt.forbidden {
				if strings.Contains(got, f) {
					t.Errorf("reply %q holds %q", got, f)
				}
			}
		})
	}
}
