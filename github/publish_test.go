package github

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mergeguard/mergeguard/github/githubtest"
	"github.com/mergeguard/mergeguard/github/markdown"
	"github.com/mergeguard/mergeguard/github/markdown/markdowntest"
	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/diff"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// testBot is the bot login of githubtest's App.
const testBot = "mergeguard[bot]"

// publishFixture is a fake with testPR(20) and the index of its diff.
type publishFixture struct {
	fake  *githubtest.Server
	pr    githubtest.PR
	index *diff.Index
}

func newPublishFixture(t *testing.T) publishFixture {
	t.Helper()
	fake := githubtest.New(t)
	pr := fake.AddPR(testPR(20))
	d, err := diff.ParseString(pr.Diff)
	if err != nil {
		t.Fatal(err)
	}
	return publishFixture{fake: fake, pr: pr, index: diff.NewIndex(d)}
}

func (fx publishFixture) post(runID string, findings ...review.Finding) addressed {
	return addressed{Owner: "acme", Repo: "widgets", PullURL: "https://github.com/acme/widgets/pull/7", Post: review.Post{
		Number:  7,
		HeadSHA: fx.pr.HeadSHA, RunID: runID,
		Verdict:  review.Verdict{Verdict: review.DecisionComment, Summary: "The change computes widget values."},
		Findings: findings,
		Index:    fx.index,
	}}
}

func finding(fp, path string, start, end int, sev review.Severity) review.Finding {
	return review.Finding{
		FilePath: path, LineStart: start, LineEnd: end, Side: review.SideRight,
		Severity: sev, Category: review.CategoryBug, VerificationStatus: review.Likely,
		Title: "Problem " + fp, Description: "Description of " + fp + ".", Confidence: 0.8,
		Fingerprint: fp,
	}
}

// goldenFindings cover every placement rule on testPR(20), whose Go files
// change line 10 (hunk lines 7..13) and whose delete.go is deleted.
func goldenFindings() []review.Finding {
	crit := finding("fp-crit", "pkg/p00/file.go", 10, 10, review.SeverityCritical)
	crit.Category, crit.VerificationStatus = review.CategorySecurity, review.Verified
	crit.Title, crit.Description = "Unchecked computation", "compute may fail; its error is dropped."
	crit.Suggestion = "var v10 = mustCompute(0) // checked"

	multi := finding("fp-multi", "pkg/p01/file.go", 9, 11, review.SeverityWarning)
	multi.Suggestion = "```go\nvar v9 = 9\nvar v10 = compute(1)\nvar v11 = 11\n```"

	outside := finding("fp-outside", "pkg/p02/file.go", 30, 30, review.SeverityWarning)
	outside.Description = "Line 30 is not part of the diff."

	partial := finding("fp-partial", "pkg/p03/file.go", 12, 20, review.SeverityInfo)
	partial.Suggestion = "// lines 12 to 20 rewritten"

	deleted := finding("fp-left", "internal/delete.go", 5, 5, review.SeverityStyle)
	deleted.Side = review.SideLeft
	deleted.Suggestion = "this suggestion is on a deleted line"

	untouched := finding("fp-readme", "README.md", 1, 1, review.SeverityInfo)
	whole := finding("fp-file", "internal/new.go", 0, 0, review.SeverityInfo)
	whole.Title = "Package lacks a doc comment"

	return []review.Finding{outside, partial, crit, deleted, multi, untouched, whole}
}

func TestPublishPlacesFindingsGolden(t *testing.T) {
	fx := newPublishFixture(t)
	post := fx.post("run-1", goldenFindings()...)
	post.Verdict.Verdict = review.DecisionRequestChanges
	post.Verdict.Stats = review.Stats{FilesChanged: 20, FilesReviewed: 19, FilesSkipped: 1, Additions: 30, Deletions: 58, Chunks: 2,
		LLMCalls: 4, ToolCalls: 9, InputTokens: 12345, OutputTokens: 678, TotalCost: 0.0421}
	post.Verdict.ReviewDurationMS = 15300
	post.Verdict.Skipped = []review.SkippedFile{{FilePath: "internal/delete.go", Reason: "deleted file"}}
	post.Verdict.Truncation = &review.Truncation{Truncated: true, OriginalLines: 900, KeptLines: 600, SectionsAffected: []string{"files"}}
	post.DetailsURL = "https://mergeguard.example.com/reviews/42"

	posted, err := NewPublisher(PublisherOptions{MaxInlineComments: 30, BotLogin: testBot}).Publish(t.Context(), fx.fake.Client(), post)
	if err != nil {
		t.Fatal(err)
	}
	wantWhere := map[string]string{
		"fp-crit": review.PlacedInline, "fp-multi": review.PlacedInline, "fp-partial": review.PlacedInline, "fp-left": review.PlacedInline,
		"fp-outside": review.PlacedBody, "fp-readme": review.PlacedBody, "fp-file": review.PlacedBody,
	}
	gotWhere := map[string]string{}
	for fp, pl := range posted.Placements {
		gotWhere[fp] = pl.Where
		if (pl.Where == review.PlacedInline) != (pl.CommentID != 0) {
			t.Errorf("%s: placed %s with comment id %d", fp, pl.Where, pl.CommentID)
		}
	}
	if d := cmp.Diff(wantWhere, gotWhere); d != "" {
		t.Errorf("placements (-want +got):\n%s", d)
	}
	if posted.Event != markdown.EventRequestChanges {
		t.Errorf("event = %s, want REQUEST_CHANGES (the verdict's decision)", posted.Event)
	}
	reviews := fx.fake.Reviews("acme", "widgets", 7)
	if len(reviews) != 1 || reviews[0].State != "CHANGES_REQUESTED" || reviews[0].CommitID != fx.pr.HeadSHA {
		t.Fatalf("reviews = %+v, want one CHANGES_REQUESTED review on the head", reviews)
	}
	var anchors []string
	for _, c := range reviews[0].Comments {
		anchors = append(anchors, fmt.Sprintf("%s %s %d-%d suggestion=%v", c.Path, c.Side, c.StartLine, c.Line, strings.Contains(c.Body, "```suggestion")))
	}
	wantAnchors := []string{
		"pkg/p00/file.go RIGHT 0-10 suggestion=true",   // single line: line and side only
		"pkg/p01/file.go RIGHT 9-11 suggestion=true",   // range inside the hunk
		"pkg/p03/file.go RIGHT 0-12 suggestion=false",  // range leaves the hunk: first commentable line, no suggestion block
		"internal/delete.go LEFT 0-5 suggestion=false", // deleted line: no suggestion on LEFT
	}
	if d := cmp.Diff(wantAnchors, anchors); d != "" {
		t.Errorf("inline comments (-want +got):\n%s", d)
	}
	if n := fx.fake.CallCount(githubtest.RouteCreateReview); n != 1 {
		t.Errorf("%d CreateReview calls, want 1", n)
	}

	var got bytes.Buffer
	if err := json.Indent(&got, fx.fake.CallsTo(githubtest.RouteCreateReview)[0].Body, "", "  "); err != nil {
		t.Fatal(err)
	}
	golden(t, "create_review.golden", got.Bytes())
}

// golden compares got with testdata/name, rewriting it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden file (run with -update to create it): %v", err)
	}
	if d := cmp.Diff(string(want), string(got)); d != "" {
		t.Errorf("%s differs (-want +got; run with -update to accept):\n%s", path, d)
	}
}

func TestPublishCapsInlineComments(t *testing.T) {
	fx := newPublishFixture(t)
	var findings []review.Finding
	for i := range 45 {
		findings = append(findings, finding(fmt.Sprintf("fp%02d", i), fmt.Sprintf("pkg/p%02d/file.go", i%18), 7+i/18, 7+i/18, review.SeverityWarning))
	}
	posted, err := NewPublisher(PublisherOptions{MaxInlineComments: 30, BotLogin: testBot}).Publish(t.Context(), fx.fake.Client(), fx.post("run-cap", findings...))
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, pl := range posted.Placements {
		count[pl.Where]++
	}
	if d := cmp.Diff(map[string]int{review.PlacedInline: 30, review.PlacedBody: 15}, count); d != "" {
		t.Errorf("placements (-want +got):\n%s", d)
	}
	reviews := fx.fake.Reviews("acme", "widgets", 7)
	if len(reviews) != 1 || len(reviews[0].Comments) != 30 {
		t.Fatalf("want one review with 30 comments, got %d reviews", len(reviews))
	}
	if !strings.Contains(reviews[0].Body, "15 more findings are listed below instead of inline: a review carries at most 30 inline comments") {
		t.Errorf("review body does not explain the cap:\n%s", reviews[0].Body)
	}
}

func TestPublishSkipsFingerprintsPostedBefore(t *testing.T) {
	fx := newPublishFixture(t)
	pub := NewPublisher(PublisherOptions{MaxInlineComments: 30, BotLogin: testBot})
	a := finding("fp-a", "pkg/p00/file.go", 10, 10, review.SeverityWarning)
	b := finding("fp-b", "pkg/p01/file.go", 10, 10, review.SeverityWarning)
	c := finding("fp-c", "pkg/p02/file.go", 10, 10, review.SeverityWarning)
	first, err := pub.Publish(t.Context(), fx.fake.Client(), fx.post("run-1", a, b))
	if err != nil {
		t.Fatal(err)
	}
	second, err := pub.Publish(t.Context(), fx.fake.Client(), fx.post("run-2", a, b, c))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]review.Placement{
		"fp-a": {Where: review.PlacedDuplicate, CommentID: first.Placements["fp-a"].CommentID},
		"fp-b": {Where: review.PlacedDuplicate, CommentID: first.Placements["fp-b"].CommentID},
		"fp-c": {Where: review.PlacedInline, CommentID: second.Placements["fp-c"].CommentID},
	}
	if d := cmp.Diff(want, second.Placements); d != "" {
		t.Errorf("second run placements (-want +got):\n%s", d)
	}
	reviews := fx.fake.Reviews("acme", "widgets", 7)
	if len(reviews) != 2 || len(reviews[1].Comments) != 1 || reviews[1].Comments[0].Path != "pkg/p02/file.go" {
		t.Fatalf("second review should comment only on the new finding: %+v", reviews)
	}
	if !strings.Contains(reviews[1].Body, "| 🟠 **Warning** | 3 | 1 | 0 | 2 |") {
		t.Errorf("second review body does not count the duplicates:\n%s", reviews[1].Body)
	}
}

func TestPublishRunMarkerPreventsDoublePost(t *testing.T) {
	fx := newPublishFixture(t)
	pub := NewPublisher(PublisherOptions{MaxInlineComments: 30, BotLogin: testBot})
	post := fx.post("run-7", finding("fp-a", "pkg/p00/file.go", 10, 10, review.SeverityWarning), finding("fp-b", "README.md", 1, 1, review.SeverityInfo))

	// GitHub creates the review but the answer is lost (a 502).
	fx.fake.Inject(githubtest.RouteCreateReview, githubtest.Failure{Status: 502, Processed: true})
	if _, err := pub.Publish(t.Context(), fx.fake.Client(), post); err == nil {
		t.Fatal("Publish through a 502 succeeded")
	}
	// The job is retried.
	posted, err := pub.Publish(t.Context(), fx.fake.Client(), post)
	if err != nil {
		t.Fatal(err)
	}
	reviews := fx.fake.Reviews("acme", "widgets", 7)
	if len(reviews) != 1 {
		t.Fatalf("%d reviews after a retried run, want 1", len(reviews))
	}
	want := published{Event: markdown.EventComment, Posted: review.Posted{
		ReviewID: reviews[0].ID, URL: fmt.Sprintf("https://github.com/acme/widgets/pull/7#pullrequestreview-%d", reviews[0].ID),
		AlreadyPosted: true,
		Placements: map[string]review.Placement{
			"fp-a": {Where: review.PlacedInline, CommentID: reviews[0].Comments[0].ID},
			"fp-b": {Where: review.PlacedBody},
		},
	}}
	if d := cmp.Diff(want, posted); d != "" {
		t.Errorf("retried Publish (-want +got):\n%s", d)
	}
	if n := fx.fake.CallCount(githubtest.RouteCreateReview); n != 1 {
		t.Errorf("%d CreateReview calls, want 1", n)
	}
}

// lyingIndex claims extra lines are commentable, as an index that
// disagrees with GitHub would.
type lyingIndex struct {
	*diff.Index
	extra map[string]int
}

func (x lyingIndex) Commentable(path string, side review.Side, line int) bool {
	return x.extra[path] == line || x.Index.Commentable(path, side, line)
}

func TestPublish422MovesRejectedCommentsToBody(t *testing.T) {
	// bad lists the findings (of 12) placed on line 30, outside the diff,
	// which the lying index claims is commentable.
	for _, bad := range [][]int{{5}, {2, 9}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}} {
		t.Run(fmt.Sprint(bad), func(t *testing.T) {
			fx := newPublishFixture(t)
			idx := lyingIndex{Index: fx.index, extra: map[string]int{}}
			var findings []review.Finding
			rejected := map[string]bool{}
			for i := range 12 {
				path := fmt.Sprintf("pkg/p%02d/file.go", i)
				f := finding(fmt.Sprintf("fp%02d", i), path, 10, 10, review.SeverityWarning)
				if slices.Contains(bad, i) {
					f.LineStart, f.LineEnd = 30, 30
					idx.extra[path] = 30
					rejected[f.Fingerprint] = true
				}
				findings = append(findings, f)
			}
			post := fx.post("run-422", findings...)
			post.Index = idx
			posted, err := NewPublisher(PublisherOptions{MaxInlineComments: 30, BotLogin: testBot}).Publish(t.Context(), fx.fake.Client(), post)
			if err != nil {
				t.Fatal(err)
			}
			for fp, pl := range posted.Placements {
				want := review.PlacedInline
				if rejected[fp] {
					want = review.PlacedBody
				}
				if pl.Where != want {
					t.Errorf("%s placed %s, want %s", fp, pl.Where, want)
				}
			}
			reviews := fx.fake.Reviews("acme", "widgets", 7)
			if len(reviews) != 1 || reviews[0].State != "COMMENTED" {
				t.Fatalf("want exactly one submitted review and no pending one, got %+v", reviews)
			}
			if !strings.Contains(reviews[0].Body, markdown.ReasonRejected) {
				t.Error("review body does not list the rejected findings")
			}
			pending := fx.fake.CallCount(githubtest.RouteCreateReview) - 2
			t.Logf("%d rejected of 12: %d probes, %d pending reviews deleted", len(rejected), pending, fx.fake.CallCount(githubtest.RouteDeleteReview))
		})
	}
}

func TestPublishDismissesEarlierRequestChanges(t *testing.T) {
	fx := newPublishFixture(t)
	bot := githubtest.User{Login: "mergeguard[bot]", ID: 9001, Type: "Bot"}
	old := fx.fake.AddReview("acme", "widgets", 7, githubtest.Review{User: bot, State: "CHANGES_REQUESTED", Body: "old\n" + markdown.RunMarker("run-0")})
	human := fx.fake.AddReview("acme", "widgets", 7, githubtest.Review{User: githubtest.User{Login: "alice", ID: 5}, State: "CHANGES_REQUESTED", Body: "please fix"})
	otherBot := fx.fake.AddReview("acme", "widgets", 7, githubtest.Review{User: githubtest.User{Login: "linter[bot]", ID: 6, Type: "Bot"}, State: "CHANGES_REQUESTED", Body: "lint"})
	pub := NewPublisher(PublisherOptions{MaxInlineComments: 30, BotLogin: testBot})

	blocking := finding("fp-crit", "pkg/p00/file.go", 10, 10, review.SeverityCritical)
	blocking.VerificationStatus = review.Verified
	blockingPost := fx.post("run-1", blocking)
	blockingPost.Verdict.Verdict = review.DecisionRequestChanges
	posted, err := pub.Publish(t.Context(), fx.fake.Client(), blockingPost)
	if err != nil {
		t.Fatal(err)
	}
	if posted.Event != markdown.EventRequestChanges || len(posted.Dismissed) != 0 {
		t.Errorf("a blocking run: event %s, dismissed %v; want REQUEST_CHANGES and no dismissal", posted.Event, posted.Dismissed)
	}

	posted, err = pub.Publish(t.Context(), fx.fake.Client(), fx.post("run-2", finding("fp-w", "pkg/p01/file.go", 10, 10, review.SeverityWarning)))
	if err != nil {
		t.Fatal(err)
	}
	states := map[int64]string{}
	for _, rv := range fx.fake.Reviews("acme", "widgets", 7) {
		states[rv.ID] = rv.State
	}
	first := fx.fake.Reviews("acme", "widgets", 7)[3].ID
	want := map[int64]string{old: "DISMISSED", human: "CHANGES_REQUESTED", otherBot: "CHANGES_REQUESTED", first: "DISMISSED", posted.ReviewID: "COMMENTED"}
	if d := cmp.Diff(want, states); d != "" {
		t.Errorf("review states (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]int64{old, first}, posted.Dismissed); d != "" {
		t.Errorf("Dismissed (-want +got):\n%s", d)
	}
}

// TestDismissChangeRequests: once a person dismissed the last blocking
// finding, the bot's REQUEST_CHANGES reviews are dismissed without a new
// review; people's and other bots' reviews are left alone.
func TestDismissChangeRequests(t *testing.T) {
	fx := newPublishFixture(t)
	bot := githubtest.User{Login: "mergeguard[bot]", ID: 9001, Type: "Bot"}
	ours := fx.fake.AddReview("acme", "widgets", 7, githubtest.Review{User: bot, State: "CHANGES_REQUESTED", Body: "key\n" + markdown.RunMarker("run-0")})
	human := fx.fake.AddReview("acme", "widgets", 7, githubtest.Review{User: githubtest.User{Login: "alice", ID: 5}, State: "CHANGES_REQUESTED", Body: "please fix"})
	forged := fx.fake.AddReview("acme", "widgets", 7, githubtest.Review{User: githubtest.User{Login: "mallory", ID: 7}, State: "CHANGES_REQUESTED", Body: "x\n" + markdown.RunMarker("run-9")})
	commented := fx.fake.AddReview("acme", "widgets", 7, githubtest.Review{User: bot, State: "COMMENTED", Body: "note\n" + markdown.RunMarker("run-1")})
	pub := NewPublisher(PublisherOptions{MaxInlineComments: 30, BotLogin: testBot})

	got, err := pub.DismissChangeRequests(t.Context(), fx.fake.Client(), addressed{Owner: "acme", Repo: "widgets", Post: review.Post{Number: 7, HeadSHA: "0123456789abcdef"}})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]int64{ours}, got); d != "" {
		t.Errorf("dismissed (-want +got):\n%s", d)
	}
	states := map[int64]string{}
	for _, rv := range fx.fake.Reviews("acme", "widgets", 7) {
		states[rv.ID] = rv.State
	}
	want := map[int64]string{ours: "DISMISSED", human: "CHANGES_REQUESTED", forged: "CHANGES_REQUESTED", commented: "COMMENTED"}
	if d := cmp.Diff(want, states); d != "" {
		t.Errorf("review states (-want +got):\n%s", d)
	}
	if n := fx.fake.CallCount(githubtest.RouteDismissReview); n != 1 {
		t.Errorf("%d dismissal calls, want 1", n)
	}
}

func TestReviewBodyStaysUnderGitHubsLimit(t *testing.T) {
	fx := newPublishFixture(t)
	var findings []review.Finding
	for i := range 400 {
		f := finding(fmt.Sprintf("fp%03d", i), fmt.Sprintf("docs/f%03d.md", i), 1, 1, review.SeverityInfo)
		f.Description = strings.Repeat("long words ", 100)
		findings = append(findings, f)
	}
	post := fx.post("run-big", findings...)
	post.Verdict.Summary = strings.Repeat("summary ", 1000)
	if _, err := NewPublisher(PublisherOptions{MaxInlineComments: 30, BotLogin: testBot}).Publish(t.Context(), fx.fake.Client(), post); err != nil {
		t.Fatal(err)
	}
	body := fx.fake.Reviews("acme", "widgets", 7)[0].Body
	if n := len([]rune(body)); n > markdown.MaxBodyLength {
		t.Errorf("body has %d characters, above GitHub's %d", n, markdown.MaxBodyLength)
	}
	if !strings.HasSuffix(body, markdown.RunMarker("run-big")) || !strings.Contains(body, "more findings (see the full review in MergeGuard)") {
		t.Errorf("a cut body must end with the run marker and say what it left out; it ends:\n%s", body[len(body)-300:])
	}
}

func TestPublishDeletesLeftoverPendingReview(t *testing.T) {
	fx := newPublishFixture(t)
	leftover := fx.fake.AddReview("acme", "widgets", 7, githubtest.Review{State: "PENDING"})
	posted, err := NewPublisher(PublisherOptions{MaxInlineComments: 30, BotLogin: testBot}).Publish(t.Context(), fx.fake.Client(), fx.post("run-1"))
	if err != nil {
		t.Fatal(err)
	}
	reviews := fx.fake.Reviews("acme", "widgets", 7)
	if len(reviews) != 1 || reviews[0].ID != posted.ReviewID || reviews[0].ID == leftover {
		t.Errorf("reviews = %+v, want only the new one", reviews)
	}
	if !strings.Contains(reviews[0].Body, "No findings.") {
		t.Errorf("body of a review without findings:\n%s", reviews[0].Body)
	}
}

func TestPublishHonoursSecondaryRateLimit(t *testing.T) {
	fx := newPublishFixture(t)
	c, w := limitedClient(t, fx.fake, testPolicy(), 0)
	fx.fake.FailNext(githubtest.RouteCreateReview, 403, header("Retry-After", "3"))
	if _, err := NewPublisher(PublisherOptions{MaxInlineComments: 30, BotLogin: testBot}).Publish(t.Context(), c, fx.post("run-1", finding("fp-a", "pkg/p00/file.go", 10, 10, review.SeverityInfo))); err != nil {
		t.Fatal(err)
	}
	if n := len(fx.fake.Reviews("acme", "widgets", 7)); n != 1 {
		t.Errorf("%d reviews, want 1", n)
	}
	if n := fx.fake.CallCount(githubtest.RouteCreateReview); n != 2 {
		t.Errorf("%d CreateReview calls, want 2", n)
	}
	if d := cmp.Diff([]time.Duration{3 * time.Second}, w.list()); d != "" {
		t.Errorf("waits (-want +got):\n%s", d)
	}
}

func TestPublishRejectsBadPost(t *testing.T) {
	fx := newPublishFixture(t)
	for _, post := range []addressed{
		{Owner: "acme", Repo: "widgets", Post: review.Post{Number: 7, HeadSHA: "abc", RunID: "run--1"}},
		{Owner: "acme", Repo: "widgets", Post: review.Post{Number: 7, HeadSHA: "abc", RunID: ""}},
		{Owner: "acme", Repo: "widgets", Post: review.Post{Number: 7, RunID: "r"}},
		{Repo: "widgets", Post: review.Post{Number: 7, HeadSHA: "abc", RunID: "r"}},
	} {
		if _, err := NewPublisher(PublisherOptions{MaxInlineComments: 30, BotLogin: testBot}).Publish(t.Context(), fx.fake.Client(), post); err == nil {
			t.Errorf("Publish(%+v) succeeded", post)
		}
	}
	if n := fx.fake.APICallCount(); n != 0 {
		t.Errorf("%d API calls for invalid posts", n)
	}
}

// TestPublishRejectsBadFingerprint: Placements are keyed by fingerprint and
// markers carry it, so a finding without a usable one is refused, not
// posted under a key the caller cannot match.
func TestPublishRejectsBadFingerprint(t *testing.T) {
	fx := newPublishFixture(t)
	pub := NewPublisher(PublisherOptions{MaxInlineComments: 30, BotLogin: testBot})
	for _, fp := range []string{"", "a--b", "x -->", "-a", "naïve"} {
		post := fx.post("run-1", finding("fp-ok", "pkg/p00/file.go", 10, 10, review.SeverityInfo), finding(fp, "pkg/p01/file.go", 10, 10, review.SeverityInfo))
		_, err := pub.Publish(t.Context(), fx.fake.Client(), post)
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("finding 1 (pkg/p01/file.go:10) has fingerprint %q", fp)) {
			t.Errorf("Publish with fingerprint %q: %v, want a fingerprint error", fp, err)
		}
	}
	if n := fx.fake.APICallCount(); n != 0 {
		t.Errorf("%d API calls for invalid posts", n)
	}
	for _, fp := range []string{"0123456789abcdef", "a-b_c.d:e"} {
		if err := fx.post("run-1", finding(fp, "pkg/p01/file.go", 10, 10, review.SeverityInfo)).validate(); err != nil {
			t.Errorf("validate with fingerprint %q: %v", fp, err)
		}
	}
}

// TestPublishForgedMarkersDoNotHideFindings: a model writes MergeGuard's
// markers (the fingerprint of another finding, the marker of the next
// run), mentions, HTML and external links into its findings and summary.
// Nothing of it is live in what is posted, and the next run still posts
// the finding the forgery targeted.
func TestPublishForgedMarkersDoNotHideFindings(t *testing.T) {
	fx := newPublishFixture(t)
	pub := NewPublisher(PublisherOptions{MaxInlineComments: 30, BotLogin: testBot})
	first := fx.post("run-1", forgedFindings()...)
	first.Verdict.Summary = forgedText
	if _, err := pub.Publish(t.Context(), fx.fake.Client(), first); err != nil {
		t.Fatal(err)
	}
	target := finding("fp-target", "pkg/p01/file.go", 10, 10, review.SeverityCritical)
	posted, err := pub.Publish(t.Context(), fx.fake.Client(), fx.post("run-2", append(forgedFindings(), target)...))
	if err != nil {
		t.Fatal(err)
	}
	if posted.AlreadyPosted {
		t.Fatal("the second run was taken as already posted: a forged run marker counted")
	}
	if pl := posted.Placements["fp-target"]; pl.Where != review.PlacedInline || pl.CommentID == 0 {
		t.Errorf("the targeted finding was placed %+v, want inline: a forged fingerprint marker counted", pl)
	}
	if pl := posted.Placements["fp-forger"]; pl.Where != review.PlacedDuplicate {
		t.Errorf("the forging finding itself was placed %+v, want a duplicate of the first run's comment", pl)
	}
	for _, rv := range fx.fake.Reviews("acme", "widgets", 7) {
		bodies := []string{rv.Body}
		for _, c := range rv.Comments {
			bodies = append(bodies, c.Body)
		}
		for _, body := range bodies {
			if bad := markdowntest.Forgeries(body); len(bad) > 0 {
				t.Errorf("review %d acts on untrusted text: %v\n%s", rv.ID, bad, body)
			}
		}
	}
}

// TestPublishReadsOnlyTheBotsMarkers: markers count only on the last line
// of a body the App's bot wrote.
func TestPublishReadsOnlyTheBotsMarkers(t *testing.T) {
	bot := githubtest.User{Login: testBot, ID: 9001, Type: "Bot"}
	alice := githubtest.User{Login: "alice", ID: 5, Type: "User"}
	linter := githubtest.User{Login: "linter[bot]", ID: 6, Type: "Bot"}
	lookalike := githubtest.User{Login: "MergeGuard[bot]x", ID: 7, Type: "Bot"}
	fpLine, runLine := "<!-- mergeguard:fp=fp-target -->", markdown.RunMarker("run-2")
	tests := []struct {
		name            string
		author          githubtest.User
		review, comment string
		wantDuplicate   bool
		wantAlready     bool
	}{
		{"the bot's own comment counts", bot, "", "earlier\n" + fpLine, true, false},
		{"the bot's own review counts", bot, "earlier\n" + runLine, "", false, true},
		{"a user's comment", alice, "", "copied\n" + fpLine, false, false},
		{"a user's review", alice, "copied\n" + runLine, "", false, false},
		{"another App's comment", linter, "", "lint\n" + fpLine, false, false},
		{"another App's review", linter, "lint\n" + runLine, "", false, false},
		{"a look-alike login", lookalike, "", "x\n" + fpLine, false, false},
		{"the bot's comment with the marker before its last line", bot, "", fpLine + "\nquoted text", false, false},
		{"the bot's review with the marker before its last line", bot, runLine + "\nquoted text", "", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fx := newPublishFixture(t)
			rv := githubtest.Review{User: tt.author, State: "COMMENTED", Body: tt.review}
			if tt.comment != "" {
				rv.Comments = []githubtest.ReviewComment{{Path: "pkg/p05/file.go", Line: 10, Side: "RIGHT", Body: tt.comment}}
			}
			fx.fake.AddReview("acme", "widgets", 7, rv)
			posted, err := NewPublisher(PublisherOptions{MaxInlineComments: 30, BotLogin: testBot}).Publish(t.Context(), fx.fake.Client(),
				fx.post("run-2", finding("fp-target", "pkg/p01/file.go", 10, 10, review.SeverityWarning)))
			if err != nil {
				t.Fatal(err)
			}
			if posted.AlreadyPosted != tt.wantAlready {
				t.Errorf("AlreadyPosted = %v, want %v", posted.AlreadyPosted, tt.wantAlready)
			}
			if dup := posted.Placements["fp-target"].Where == review.PlacedDuplicate; dup != tt.wantDuplicate && !tt.wantAlready {
				t.Errorf("placed %+v; duplicate wanted: %v", posted.Placements["fp-target"], tt.wantDuplicate)
			}
		})
	}
}

func TestPublishRequiresBotLogin(t *testing.T) {
	fx := newPublishFixture(t)
	_, err := NewPublisher(PublisherOptions{MaxInlineComments: 30}).Publish(t.Context(), fx.fake.Client(), fx.post("run-1"))
	if err == nil || !strings.Contains(err.Error(), "bot login is required") {
		t.Errorf("Publish without a bot login: %v, want an error", err)
	}
	if n := fx.fake.APICallCount(); n != 0 {
		t.Errorf("%d API calls without a bot login", n)
	}
}
