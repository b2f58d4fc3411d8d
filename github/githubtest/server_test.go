package githubtest_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	gh "github.com/google/go-github/v60/github"
	"github.com/shurcooL/githubv4"

	"github.com/mergeguard/mergeguard/github/githubtest"
)

// realPR serves a real reviewdog diff: README.md has hunks at new lines
// 437-443 (line 440 replaced), 445-450 (old lines 448-449 deleted) and
// 761-766; doghouse/server/ciutil/ciutil.go is deleted.
func realPR(t *testing.T) (*githubtest.Server, githubtest.PR) {
	t.Helper()
	d, err := os.ReadFile("testdata/go-reviewdog_deleted-files_fd5eac8.diff")
	if err != nil {
		t.Fatal(err)
	}
	fake := githubtest.New(t)
	pr := fake.AddPR(githubtest.PR{Owner: "reviewdog", Repo: "reviewdog", Number: 1, Diff: string(d)})
	return fake, pr
}

func TestCreateReviewValidatesComments(t *testing.T) {
	const (
		lineNotInDiff = "Pull request review thread line must be part of the diff and Pull request review thread diff hunk can't be blank"
		otherHunk     = "Pull request review thread start line must be part of the same hunk as the line."
		startAfterEnd = "Pull request review thread start line must precede the end line."
		pathInvalid   = "Pull request review thread path is invalid and Pull request review thread diff hunk can't be blank"
	)
	c := func(path, side string, start, line int) *gh.DraftReviewComment {
		dc := &gh.DraftReviewComment{Path: gh.String(path), Body: gh.String("note"), Line: gh.Int(line)}
		if side != "" {
			dc.Side = gh.String(side)
		}
		if start > 0 {
			dc.StartLine, dc.StartSide = gh.Int(start), gh.String(side)
		}
		return dc
	}
	tests := []struct {
		name    string
		comment *gh.DraftReviewComment
		wantErr string
	}{
		{"added line", c("README.md", "RIGHT", 0, 440), ""},
		{"side defaults to RIGHT", c("README.md", "", 0, 440), ""},
		{"deleted line on LEFT", c("README.md", "LEFT", 0, 440), ""},
		{"context line on RIGHT", c("README.md", "RIGHT", 0, 448), ""},
		{"context line on LEFT by its old number", c("README.md", "LEFT", 0, 450), ""},
		{"deleted lines on LEFT", c("README.md", "LEFT", 448, 449), ""},
		{"range in a hunk", c("README.md", "RIGHT", 437, 443), ""},
		{"line between hunks", c("README.md", "RIGHT", 0, 444), lineNotInDiff},
		{"line past the last hunk", c("README.md", "RIGHT", 0, 800), lineNotInDiff},
		{"old number on the wrong side", c("README.md", "RIGHT", 0, 451), lineNotInDiff},
		{"range across hunks", c("README.md", "RIGHT", 443, 445), otherHunk},
		{"start_line equal to line", c("README.md", "RIGHT", 440, 440), startAfterEnd},
		{"start_line after line", c("README.md", "RIGHT", 442, 440), startAfterEnd},
		{"file outside the diff", c("go.mod", "RIGHT", 0, 1), pathInvalid},
		{"deleted file on LEFT", c("doghouse/server/ciutil/ciutil.go", "LEFT", 0, 5), ""},
		{"deleted file on RIGHT", c("doghouse/server/ciutil/ciutil.go", "RIGHT", 0, 5), lineNotInDiff},
		{"side outside the enum", c("README.md", "side", 0, 440), "Pull request review thread side is not included in the list"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake, pr := realPR(t)
			good := c("README.md", "RIGHT", 0, 440)
			_, _, err := fake.Client().PullRequests.CreateReview(t.Context(), "reviewdog", "reviewdog", 1, &gh.PullRequestReviewRequest{
				CommitID: gh.String(pr.HeadSHA), Event: gh.String("COMMENT"), Body: gh.String("review"),
				Comments: []*gh.DraftReviewComment{good, tt.comment},
			})
			reviews := fake.Reviews("reviewdog", "reviewdog", 1)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("CreateReview: %v", err)
				}
				if len(reviews) != 1 || len(reviews[0].Comments) != 2 {
					t.Errorf("reviews = %+v, want one with both comments", reviews)
				}
				return
			}
			var er *gh.ErrorResponse
			if !errors.As(err, &er) || er.Response.StatusCode != http.StatusUnprocessableEntity {
				t.Fatalf("CreateReview error = %v, want a 422", err)
			}
			if er.Message != "Unprocessable Entity" || len(er.Errors) != 1 || er.Errors[0].Message != tt.wantErr {
				t.Errorf("422 = %q %+v, want errors [%q]", er.Message, er.Errors, tt.wantErr)
			}
			if len(reviews) != 0 {
				t.Errorf("the whole review must be rejected; stored %+v", reviews)
			}
		})
	}
}

func TestReviewLifecycle(t *testing.T) {
	fake, pr := realPR(t)
	client := fake.Client()
	ctx := t.Context()
	pending, _, err := client.PullRequests.CreateReview(ctx, "reviewdog", "reviewdog", 1, &gh.PullRequestReviewRequest{CommitID: gh.String(pr.HeadSHA)})
	if err != nil || pending.GetState() != "PENDING" || pending.SubmittedAt != nil {
		t.Fatalf("pending review = %+v, %v", pending, err)
	}
	_, _, err = client.PullRequests.CreateReview(ctx, "reviewdog", "reviewdog", 1, &gh.PullRequestReviewRequest{})
	if er := new(gh.ErrorResponse); !errors.As(err, &er) || er.Errors[0].Message != "User can only have one pending review per pull request" {
		t.Errorf("second pending review: %v", err)
	}
	_, _, err = client.PullRequests.CreateReview(ctx, "reviewdog", "reviewdog", 1, &gh.PullRequestReviewRequest{Event: gh.String("COMMENT"), Body: gh.String("looks fine")})
	if er := new(gh.ErrorResponse); !errors.As(err, &er) || er.Errors[0].Message != "User can only have one pending review per pull request" {
		t.Errorf("submitted review while one is pending: %v", err)
	}
	if _, _, err := client.PullRequests.DeletePendingReview(ctx, "reviewdog", "reviewdog", 1, pending.GetID()); err != nil {
		t.Fatal(err)
	}
	_, _, err = client.PullRequests.CreateReview(ctx, "reviewdog", "reviewdog", 1, &gh.PullRequestReviewRequest{Event: gh.String("COMMENT")})
	if err == nil {
		t.Error("a COMMENT review without a body was accepted")
	}
	rc, _, err := client.PullRequests.CreateReview(ctx, "reviewdog", "reviewdog", 1, &gh.PullRequestReviewRequest{Event: gh.String("REQUEST_CHANGES"), Body: gh.String("fix")})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := client.PullRequests.DeletePendingReview(ctx, "reviewdog", "reviewdog", 1, rc.GetID()); err == nil {
		t.Error("deleted a submitted review")
	}
	d, _, err := client.PullRequests.DismissReview(ctx, "reviewdog", "reviewdog", 1, rc.GetID(), &gh.PullRequestReviewDismissalRequest{Message: gh.String("fixed")})
	if err != nil || d.GetState() != "DISMISSED" {
		t.Errorf("dismiss = %+v, %v", d, err)
	}
	if _, _, err := client.PullRequests.CreateReview(ctx, "reviewdog", "reviewdog", 1, &gh.PullRequestReviewRequest{CommitID: gh.String("0000000000000000000000000000000000000000"), Event: gh.String("APPROVE")}); err == nil {
		t.Error("a review on a commit outside the pull request was accepted")
	}
}

func TestPaginationAndNotFound(t *testing.T) {
	fake, _ := realPR(t)
	for range 5 {
		fake.AddReview("reviewdog", "reviewdog", 1, githubtest.Review{State: "COMMENTED", Body: "x"})
	}
	client := fake.Client()
	page, resp, err := client.PullRequests.ListReviews(t.Context(), "reviewdog", "reviewdog", 1, &gh.ListOptions{PerPage: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(page) != 2 || resp.NextPage != 2 || resp.LastPage != 3 {
		t.Errorf("first page: %d items, next %d, last %d; want 2, 2, 3", len(page), resp.NextPage, resp.LastPage)
	}
	page, resp, _ = client.PullRequests.ListReviews(t.Context(), "reviewdog", "reviewdog", 1, &gh.ListOptions{PerPage: 2, Page: 3})
	if len(page) != 1 || resp.NextPage != 0 || resp.PrevPage != 2 || resp.FirstPage != 1 {
		t.Errorf("last page: %d items, next %d, prev %d", len(page), resp.NextPage, resp.PrevPage)
	}
	files, _, err := client.PullRequests.ListFiles(t.Context(), "reviewdog", "reviewdog", 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range files {
		names = append(names, f.GetFilename()+" "+f.GetStatus())
	}
	want := []string{"CHANGELOG.md modified", "README.md modified", "cmd/reviewdog/main.go modified", "doghouse/appengine/checker.go modified",
		"doghouse/appengine/warmup.go modified", "doghouse/server/ciutil/ciutil.go removed", "doghouse/server/ciutil/ciutil_test.go removed"}
	if d := cmp.Diff(want, names); d != "" {
		t.Errorf("files (-want +got):\n%s", d)
	}
	if !strings.HasPrefix(files[1].GetPatch(), "@@ -437,7 +437,7 @@") || strings.HasSuffix(files[1].GetPatch(), "\n") {
		t.Errorf("README.md patch = %.40q…, want the hunks without a final newline", files[1].GetPatch())
	}

	_, _, err = client.PullRequests.Get(t.Context(), "reviewdog", "reviewdog", 2)
	var er *gh.ErrorResponse
	if !errors.As(err, &er) || er.Response.StatusCode != 404 || er.Message != "Not Found" || er.DocumentationURL == "" {
		t.Errorf("missing pull request: %v", err)
	}
	if n := fake.CallCount(""); n != 0 {
		t.Errorf("%d calls matched no route", n)
	}
	resp2, err := http.Get(fake.URL() + "repos/x/y/unknown")
	if err != nil {
		t.Fatal(err)
	}
	resp2.Body.Close()
	if resp2.StatusCode != 404 || fake.CallCount("") != 1 {
		t.Errorf("unknown route: status %d, %d unmatched calls recorded", resp2.StatusCode, fake.CallCount(""))
	}
}

func TestRawDiff(t *testing.T) {
	fake, pr := realPR(t)
	got, _, err := fake.Client().PullRequests.GetRaw(t.Context(), "reviewdog", "reviewdog", 1, gh.RawOptions{Type: gh.Diff})
	if err != nil || got != pr.Diff {
		t.Fatalf("raw diff differs from the served one (err %v)", err)
	}
	big := fake.AddPR(githubtest.PR{Owner: "reviewdog", Repo: "reviewdog", Number: 2, Diff: pr.Diff, DiffTooLarge: true})
	_, _, err = fake.Client().PullRequests.GetRaw(t.Context(), "reviewdog", "reviewdog", big.Number, gh.RawOptions{Type: gh.Diff})
	var er *gh.ErrorResponse
	if !errors.As(err, &er) || er.Response.StatusCode != http.StatusNotAcceptable || len(er.Errors) != 1 || er.Errors[0].Code != "too_large" {
		t.Errorf("too large diff: %v, want 406 too_large", err)
	}
}

func TestInjectedFailures(t *testing.T) {
	fake, _ := realPR(t)
	fake.FailNext(githubtest.RoutePull, 403, http.Header{"Retry-After": {"30"}})
	_, _, err := fake.Client().PullRequests.Get(t.Context(), "reviewdog", "reviewdog", 1)
	var abuse *gh.AbuseRateLimitError
	if !errors.As(err, &abuse) || abuse.RetryAfter == nil || abuse.RetryAfter.Seconds() != 30 {
		t.Errorf("403 secondary limit: %v, want go-github's AbuseRateLimitError with RetryAfter 30s", err)
	}
	if _, _, err := fake.Client().PullRequests.Get(t.Context(), "reviewdog", "reviewdog", 1); err != nil {
		t.Errorf("the failure applied twice: %v", err)
	}
	calls := fake.CallsTo(githubtest.RoutePull)
	if len(calls) != 2 || calls[0].Status != 403 || calls[1].Status != 200 {
		t.Errorf("calls = %+v", calls)
	}
}

func TestInjectedResetsAndLateAnswers(t *testing.T) {
	comment := func(fake *githubtest.Server, ctx context.Context) error {
		_, _, err := fake.Client().Issues.CreateComment(ctx, "reviewdog", "reviewdog", 1, &gh.IssueComment{Body: gh.String("hello")})
		return err
	}
	tests := []struct {
		name         string
		failure      githubtest.Failure
		timeout      time.Duration
		wantErr      func(error) bool
		wantStatus   int
		wantComments int
	}{
		{"reset", githubtest.Failure{Reset: true}, 0, isConnReset, 0, 0},
		{"reset after the work", githubtest.Failure{Reset: true, Processed: true}, 0, isConnReset, 0, 1},
		{"hangup", githubtest.Failure{Hangup: true}, 0, func(err error) bool { return errors.Is(err, io.EOF) }, 0, 0},
		{"late answer the client gave up on", githubtest.Failure{Delay: time.Second, Processed: true}, 50 * time.Millisecond,
			func(err error) bool { return errors.Is(err, context.DeadlineExceeded) }, 499, 1},
		{"late answer", githubtest.Failure{Delay: 50 * time.Millisecond, Processed: true}, 0,
			func(err error) bool { return err == nil }, http.StatusCreated, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake, _ := realPR(t)
			fake.Inject(githubtest.RouteCreateIssueComment, tt.failure)
			ctx := t.Context()
			if tt.timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.timeout)
				defer cancel()
			}
			if err := comment(fake, ctx); !tt.wantErr(err) {
				t.Errorf("create comment: unexpected error %v", err)
			}
			var calls []githubtest.Call
			for range 100 { // a client that gave up does not wait for the fake's bookkeeping
				if calls = fake.CallsTo(githubtest.RouteCreateIssueComment); len(calls) == 1 && calls[0].Status == tt.wantStatus {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			if len(calls) != 1 || calls[0].Status != tt.wantStatus || calls[0].Time.IsZero() {
				t.Errorf("calls = %+v, want one answered %d at a recorded time", calls, tt.wantStatus)
			}
			if n := len(fake.IssueComments("reviewdog", "reviewdog", 1)); n != tt.wantComments {
				t.Errorf("%d comments created, want %d", n, tt.wantComments)
			}
		})
	}
}

// isConnReset reports whether err is a connection reset by the server.
func isConnReset(err error) bool { return errors.Is(err, syscall.ECONNRESET) }

func TestGraphQLBlameSelectsFields(t *testing.T) {
	fake := githubtest.New(t)
	pr := fake.AddPR(githubtest.PR{Owner: "o", Repo: "r", Number: 1,
		Head: map[string]string{"a.go": "one\ntwo\n"},
		Diff: "diff --git a/a.go b/a.go\nnew file mode 100644\n--- /dev/null\n+++ b/a.go\n@@ -0,0 +1,2 @@\n+one\n+two\n"})
	var q struct {
		Repository struct {
			Object struct {
				Commit struct {
					Blame struct {
						Ranges []struct {
							StartingLine, EndingLine int
							Commit                   struct{ Oid string }
						}
					} `graphql:"blame(path: $path)"`
				} `graphql:"... on Commit"`
			} `graphql:"object(oid: $oid)"`
		} `graphql:"repository(owner: $owner, name: $name)"`
	}
	err := fake.V4Client().Query(t.Context(), &q, map[string]any{
		"owner": githubv4.String("o"), "name": githubv4.String("r"), "oid": githubv4.GitObjectID(pr.HeadSHA), "path": githubv4.String("a.go"),
	})
	if err != nil {
		t.Fatal(err)
	}
	r := q.Repository.Object.Commit.Blame.Ranges
	if len(r) != 1 || r[0].StartingLine != 1 || r[0].EndingLine != 2 || r[0].Commit.Oid != pr.HeadSHA {
		t.Errorf("ranges = %+v", r)
	}
}

func TestWebhookDeliveriesValidate(t *testing.T) {
	secret := []byte("s3cret")
	names := githubtest.WebhookPayloads()
	if len(names) != 41 { // 38 of GitHub's, 3 repository payloads built from them
		t.Errorf("%d webhook payloads, want 41", len(names))
	}
	// go-github cannot read the App's created_at of these old examples
	// ("2018-04-25 20:42:10"); MergeGuard's own event types do not read it.
	oldTimes := map[string]bool{"check_run/rerequested.payload.json": true, "check_run/rerequested.with-organization.payload.json": true}
	for _, name := range names {
		event, _, _ := strings.Cut(name, "/")
		payload := githubtest.Payload(t, name)
		req, err := githubtest.Delivery{Event: event, ID: "72d3162e-cc78-11e3-81ab-4c9367dc0958", Payload: payload}.Request(t.Context(), "http://mergeguard.invalid/api/github/hook", secret)
		if err != nil {
			t.Fatal(err)
		}
		body, err := gh.ValidatePayload(req, secret)
		if err != nil {
			t.Errorf("%s: go-github rejects the signature: %v", name, err)
			continue
		}
		if !bytes.Equal(body, payload) {
			t.Errorf("%s: payload changed", name)
		}
		if _, err := gh.ParseWebHook(gh.WebHookType(req), body); err != nil && !oldTimes[name] {
			t.Errorf("%s: %v", name, err)
		}
		req, _ = githubtest.Delivery{Event: event, ID: "x", Payload: payload}.Request(t.Context(), "http://mergeguard.invalid/", []byte("wrong"))
		if _, err := gh.ValidatePayload(req, secret); err == nil {
			t.Errorf("%s: a payload signed with another secret validated", name)
		}
	}
}

func TestSetFields(t *testing.T) {
	payload := githubtest.SetFields(t, githubtest.Payload(t, "issue_comment/githubIssueCommentEvent.json"),
		map[string]any{"comment.body": "/mergeguard rerun", "installation.id": 42})
	ev, err := gh.ParseWebHook("issue_comment", payload)
	if err != nil {
		t.Fatal(err)
	}
	ic := ev.(*gh.IssueCommentEvent)
	if ic.GetComment().GetBody() != "/mergeguard rerun" || ic.GetInstallation().GetID() != 42 || !ic.GetIssue().IsPullRequest() {
		t.Errorf("event = body %q, installation %d, on a PR %v", ic.GetComment().GetBody(), ic.GetInstallation().GetID(), ic.GetIssue().IsPullRequest())
	}
}

func TestAccessTokenNeedsTheAppsJWT(t *testing.T) {
	fake := githubtest.New(t)
	fake.AppConfig(7)
	req, _ := http.NewRequest(http.MethodPost, fake.URL()+"app/installations/1/access_tokens", nil)
	req.Header.Set("Authorization", "Bearer eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiI3In0.c2ln")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(string(b), "JSON web token") {
		t.Errorf("forged JWT: %d %s", resp.StatusCode, b)
	}
	if fake.Tokens() != 0 {
		t.Error("a token was issued for a forged JWT")
	}
}

// TestContents: repos/get-content serves files as JSON or, with the raw
// media type, as their bytes; files above 1 MB only raw; directories as a
// list; missing paths 404.
func TestContents(t *testing.T) {
	fake := githubtest.New(t)
	large := strings.Repeat("0123456789abcde\n", 80000) // 1.28 MB
	pr := fake.AddPR(githubtest.PR{Owner: "acme", Repo: "widgets", Number: 1,
		Base: map[string]string{"README.md": "hi\n"},
		Head: map[string]string{"README.md": "hi\n", "data/large.txt": large, "data/small.txt": "small\n"},
		Diff: "diff --git a/data/small.txt b/data/small.txt\nnew file mode 100644\nindex 0000000..1111111\n--- /dev/null\n+++ b/data/small.txt\n@@ -0,0 +1 @@\n+small\n"})
	client := fake.Client()
	get := func(path, accept string) (*http.Response, []byte) {
		t.Helper()
		req, err := client.NewRequest(http.MethodGet, "repos/acme/widgets/contents/"+path+"?ref="+pr.HeadSHA, nil)
		if err != nil {
			t.Fatal(err)
		}
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		resp, err := client.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp, body
	}
	type answer struct {
		Status      int
		ContentType string
		Body        string // the body, or its start for JSON
	}
	tests := []struct {
		name, path, accept string
		want               answer
	}{
		{"raw file", "data/small.txt", "application/vnd.github.raw", answer{200, "application/vnd.github.raw; charset=utf-8", "small\n"}},
		{"raw file above 1 MB", "data/large.txt", "application/vnd.github.raw", answer{200, "application/vnd.github.raw; charset=utf-8", large}},
		{"JSON file", "data/small.txt", "", answer{200, "application/json; charset=utf-8", `{"_links":`}},
		{"JSON file above 1 MB", "data/large.txt", "application/vnd.github+json", answer{403, "application/json; charset=utf-8", `{"documentation_url":"https://docs.github.com/rest/repos/contents#get-repository-content","errors":[{"code":"too_large","field":"data","resource":"Blob"}],"message":"This API returns blobs up to 1 MB in size.`}},
		{"raw directory", "data", "application/vnd.github.raw", answer{200, "application/json; charset=utf-8", `[{"name":"large.txt","path":"data/large.txt"`}},
		{"missing file", "data/none.txt", "application/vnd.github.raw", answer{404, "application/json; charset=utf-8", `{"documentation_url":"https://docs.github.com/rest/repos/contents#get-repository-content","message":"Not Found","status":"404"}`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := get(tt.path, tt.accept)
			got := answer{resp.StatusCode, resp.Header.Get("Content-Type"), string(body)}
			if len(got.Body) > len(tt.want.Body) {
				got.Body = got.Body[:len(tt.want.Body)]
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("GET contents/%s (-want +got):\n%s", tt.path, diff)
			}
		})
	}
}

// BenchmarkGetPull measures one pulls/get through the fake's HTTP server,
// the call the e2e load tests make most.
func BenchmarkGetPull(b *testing.B) {
	d, err := os.ReadFile("testdata/go-reviewdog_deleted-files_fd5eac8.diff")
	if err != nil {
		b.Fatal(err)
	}
	fake := githubtest.New(b)
	fake.AddPR(githubtest.PR{Owner: "reviewdog", Repo: "reviewdog", Number: 1, Diff: string(d)})
	client := fake.Client()
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := client.PullRequests.Get(b.Context(), "reviewdog", "reviewdog", 1); err != nil {
			b.Fatal(err)
		}
	}
}
