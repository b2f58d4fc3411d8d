package githubtest_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	gh "github.com/google/go-github/v60/github"
	"github.com/shurcooL/githubv4"

	"github.com/mergeguard/mergeguard/github/githubtest"
)

// readme is README.md at the head of smallPR: five lines.
const readme = "# Hello\nbanaas\nthird\naples\nlast\n"

// smallPR is a pull request adding README.md, made with GitDiff.
func smallPR(t *testing.T) (*githubtest.Server, githubtest.PR) {
	t.Helper()
	fake := githubtest.New(t)
	base := map[string]string{"main.go": "package main\n"}
	head := map[string]string{"main.go": "package main\n", "README.md": readme}
	pr := fake.AddPR(githubtest.PR{Owner: "o", Repo: "r", Number: 1, Base: base, Head: head, Diff: githubtest.GitDiff(base, head)})
	return fake, pr
}

// send makes a raw request with a JSON body and decodes the answer.
func send(t *testing.T, method, url string, body any) (int, map[string]any) {
	t.Helper()
	var b []byte
	switch v := body.(type) {
	case []byte:
		b = v
	default:
		var err error
		if b, err = json.Marshal(v); err != nil {
			t.Fatal(err)
		}
	}
	req, err := http.NewRequestWithContext(t.Context(), method, url, bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return resp.StatusCode, out
}

// request reads a documented request example, with fields replaced.
func request(t *testing.T, name string, set map[string]any) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/requests/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return githubtest.SetFields(t, b, set)
}

func TestCheckRunsFromTheDocumentedExamples(t *testing.T) {
	fake, pr := smallPR(t)
	url := fake.URL() + "repos/o/r/check-runs"
	status, run := send(t, "POST", url, request(t, "request.checks.create.example-of-in-progress-conclusion.json", map[string]any{"head_sha": pr.HeadSHA}))
	if status != http.StatusCreated || run["status"] != "in_progress" || run["conclusion"] != nil || run["external_id"] != "42" || run["completed_at"] != nil {
		t.Fatalf("create in progress: %d %v", status, run)
	}
	id := int64(run["id"].(float64))
	status, run = send(t, "PATCH", fmt.Sprintf("%s/%d", url, id), request(t, "request.checks.update.default.json", nil))
	if status != http.StatusOK || run["status"] != "completed" || run["conclusion"] != "success" || run["completed_at"] != "2018-05-04T01:14:52Z" {
		t.Fatalf("update to completed: %d %v", status, run)
	}
	if n := run["output"].(map[string]any)["annotations_count"]; n != 2.0 {
		t.Errorf("annotations_count = %v, want 2", n)
	}
	status, run = send(t, "POST", url, request(t, "request.checks.create.example-of-completed-conclusion.json", map[string]any{"head_sha": pr.HeadSHA}))
	if status != http.StatusCreated || run["conclusion"] != "success" || run["status"] != "completed" {
		t.Fatalf("create completed: %d %v", status, run)
	}
	list, _, err := fake.Client().Checks.ListCheckRunsForRef(t.Context(), "o", "r", pr.HeadSHA, &gh.ListCheckRunsOptions{CheckName: gh.String("mighty_readme")})
	if err != nil || list.GetTotal() != 2 || list.CheckRuns[0].GetID() == id || len(list.CheckRuns[0].PullRequests) != 1 {
		t.Fatalf("list for ref: %+v, %v", list, err)
	}
	got, _, err := fake.Client().Checks.GetCheckRun(t.Context(), "o", "r", id)
	if err != nil || got.GetOutput().GetTitle() != "Mighty Readme report" || got.GetApp().GetSlug() != "mergeguard" {
		t.Errorf("get: %+v, %v", got, err)
	}
	if runs := fake.CheckRuns("o", "r"); len(runs) != 2 || len(runs[0].Annotations) != 2 || runs[0].Requests != 2 {
		t.Errorf("CheckRuns = %+v", runs)
	}
}

func TestCheckRunValidation(t *testing.T) {
	fake, pr := smallPR(t)
	ann := func(path string, start, end int) map[string]any {
		return map[string]any{"path": path, "start_line": start, "end_line": end, "annotation_level": "warning", "message": "m"}
	}
	many := make([]any, 51)
	for i := range many {
		many[i] = ann("README.md", 1, 1)
	}
	out := func(anns ...any) map[string]any {
		return map[string]any{"title": "t", "summary": "s", "annotations": anns}
	}
	tests := []struct {
		name    string
		body    map[string]any
		want    int
		wantMsg string
	}{
		{"a conclusion completes the run", map[string]any{"name": "c", "head_sha": pr.HeadSHA, "conclusion": "neutral"}, 201, ""},
		{"completed needs a conclusion", map[string]any{"name": "c", "head_sha": pr.HeadSHA, "status": "completed"}, 422, `"conclusion" wasn't supplied`},
		{"completed_at needs a conclusion", map[string]any{"name": "c", "head_sha": pr.HeadSHA, "completed_at": "2024-03-01T12:00:00Z"}, 422, `"conclusion" wasn't supplied`},
		{"stale is GitHub's", map[string]any{"name": "c", "head_sha": pr.HeadSHA, "conclusion": "stale"}, 422, "not a valid conclusion"},
		{"name required", map[string]any{"head_sha": pr.HeadSHA}, 422, `"name" wasn't supplied`},
		{"unknown commit", map[string]any{"name": "c", "head_sha": strings.Repeat("0", 40)}, 422, "No commit found for SHA"},
		{"output needs a summary", map[string]any{"name": "c", "head_sha": pr.HeadSHA, "output": map[string]any{"title": "t"}}, 422, `"summary" wasn't supplied`},
		{"50 annotations", map[string]any{"name": "c", "head_sha": pr.HeadSHA, "output": out(many[:50]...)}, 201, ""},
		{"51 annotations", map[string]any{"name": "c", "head_sha": pr.HeadSHA, "output": out(many...)}, 422, "Only 50 annotations are allowed per request"},
		{"path not in the commit", map[string]any{"name": "c", "head_sha": pr.HeadSHA, "output": out(ann("nope.md", 1, 1))}, 422, "not a file of the commit"},
		{"line past the end of the file", map[string]any{"name": "c", "head_sha": pr.HeadSHA, "output": out(ann("README.md", 5, 6))}, 422, "not inside README.md (5 lines)"},
		{"last line", map[string]any{"name": "c", "head_sha": pr.HeadSHA, "output": out(ann("README.md", 5, 5))}, 201, ""},
		{"start after end", map[string]any{"name": "c", "head_sha": pr.HeadSHA, "output": out(ann("README.md", 3, 2))}, 422, "at most end_line"},
		{"columns on several lines", map[string]any{"name": "c", "head_sha": pr.HeadSHA, "output": out(map[string]any{
			"path": "README.md", "start_line": 1, "end_line": 2, "start_column": 1, "annotation_level": "notice", "message": "m"})}, 422, "only allowed on annotations of one line"},
		{"level outside the enum", map[string]any{"name": "c", "head_sha": pr.HeadSHA, "output": out(map[string]any{
			"path": "README.md", "start_line": 1, "end_line": 1, "annotation_level": "error", "message": "m"})}, 422, "is not a member"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, got := send(t, "POST", fake.URL()+"repos/o/r/check-runs", tt.body)
			if status != tt.want {
				t.Fatalf("status %d, want %d: %v", status, tt.want, got)
			}
			if msg, _ := got["message"].(string); !strings.Contains(msg, tt.wantMsg) {
				t.Errorf("message %q, want it to contain %q", msg, tt.wantMsg)
			}
			if tt.want == 201 && got["conclusion"] != nil && (got["status"] != "completed" || got["completed_at"] == nil) {
				t.Errorf("a run with a conclusion: status %v, completed_at %v", got["status"], got["completed_at"])
			}
		})
	}
	status, _ := send(t, "PATCH", fake.URL()+"repos/o/r/check-runs/1", map[string]any{"name": "c"})
	if status != http.StatusNotFound {
		t.Errorf("update of an unknown run: %d, want 404", status)
	}
}

func TestCompareFollowsTheHistory(t *testing.T) {
	fake, pr := smallPR(t)
	client := fake.Client()
	cmpOf := func(base, head string) *gh.CommitsComparison {
		t.Helper()
		c, _, err := client.Repositories.CompareCommits(t.Context(), "o", "r", base, head, nil)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	type counts struct {
		Status        string
		Ahead, Behind int
		Files         []string
	}
	countsOf := func(c *gh.CommitsComparison) counts {
		var files []string
		for _, f := range c.Files {
			files = append(files, f.GetFilename()+" "+f.GetStatus())
		}
		return counts{c.GetStatus(), c.GetAheadBy(), c.GetBehindBy(), files}
	}
	first := pr.HeadSHA
	if got := countsOf(cmpOf(first, first)); got.Status != "identical" || got.Ahead != 0 || got.Behind != 0 {
		t.Errorf("identical: %+v", got)
	}
	second := fake.Push("o", "r", 1, map[string]string{"main.go": "package main\n\nfunc main() {}\n", "README.md": readme}, "add main")
	third := fake.Push("o", "r", 1, map[string]string{"main.go": "package main\n\nfunc main() {}\n", "README.md": readme + "more\n", "new.go": "package main\n"}, "more")
	want := counts{"ahead", 2, 0, []string{"README.md modified", "main.go modified", "new.go added"}}
	c := cmpOf(first, third)
	if d := cmp.Diff(want, countsOf(c)); d != "" {
		t.Errorf("pushed on top (-want +got):\n%s", d)
	}
	if len(c.Commits) != 2 || c.Commits[0].GetSHA() != second || c.Commits[1].GetSHA() != third || c.GetMergeBaseCommit().GetSHA() != first {
		t.Errorf("commits %v, merge base %s", c.Commits, c.GetMergeBaseCommit().GetSHA())
	}
	if got := countsOf(cmpOf(third, first)); got.Status != "behind" || got.Behind != 2 || got.Ahead != 0 {
		t.Errorf("behind: %+v", got)
	}
	raw, _, err := client.Repositories.CompareCommitsRaw(t.Context(), "o", "r", second, third, gh.RawOptions{Type: gh.Diff})
	if err != nil || !strings.Contains(raw, "diff --git a/new.go b/new.go\nnew file mode 100644\n") || !strings.Contains(raw, "+more\n") || strings.Contains(raw, "main.go b/main.go") {
		t.Errorf("raw diff %s...%s: %v\n%s", second, third, err, raw)
	}
	forced := fake.ForcePush("o", "r", 1, map[string]string{"main.go": "package main\n", "README.md": "rebased\n"}, "rebased")
	if got := countsOf(cmpOf(third, forced)); got.Status != "diverged" || got.Ahead != 1 || got.Behind != 3 {
		t.Errorf("force-push: %+v", got)
	}
	base := fake.MoveBase("o", "r", 1, map[string]string{"main.go": "package main // v2\n"}, "v2")
	if got := countsOf(cmpOf(pr.BaseSHA, base)); got.Status != "ahead" || got.Ahead != 1 {
		t.Errorf("base moved: %+v", got)
	}
	if got := countsOf(cmpOf(base, forced)); got.Status != "diverged" || got.Ahead != 1 || got.Behind != 1 {
		t.Errorf("head against the moved base: %+v", got)
	}
	head, _, err := client.PullRequests.Get(t.Context(), "o", "r", 1)
	if err != nil || head.GetHead().GetSHA() != forced || head.GetBase().GetSHA() != base {
		t.Errorf("pull request after the pushes: head %s base %s, %v", head.GetHead().GetSHA(), head.GetBase().GetSHA(), err)
	}
	files, _, _ := client.PullRequests.ListFiles(t.Context(), "o", "r", 1, nil)
	if len(files) != 1 || files[0].GetFilename() != "README.md" {
		t.Errorf("files after the force-push (from the merge base): %v", files)
	}
	_, _, err = client.Repositories.CompareCommits(t.Context(), "o", "r", strings.Repeat("1", 40), forced, nil)
	if er := new(gh.ErrorResponse); !errors.As(err, &er) || er.Response.StatusCode != 404 {
		t.Errorf("unknown base: %v", err)
	}
}

func TestComparePaginatesCommits(t *testing.T) {
	fake, pr := smallPR(t)
	for i := range 3 {
		fake.Push("o", "r", 1, map[string]string{"README.md": fmt.Sprint(i)}, fmt.Sprint("push ", i))
	}
	head := fake.Push("o", "r", 1, map[string]string{"README.md": "last"}, "last")
	c, resp, err := fake.Client().Repositories.CompareCommits(t.Context(), "o", "r", pr.HeadSHA, head, &gh.ListOptions{PerPage: 1})
	if err != nil || c.GetAheadBy() != 4 || len(c.Commits) != 1 || resp.NextPage != 2 || len(c.Files) != 2 {
		t.Fatalf("first page: ahead %d, %d commits, next %d, %d files, %v", c.GetAheadBy(), len(c.Commits), resp.NextPage, len(c.Files), err)
	}
	c, _, err = fake.Client().Repositories.CompareCommits(t.Context(), "o", "r", pr.HeadSHA, head, &gh.ListOptions{PerPage: 1, Page: 2})
	if err != nil || len(c.Commits) != 1 || len(c.Files) != 0 {
		t.Errorf("second page: %d commits, %d files (files come on the first page only), %v", len(c.Commits), len(c.Files), err)
	}
}

// threadsQuery is the query github.Repo.Threads makes.
type threadsQuery struct {
	Repository struct {
		PullRequest struct {
			ReviewThreads struct {
				TotalCount int
				Nodes      []struct {
					ID         string
					IsResolved bool
					IsOutdated bool
					Path       string
					ResolvedBy *struct{ Login string }
					Comments   struct {
						Nodes []struct {
							FullDatabaseID string `graphql:"fullDatabaseId"`
							Body           string
							Author         struct {
								Typename string `graphql:"__typename"`
								Login    string
							}
						}
					} `graphql:"comments(first: $n)"`
				}
				PageInfo struct {
					HasNextPage bool
					EndCursor   githubv4.String
				}
			} `graphql:"reviewThreads(first: $first, after: $cursor)"`
		} `graphql:"pullRequest(number: $number)"`
	} `graphql:"repository(owner: $owner, name: $name)"`
}

// reviewed posts a review of the bot with two comments on README.md.
func reviewed(t *testing.T, fake *githubtest.Server, pr githubtest.PR) []int64 {
	t.Helper()
	rv, _, err := fake.Client().PullRequests.CreateReview(t.Context(), "o", "r", 1, &gh.PullRequestReviewRequest{
		CommitID: gh.String(pr.HeadSHA), Event: gh.String("COMMENT"), Body: gh.String("review"),
		Comments: []*gh.DraftReviewComment{
			{Path: gh.String("README.md"), Line: gh.Int(2), Body: gh.String("first\n<!-- mergeguard:fp=fp-1 -->")},
			{Path: gh.String("README.md"), Line: gh.Int(4), Body: gh.String("second")},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for _, c := range fake.ReviewComments("o", "r", 1) {
		if c.ReviewID == rv.GetID() {
			ids = append(ids, c.ID)
		}
	}
	return ids
}

func TestReviewThreadsFromComments(t *testing.T) {
	fake, pr := smallPR(t)
	ids := reviewed(t, fake, pr)
	status, got := send(t, "POST", fmt.Sprintf("%srepos/o/r/pulls/1/comments/%d/replies", fake.URL(), ids[0]), request(t, "request.pulls.create-reply-for-review-comment.default.json", nil))
	if status != http.StatusCreated || got["in_reply_to_id"] != float64(ids[0]) || got["body"] != "Great stuff!" || got["path"] != "README.md" {
		t.Fatalf("reply: %d %v", status, got)
	}
	replyID := int64(got["id"].(float64))
	for _, tt := range []struct {
		name string
		id   int64
		body string
		want int
	}{
		{"reply to a reply", replyID, "again", 422},
		{"unknown comment", 999999, "hello", 404},
		{"blank body", ids[1], " ", 422},
	} {
		status, got := send(t, "POST", fmt.Sprintf("%srepos/o/r/pulls/1/comments/%d/replies", fake.URL(), tt.id), map[string]any{"body": tt.body})
		if status != tt.want {
			t.Errorf("%s: %d %v, want %d", tt.name, status, got, tt.want)
		}
	}
	person := fake.Reply("o", "r", 1, ids[1], githubtest.User{Login: "octocat"}, "done")

	threads := fake.Threads("o", "r", 1)
	if len(threads) != 2 || len(threads[0].Comments) != 2 || len(threads[1].Comments) != 2 || threads[1].Comments[1].ID != person {
		t.Fatalf("threads = %+v", threads)
	}
	if fake.ThreadOf("o", "r", 1, replyID) != threads[0].ID {
		t.Error("ThreadOf(reply) is not the first thread")
	}
	if !fake.ResolveThread("o", "r", 1, threads[1].ID, "octocat") {
		t.Fatal("ResolveThread found no thread")
	}

	var q threadsQuery
	vars := map[string]any{"owner": githubv4.String("o"), "name": githubv4.String("r"), "number": githubv4.Int(1),
		"first": githubv4.Int(1), "n": githubv4.Int(1), "cursor": (*githubv4.String)(nil)}
	if err := fake.V4Client().Query(t.Context(), &q, vars); err != nil {
		t.Fatal(err)
	}
	rt := q.Repository.PullRequest.ReviewThreads
	if rt.TotalCount != 2 || len(rt.Nodes) != 1 || !rt.PageInfo.HasNextPage || rt.Nodes[0].IsResolved || rt.Nodes[0].ResolvedBy != nil {
		t.Fatalf("first page = %+v", rt)
	}
	c := rt.Nodes[0].Comments.Nodes
	if len(c) != 1 || c[0].FullDatabaseID != fmt.Sprint(ids[0]) || c[0].Author.Typename != "Bot" || c[0].Author.Login != "mergeguard" {
		t.Errorf("first comment = %+v (GraphQL names a bot without [bot])", c)
	}
	vars["cursor"] = githubv4.NewString(rt.PageInfo.EndCursor)
	if err := fake.V4Client().Query(t.Context(), &q, vars); err != nil {
		t.Fatal(err)
	}
	rt = q.Repository.PullRequest.ReviewThreads
	if len(rt.Nodes) != 1 || rt.PageInfo.HasNextPage || !rt.Nodes[0].IsResolved || rt.Nodes[0].ResolvedBy == nil || rt.Nodes[0].ResolvedBy.Login != "octocat" {
		t.Errorf("second page = %+v", rt)
	}
	vars["first"] = githubv4.Int(101)
	err := fake.V4Client().Query(t.Context(), &q, vars)
	if err == nil || !strings.Contains(err.Error(), "exceeds the `first` limit of 100 records") {
		t.Errorf("first: 101: %v", err)
	}
	vars["first"], vars["number"] = githubv4.Int(10), githubv4.Int(2)
	err = fake.V4Client().Query(t.Context(), &q, vars)
	if err == nil || !strings.Contains(err.Error(), "Could not resolve to a PullRequest with the number of 2.") {
		t.Errorf("unknown pull request: %v", err)
	}
}

func TestResolveReviewThreadMutations(t *testing.T) {
	fake, pr := smallPR(t)
	reviewed(t, fake, pr)
	id := fake.Threads("o", "r", 1)[0].ID
	type thread struct {
		ID         string
		IsResolved bool
	}
	var resolve struct {
		ResolveReviewThread struct{ Thread thread } `graphql:"resolveReviewThread(input: $input)"`
	}
	if err := fake.V4Client().Mutate(t.Context(), &resolve, githubv4.ResolveReviewThreadInput{ThreadID: githubv4.ID(id)}, nil); err != nil {
		t.Fatal(err)
	}
	if !resolve.ResolveReviewThread.Thread.IsResolved || !fake.Threads("o", "r", 1)[0].Resolved || fake.Threads("o", "r", 1)[0].ResolvedBy != "" {
		t.Errorf("after resolve: %+v, %+v", resolve, fake.Threads("o", "r", 1)[0])
	}
	var unresolve struct {
		UnresolveReviewThread struct{ Thread thread } `graphql:"unresolveReviewThread(input: $input)"`
	}
	if err := fake.V4Client().Mutate(t.Context(), &unresolve, githubv4.UnresolveReviewThreadInput{ThreadID: githubv4.ID(id)}, nil); err != nil {
		t.Fatal(err)
	}
	if unresolve.UnresolveReviewThread.Thread.IsResolved || fake.Threads("o", "r", 1)[0].Resolved {
		t.Errorf("after unresolve: %+v", unresolve)
	}
	err := fake.V4Client().Mutate(t.Context(), &resolve, githubv4.ResolveReviewThreadInput{ThreadID: "PRRT_unknown"}, nil)
	if err == nil || err.Error() != "Could not resolve to a node with the global id of 'PRRT_unknown'" {
		t.Errorf("unknown thread: %v", err)
	}
}

func TestThreadsGoOutdated(t *testing.T) {
	fake, pr := smallPR(t)
	reviewed(t, fake, pr)
	if th := fake.Threads("o", "r", 1); th[0].Outdated || th[1].Outdated {
		t.Fatalf("fresh threads outdated: %+v", th)
	}
	fake.ForcePush("o", "r", 1, map[string]string{"main.go": "package main\n", "README.md": "one line\n"}, "shorter")
	if th := fake.Threads("o", "r", 1); !th[0].Outdated || !th[1].Outdated {
		t.Errorf("threads on lines that left the diff are not outdated: %+v", th)
	}
}

func TestThreadEventPayload(t *testing.T) {
	fake, pr := smallPR(t)
	ids := reviewed(t, fake, pr)
	id := fake.ThreadOf("o", "r", 1, ids[0])
	fake.ResolveThread("o", "r", 1, id, "alice")
	var e struct {
		Action      string `json:"action"`
		PullRequest struct {
			Number int `json:"number"`
		} `json:"pull_request"`
		Thread struct {
			NodeID   string `json:"node_id"`
			Comments []struct {
				ID   int64  `json:"id"`
				Body string `json:"body"`
				User struct {
					Login, Type string
				} `json:"user"`
			} `json:"comments"`
		} `json:"thread"`
		Repository struct {
			FullName string `json:"full_name"`
		} `json:"repository"`
		Installation struct {
			ID int64 `json:"id"`
		} `json:"installation"`
		Sender struct {
			Login string `json:"login"`
		} `json:"sender"`
	}
	if err := json.Unmarshal(fake.ThreadEvent("o", "r", 1, id, "resolved", "alice", 77), &e); err != nil {
		t.Fatal(err)
	}
	c := e.Thread.Comments
	if e.Action != "resolved" || e.PullRequest.Number != 1 || e.Thread.NodeID != id || len(c) != 1 || c[0].ID != ids[0] ||
		c[0].User.Login != "mergeguard[bot]" || c[0].User.Type != "Bot" || !strings.HasSuffix(c[0].Body, "<!-- mergeguard:fp=fp-1 -->") ||
		e.Repository.FullName != "o/r" || e.Installation.ID != 77 || e.Sender.Login != "alice" {
		t.Errorf("payload = %+v", e)
	}
}
