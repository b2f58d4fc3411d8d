package webhook_test

import (
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mergeguard/mergeguard/github/githubtest"
	"github.com/mergeguard/mergeguard/server/store"
)

// openedHead is the head of pull_request/opened.payload.json.
const openedHead = "ec26c3e57ca3a959ca5aad62de7213c562f8c821"

func TestDeliveryIDIsRequired(t *testing.T) {
	t.Parallel() // each test has its own database and fakes
	in := newIntake(t)
	opened := githubtest.Payload(t, "pull_request/opened.payload.json")
	tests := []struct {
		name string
		id   string
	}{
		{"missing", ""},
		{"longer than any GitHub delivery id", strings.Repeat("a", 200)},
		{"space", "a b"},
		{"not ASCII", "d\xc3\xa9livery"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := githubtest.Delivery{Event: "pull_request", ID: "placeholder", Payload: opened}.Request(t.Context(), in.url, in.secret)
			if err != nil {
				t.Fatal(err)
			}
			req.Header["X-Github-Delivery"] = []string{tt.id}
			if tt.id == "" {
				req.Header.Del("X-GitHub-Delivery")
			}
			if got := in.do(req); got != http.StatusBadRequest {
				t.Errorf("status %d, want 400", got)
			}
		})
	}
	if n := in.count("webhook_deliveries", "true"); n != 0 {
		t.Errorf("%d deliveries stored, want 0", n)
	}
	if n := in.count("review_runs", "true"); n != 0 {
		t.Errorf("%d runs queued, want 0", n)
	}
}

// TestReplayUnderANewDeliveryID: a signed pull_request body sent again
// under another delivery id (an attacker replaying a captured delivery, or
// an operator redelivering by hand) is recorded as a duplicate and queues
// nothing, even when the first review is long finished.
func TestReplayUnderANewDeliveryID(t *testing.T) {
	t.Parallel() // each test has its own database and fakes
	in := newIntake(t)
	opened := githubtest.Payload(t, "pull_request/opened.payload.json")
	newHead := githubtest.SetFields(t, opened, map[string]any{"pull_request.head.sha": "2222222222222222222222222222222222222222"})
	otherPR := githubtest.SetFields(t, opened, map[string]any{"number": 3, "pull_request.number": 3})
	reopened := githubtest.Payload(t, "pull_request/reopened.payload.json")
	finish := func() {
		t.Helper()
		run, err := in.store.ClaimRun(t.Context(), "w", time.Minute)
		if err != nil || run == nil {
			t.Fatalf("claim: %v, %v", run, err)
		}
		if err := in.store.FinishRun(t.Context(), run.ID, "w", store.Result{Status: store.StatusSucceeded}); err != nil {
			t.Fatal(err)
		}
	}
	steps := []struct {
		name    string
		id      string
		payload []byte
		before  func()
		outcome string
		runs    int // runs queued by the deliveries so far
	}{
		{"first delivery", "d-1", opened, nil, "queued", 1},
		{"replay while the run is queued", "d-2", opened, nil, "duplicate", 1},
		{"replay after the review finished", "d-3", opened, finish, "duplicate", 1},
		{"a new head", "d-4", newHead, nil, "queued", 2},
		{"another pull request", "d-5", otherPR, nil, "queued", 3},
		{"another action on the same head", "d-6", reopened, nil, "queued", 4},
		{"replay of the new head", "d-7", newHead, nil, "duplicate", 4},
	}
	for _, step := range steps {
		if step.before != nil {
			step.before()
		}
		if got := in.send(githubtest.Delivery{Event: "pull_request", ID: step.id, Payload: step.payload}); got != http.StatusOK {
			t.Fatalf("%s: status %d, want 200", step.name, got)
		}
		if got := in.delivery(step.id).Outcome; got != step.outcome {
			t.Errorf("%s: outcome %q, want %q", step.name, got, step.outcome)
		}
		if n := in.count("review_runs", "true"); n != step.runs {
			t.Errorf("%s: %d runs, want %d", step.name, n, step.runs)
		}
	}
}

// TestReplayIsDeduplicatedUnderConcurrency: the same body sent at once
// under ten delivery ids (to several replicas) queues one run.
func TestReplayIsDeduplicatedUnderConcurrency(t *testing.T) {
	t.Parallel() // each test has its own database and fakes
	in := newIntake(t)
	opened := githubtest.Payload(t, "pull_request/opened.payload.json")
	done := make(chan int)
	for i := range 10 {
		go func() {
			req, err := githubtest.Delivery{Event: "pull_request", ID: fmt.Sprintf("d-%d", i), Payload: opened}.Request(t.Context(), in.url, in.secret)
			if err != nil {
				done <- 0
				return
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				done <- 0
				return
			}
			resp.Body.Close()
			done <- resp.StatusCode
		}()
	}
	for range 10 {
		if got := <-done; got != http.StatusOK {
			t.Errorf("status %d, want 200", got)
		}
	}
	if n := in.count("review_runs", "true"); n != 1 {
		t.Errorf("%d runs, want 1", n)
	}
	if n := in.count("webhook_deliveries", "outcome = 'duplicate'"); n != 9 {
		t.Errorf("%d deliveries recorded as duplicates, want 9", n)
	}
}

// commandPR adds Codertocat/Hello-World#number to the fake at head
// openedHead, with alice a writer, and returns alice.
func (in *intake) commandPR(numbers ...int) githubtest.User {
	in.t.Helper()
	for _, n := range numbers {
		in.gh.AddPR(githubtest.PR{Owner: "Codertocat", Repo: "Hello-World", Number: n, HeadSHA: openedHead,
			Base: map[string]string{"README.md": "Hello\n"}, Head: map[string]string{"README.md": "Hello World\n"}, Diff: smallDiff})
	}
	in.gh.SetPermission("Codertocat", "Hello-World", "alice", "write")
	return githubtest.User{Login: "alice", ID: 11, Type: "User"}
}

// answers is what the bot did on GitHub: reactions and replies (the
// comments after the first n, which are the commands themselves).
type answers struct {
	Reactions map[string]int
	Replies   []string
}

func (in *intake) answers(number int) answers {
	in.t.Helper()
	a := answers{Reactions: map[string]int{}}
	for _, r := range in.gh.Reactions("Codertocat", "Hello-World") {
		a.Reactions[r.Content]++
	}
	for _, c := range in.gh.IssueComments("Codertocat", "Hello-World", number) {
		if !strings.HasPrefix(c.Body, "/mergeguard") {
			a.Replies = append(a.Replies, c.Body)
		}
	}
	return a
}

// outcomes counts the recorded deliveries by outcome.
func (in *intake) outcomes() map[string]int {
	in.t.Helper()
	rows, err := in.raw.Query(in.t.Context(), `SELECT outcome, count(*) FROM webhook_deliveries GROUP BY outcome`)
	if err != nil {
		in.t.Fatal(err)
	}
	defer rows.Close()
	got := map[string]int{}
	for rows.Next() {
		var (
			o string
			n int
		)
		if err := rows.Scan(&o, &n); err != nil {
			in.t.Fatal(err)
		}
		got[o] = n
	}
	return got
}

const (
	queuedReply  = "A review of head `ec26c3e` is already queued; this command adds nothing."
	runningReply = "A review of head `ec26c3e` is already running; this command adds nothing."
	prLimitReply = "Too many MergeGuard commands on this pull request: at most 5 every 10 minutes. " +
		"This command and the next ones are ignored until the oldest is 10 minutes old."
	userLimitReply = "Too many MergeGuard commands from @alice: at most 10 every 10 minutes. " +
		"This command and the next ones are ignored until the oldest is 10 minutes old."
	closedReply = "This pull request is closed: MergeGuard reviews open pull requests only."
)

// TestRerunFloodIsCoalescedAndRateLimited: a hundred /mergeguard rerun
// comments on one pull request queue one review; the next commands are
// answered that the review is queued, up to the per pull request limit;
// the first command over the limit is answered once, the rest get nothing.
func TestRerunFloodIsCoalescedAndRateLimited(t *testing.T) {
	t.Parallel() // each test has its own database and fakes
	in := newIntake(t)
	alice := in.commandPR(2)
	// The flood arrives eight at a time, as GitHub delivers a burst of
	// comments: the counts must hold under concurrent deliveries.
	reqs := make(chan *http.Request, 100)
	for i := range 100 {
		req, err := in.commentOn(fmt.Sprintf("c-%d", i), alice, "/mergeguard rerun").Request(t.Context(), in.url, in.secret)
		if err != nil {
			t.Fatal(err)
		}
		reqs <- req
	}
	close(reqs)
	var senders sync.WaitGroup
	for range 8 {
		senders.Go(func() {
			for req := range reqs {
				if got, err := deliver(req); err != nil || got != http.StatusOK {
					t.Errorf("%s: status %d (%v), want 200", req.Header.Get("X-GitHub-Delivery"), got, err)
				}
			}
		})
	}
	senders.Wait()
	if n := in.count("review_runs", "true"); n != 1 {
		t.Errorf("%d runs, want 1", n)
	}
	wantOutcomes := map[string]int{"queued": 1, "coalesced": store.MaxCommandsPerPR - 1, "rate_limited": 100 - store.MaxCommandsPerPR}
	if diff := cmp.Diff(wantOutcomes, in.outcomes()); diff != "" {
		t.Errorf("outcomes (-want +got):\n%s", diff)
	}
	want := answers{Reactions: map[string]int{"eyes": store.MaxCommandsPerPR}}
	for range store.MaxCommandsPerPR - 1 {
		want.Replies = append(want.Replies, queuedReply)
	}
	want.Replies = append(want.Replies, prLimitReply)
	got := in.answers(2)
	slices.Sort(got.Replies) // concurrent deliveries reply in any order
	slices.Sort(want.Replies)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("answers (-want +got):\n%s", diff)
	}
}

// TestUserRateLimit: one user's commands count on every pull request.
func TestUserRateLimit(t *testing.T) {
	t.Parallel() // each test has its own database and fakes
	in := newIntake(t)
	alice := in.commandPR(2, 3, 4)
	n := 0
	for _, pr := range []int{2, 3, 4} {
		for range store.MaxCommandsPerPR - 1 {
			n++
			if got := in.send(in.commentOnPR(fmt.Sprintf("c-%d", n), pr, alice, "/mergeguard help", nil)); got != http.StatusOK {
				t.Fatalf("comment %d: status %d, want 200", n, got)
			}
		}
	}
	over := n - store.MaxCommandsPerUser
	wantOutcomes := map[string]int{"replied": store.MaxCommandsPerUser, "rate_limited": over}
	if diff := cmp.Diff(wantOutcomes, in.outcomes()); diff != "" {
		t.Errorf("outcomes (-want +got):\n%s", diff)
	}
	replies := 0
	for _, pr := range []int{2, 3, 4} {
		for _, r := range in.answers(pr).Replies {
			if r == userLimitReply {
				replies++
			}
		}
	}
	if replies != 1 {
		t.Errorf("%d replies about the user's limit, want 1 (%d commands over it)", replies, over)
	}
	// Another writer is not held back by alice's limit.
	in.gh.SetPermission("Codertocat", "Hello-World", "carol", "write")
	carol := githubtest.User{Login: "carol", ID: 14, Type: "User"}
	if got := in.send(in.commentOnPR("c-carol", 4, carol, "/mergeguard help", nil)); got != http.StatusOK {
		t.Fatalf("status %d", got)
	}
	if got := in.delivery("c-carol").Outcome; got != "replied" {
		t.Errorf("carol's command: outcome %q, want replied", got)
	}
}

// TestRerunCoalescing: a rerun of a head whose review is already queued or
// running adds no run; one of another head, or while an automatic review
// of the head is running, queues one.
func TestRerunCoalescing(t *testing.T) {
	t.Parallel() // each test has its own database and fakes
	olderHead := githubtest.SetFields(t, githubtest.Payload(t, "pull_request/opened.payload.json"),
		map[string]any{"pull_request.head.sha": "1111111111111111111111111111111111111111"})
	type result struct {
		Outcome string
		Runs    int
		// Active are the queued and running runs, "status trigger".
		Active  []string
		Replies []string
	}
	tests := []struct {
		name  string
		setup func(in *intake, alice githubtest.User)
		want  result
	}{
		{"nothing queued", nil, result{"queued", 1, []string{"queued command"}, nil}},
		{"automatic review of the head queued", func(in *intake, _ githubtest.User) {
			in.send(githubtest.Delivery{Event: "pull_request", ID: "open", Payload: githubtest.Payload(in.t, "pull_request/opened.payload.json")})
		}, result{"coalesced", 1, []string{"queued command"}, []string{queuedReply}}},
		{"requested review of the head running", func(in *intake, alice githubtest.User) {
			in.send(in.commentOn("first", alice, "/mergeguard rerun"))
			in.claim()
		}, result{"coalesced", 1, []string{"running command"}, []string{runningReply}}},
		{"automatic review of the head running", func(in *intake, _ githubtest.User) {
			in.send(githubtest.Delivery{Event: "pull_request", ID: "open", Payload: githubtest.Payload(in.t, "pull_request/opened.payload.json")})
			in.claim()
		}, result{"queued", 2, []string{"queued command", "running webhook"}, nil}},
		{"review of an older head queued", func(in *intake, _ githubtest.User) {
			in.send(githubtest.Delivery{Event: "pull_request", ID: "open", Payload: olderHead})
		}, result{"queued", 2, []string{"queued command"}, nil}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			in := newIntake(t)
			alice := in.commandPR(2)
			if tt.setup != nil {
				tt.setup(in, alice)
			}
			if got := in.send(in.commentOn("c-1", alice, "/mergeguard rerun")); got != http.StatusOK {
				t.Fatalf("status %d, want 200", got)
			}
			got := result{Outcome: in.delivery("c-1").Outcome, Runs: in.count("review_runs", "true"), Replies: in.answers(2).Replies}
			for _, r := range in.runs() {
				if !r.Status.Final() {
					got.Active = append(got.Active, string(r.Status)+" "+string(r.Trigger))
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// claim takes the next run as worker "w".
func (in *intake) claim() {
	in.t.Helper()
	run, err := in.store.ClaimRun(in.t.Context(), "w", time.Minute)
	if err != nil || run == nil {
		in.t.Fatalf("claim: %v, %v", run, err)
	}
}

// TestReviewOfAClosedPullRequest: rerun and review on a closed pull
// request are answered that it is closed, and review nothing.
func TestReviewOfAClosedPullRequest(t *testing.T) {
	t.Parallel() // each test has its own database and fakes
	for _, command := range []string{"/mergeguard rerun", "/mergeguard review"} {
		t.Run(command, func(t *testing.T) {
			t.Parallel()
			in := newIntake(t)
			alice := in.commandPR(2)
			d := in.commentOnPR("c-1", 2, alice, command, map[string]any{"issue.state": "closed"})
			if got := in.send(d); got != http.StatusOK {
				t.Fatalf("status %d, want 200", got)
			}
			if n := in.count("review_runs", "true"); n != 0 {
				t.Errorf("%d runs, want 0", n)
			}
			if got := in.delivery("c-1").Outcome; got != "replied" {
				t.Errorf("outcome %q, want replied", got)
			}
			if diff := cmp.Diff([]string{closedReply}, in.answers(2).Replies); diff != "" {
				t.Errorf("replies (-want +got):\n%s", diff)
			}
			if n := in.gh.CallCount(githubtest.RoutePull); n != 0 {
				t.Errorf("%d pull request reads, want 0", n)
			}
		})
	}
}

// TestCommandInAnHTMLComment: a command GitHub does not show (inside an
// HTML comment) does nothing.
func TestCommandInAnHTMLComment(t *testing.T) {
	t.Parallel() // each test has its own database and fakes
	in := newIntake(t)
	alice := in.commandPR(2)
	body := "Thanks!\n<!--\n/mergeguard rerun\n-->\n"
	if got := in.send(in.commentOn("c-1", alice, body)); got != http.StatusOK {
		t.Fatalf("status %d, want 200", got)
	}
	if got := in.delivery("c-1").Outcome; got != "ignored" {
		t.Errorf("outcome %q, want ignored", got)
	}
	if n := in.count("review_runs", "true"); n != 0 {
		t.Errorf("%d runs, want 0", n)
	}
}

// deliver sends a delivery from any goroutine: its status, or the error
// of a request that got no answer.
func deliver(req *http.Request) (int, error) {
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, err
}
