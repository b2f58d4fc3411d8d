package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/task"
)

// prepareCase is one review prepared over fakes, and what it must leave.
type prepareCase struct {
	asked bool
	gh    fakeGitHub
	st    fakeStore

	wantErr     error
	reason      string // the full-review reason, "" for incremental
	since       *task.Since
	followUp    bool
	applied     []review.ThreadChange
	changed     bool
	resolved    map[string]bool
	dismissed   []string
	agreements  []string
	posted      []posted
	problems    int
	ledgerReads int
}

// TestPrepare: a review starts from the ledger healed from GitHub (a
// writer's resolution dismisses, anyone else's only teaches the thread's
// id, an unresolved thread reopens what a resolution dismissed, a writer's
// 👎 dismisses and is acknowledged, a 👍 is agreement, the bot's own acts
// and other bots' reactions count for nothing) and from every reason a
// review is full, or what changed since the last reviewed head; what
// cannot be read is a problem, not a failure, unless a retry may read it.
func TestPrepare(t *testing.T) {
	t.Parallel()
	open := review.LedgerEntry{Finding: review.Finding{Fingerprint: "fp1"}, State: review.FindingOpen, CommentID: 10}
	known := open
	known.ThreadID = "T10"
	dismissed := known
	dismissed.State, dismissed.StateHow = review.FindingDismissed, review.DismissedThreadResolved
	reviewed := review.LastReview{Found: true, Succeeded: true, KeptLedger: true, HeadSHA: "h0", BaseSHA: "b1", ConfigDigest: "cfg"}
	ahead := review.Comparison{Status: review.CompareAhead, AheadBy: 2, Diff: "diff"}
	broken := errors.New("broken")
	transient := errors.New("502")
	thread := func(resolved bool, by string) []review.ReviewThread {
		return []review.ReviewThread{{ID: "T10", CommentID: 10, Resolved: resolved, ResolvedBy: by}, {ID: "T99", CommentID: 99}}
	}
	gh := func(f func(*fakeGitHub)) fakeGitHub {
		g := fakeGitHub{LoginValue: "mergeguard[bot]", CanWriteValue: map[string]bool{"ann": true}, CompareValue: ahead}
		f(&g)
		return g
	}
	none := func(*fakeGitHub) {}
	tests := map[string]prepareCase{
		"a first review: full, nothing read of GitHub": {gh: gh(none), reason: ReasonFirst, ledgerReads: 1},
		"asked for a full review": {asked: true, gh: gh(none), st: fakeStore{LastReviewValue: reviewed},
			reason: ReasonAsked, followUp: true, ledgerReads: 1},
		"only new commits: incremental": {gh: gh(none), st: fakeStore{LastReviewValue: reviewed}, followUp: true, ledgerReads: 1,
			since: &task.Since{SHA: "h0", Commits: 2, Diff: "diff", ConfigDigest: "cfg"}},
		"rewritten: full": {gh: gh(func(g *fakeGitHub) { g.CompareError = fmt.Errorf("compare: %w", review.ErrNotFound) }),
			st: fakeStore{LastReviewValue: reviewed}, reason: ReasonRewritten, followUp: true, ledgerReads: 1},
		"not comparable: full, a problem": {gh: gh(func(g *fakeGitHub) { g.CompareError = broken }),
			st: fakeStore{LastReviewValue: reviewed}, reason: ReasonCompareErr, followUp: true, problems: 1, ledgerReads: 1},
		"a comparison a retry may make: the attempt fails": {gh: gh(func(g *fakeGitHub) { g.CompareError = transient }),
			st: fakeStore{LastReviewValue: reviewed}, wantErr: transient},
		"the ledger cannot be read: fails":      {gh: gh(none), st: fakeStore{LedgerError: broken}, wantErr: broken},
		"the last review cannot be read: fails": {gh: gh(none), st: fakeStore{LastReviewError: broken}, wantErr: broken},
		"a writer resolved the thread: dismissed, read back": {
			gh: gh(func(g *fakeGitHub) { g.ThreadsValue = thread(true, "ann") }), st: fakeStore{LedgerValue: []review.LedgerEntry{open}, ApplyThreadValue: true},
			reason: ReasonFirst, applied: []review.ThreadChange{{ThreadID: "T10", CommentID: 10, Resolved: true, By: "ann"}}, changed: true,
			resolved: map[string]bool{"T10": true, "T99": false}, ledgerReads: 2},
		"the author without write access resolved it: only the id is learned": {
			gh: gh(func(g *fakeGitHub) { g.ThreadsValue = thread(true, "bob") }), st: fakeStore{LedgerValue: []review.LedgerEntry{open}},
			reason: ReasonFirst, applied: []review.ThreadChange{{ThreadID: "T10", CommentID: 10, By: "bob"}},
			resolved: map[string]bool{"T10": true, "T99": false}, problems: 1, ledgerReads: 2},
		"write access cannot be checked: dismisses nothing this time": {
			gh: gh(func(g *fakeGitHub) { g.ThreadsValue = thread(true, "ann"); g.CanWriteError = broken }), st: fakeStore{LedgerValue: []review.LedgerEntry{open}},
			reason: ReasonFirst, applied: []review.ThreadChange{{ThreadID: "T10", CommentID: 10, By: "ann"}},
			resolved: map[string]bool{"T10": true, "T99": false}, problems: 2, ledgerReads: 2},
		"MergeGuard resolved it as fixed: nothing to apply": {
			gh: gh(func(g *fakeGitHub) { g.ThreadsValue = thread(true, "mergeguard[bot]") }), st: fakeStore{LedgerValue: []review.LedgerEntry{known}},
			reason: ReasonFirst, resolved: map[string]bool{"T10": true, "T99": false}, ledgerReads: 1},
		"the ledger already says so: nothing to apply": {
			gh: gh(func(g *fakeGitHub) { g.ThreadsValue = thread(false, "") }), st: fakeStore{LedgerValue: []review.LedgerEntry{known}},
			reason: ReasonFirst, resolved: map[string]bool{"T10": false, "T99": false}, ledgerReads: 1},
		"unresolved after a resolution dismissed it: reopened": {
			gh: gh(func(g *fakeGitHub) { g.ThreadsValue = thread(false, "") }), st: fakeStore{LedgerValue: []review.LedgerEntry{dismissed}, ApplyThreadValue: true},
			reason: ReasonFirst, applied: []review.ThreadChange{{ThreadID: "T10", CommentID: 10}}, changed: true,
			resolved: map[string]bool{"T10": false, "T99": false}, ledgerReads: 2},
		"threads cannot be read: the ledger as the deliveries left it": {
			gh: gh(func(g *fakeGitHub) { g.ThreadsError = broken }), st: fakeStore{LedgerValue: []review.LedgerEntry{open}},
			reason: ReasonFirst, problems: 1, ledgerReads: 1},
		"applying a thread fails: fails": {
			gh: gh(func(g *fakeGitHub) { g.ThreadsValue = thread(true, "ann") }), st: fakeStore{LedgerValue: []review.LedgerEntry{open}, ApplyThreadError: broken},
			wantErr: broken},
		"reactions: a writer's 👎 dismisses and is acknowledged, a 👍 agrees, bots and readers count for nothing": {
			gh: gh(func(g *fakeGitHub) {
				g.ThreadsValue = thread(false, "")
				g.CanWriteValue["dependabot[bot]"] = true
				g.ReactionsValue = map[int64][]review.Reaction{10: {{Login: "mergeguard[bot]", Content: "-1"}, {Login: "dependabot[bot]", Content: "-1"}, {Login: "renovate[bot]", Content: "+1"},
					{Login: "bob", Content: "-1"}, {Login: "carl", Content: "+1"}, {Login: "ann", Content: "-1"}, {Login: "ann", Content: "-1"}}}
			}),
			st:     fakeStore{LedgerValue: []review.LedgerEntry{known}, DismissFindingValue: true},
			reason: ReasonFirst, changed: true, resolved: map[string]bool{"T10": false, "T99": false}, ledgerReads: 2,
			dismissed: []string{"fp1 by ann " + review.DismissedFeedback}, agreements: []string{"fp1 by carl"},
			posted: []posted{{To: 10, Body: "Dismissed after a 👎 from ann: MergeGuard will not raise it again on this pull request."}}},
		"reactions cannot be read: a problem": {
			gh: gh(func(g *fakeGitHub) { g.ThreadsValue = thread(false, ""); g.ReactionsError = broken }), st: fakeStore{LedgerValue: []review.LedgerEntry{known}},
			reason: ReasonFirst, resolved: map[string]bool{"T10": false, "T99": false}, problems: 1, ledgerReads: 1},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			tt.checkPrepare(t)
		})
	}
}

func (tt *prepareCase) checkPrepare(t *testing.T) {
	t.Helper()
	uc := Preparing{Ledger: &tt.st, Conversation: &tt.gh, People: &tt.gh, Commits: &tt.gh,
		Retry: func(err error) bool { return err.Error() == "502" }}
	got, err := uc.Prepare(context.Background(), PullRequest{Repository: "o/r", Number: 7}, "run1", Head{SHA: "h1", BaseSHA: "b1"}, tt.asked)
	if !errors.Is(err, tt.wantErr) {
		t.Fatalf("Prepare error = %v, want %v", err, tt.wantErr)
	}
	if err != nil {
		return
	}
	if len(got.Problems) != tt.problems {
		t.Errorf("problems %v, want %d", got.Problems, tt.problems)
	}
	checkAll(t,
		want{"full-review reason", got.History.FullReason, tt.reason}, want{"since", got.History.Since, tt.since},
		want{"follow-up", got.FollowUp, tt.followUp}, want{"threads applied", tt.st.Applied, tt.applied},
		want{"ledger changed", got.Applied, tt.changed}, want{"resolved threads", got.Resolved, tt.resolved},
		want{"dismissed", tt.st.Dismissed, tt.dismissed}, want{"agreements", tt.st.Agreements, tt.agreements},
		want{"posted", tt.gh.Posted, tt.posted}, want{"ledger reads", tt.st.LedgerReads, tt.ledgerReads},
	)
}

// TestWriteAccessAskedOnce: whether a person may write is asked of GitHub
// once per review, however many of their acts it weighs.
func TestWriteAccessAskedOnce(t *testing.T) {
	t.Parallel()
	a := review.LedgerEntry{Finding: review.Finding{Fingerprint: "a"}, State: review.FindingOpen, CommentID: 10}
	b := review.LedgerEntry{Finding: review.Finding{Fingerprint: "b"}, State: review.FindingOpen, CommentID: 20}
	gh := &fakeGitHub{CanWriteValue: map[string]bool{}, ThreadsValue: []review.ReviewThread{
		{ID: "T10", CommentID: 10, Resolved: true, ResolvedBy: "bob"}, {ID: "T20", CommentID: 20, Resolved: true, ResolvedBy: "bob"}},
		ReactionsValue: map[int64][]review.Reaction{10: {{Login: "bob", Content: "-1"}}}}
	st := &fakeStore{LedgerValue: []review.LedgerEntry{a, b}}
	uc := Preparing{Ledger: st, Conversation: gh, People: gh, Commits: gh}
	if _, err := uc.Prepare(context.Background(), PullRequest{Repository: "o/r", Number: 7}, "run1", Head{SHA: "h1"}, false); err != nil {
		t.Fatal(err)
	}
	if gh.CanWriteCalls != 1 {
		t.Errorf("write access asked %d times, want once", gh.CanWriteCalls)
	}
}

// TestFollowUp: a posted review resolves its fixed findings' threads with
// one reply naming the commit, never twice; it answers once in an exposed
// secret's thread; failures are counted and told, not fatal.
func TestFollowUp(t *testing.T) {
	t.Parallel()
	fixed := review.LedgerEntry{Finding: review.Finding{Fingerprint: "f"}, State: review.FindingFixed, FixedSHA: "abcdef1234", CommentID: 10, ThreadID: "T10"}
	noComment := review.LedgerEntry{Finding: review.Finding{Fingerprint: "g"}, State: review.FindingFixed, ThreadID: "T11"}
	noThread := review.LedgerEntry{Finding: review.Finding{Fingerprint: "h"}, State: review.FindingFixed, CommentID: 12}
	exposed := review.LedgerEntry{Finding: review.Finding{Fingerprint: "x"}, State: review.FindingExposed, FirstSeenSHA: "0123456789", CommentID: 20}
	warned := exposed
	warned.StateHow = review.ExposedWarning
	tests := map[string]struct {
		fixed, exposed []review.LedgerEntry
		resolvedBefore map[string]bool
		gh             fakeGitHub
		posted         []posted
		resolved       []string
		unresolved     int
		problems       int
	}{
		"fixed: one reply, resolved": {fixed: []review.LedgerEntry{fixed, noComment, noThread},
			posted: []posted{{To: 10, Body: "Fixed in abcdef1."}}, resolved: []string{"T10", "T11"}},
		"resolved by an earlier attempt: left alone": {fixed: []review.LedgerEntry{fixed}, resolvedBefore: map[string]bool{"T10": true}},
		"the thread cannot be resolved: counted": {fixed: []review.LedgerEntry{fixed}, gh: fakeGitHub{ResolveThreadError: errors.New("403")},
			posted: []posted{{To: 10, Body: "Fixed in abcdef1."}}, unresolved: 1, problems: 1},
		"exposed: answered once": {exposed: []review.LedgerEntry{exposed, warned},
			posted: []posted{{To: 20, Body: ExposedReply(exposed)}, {To: 20, Body: ExposedReply(warned)}}},
		"exposed, answered before: not again": {exposed: []review.LedgerEntry{exposed},
			gh: fakeGitHub{ThreadMessagesValue: []review.ThreadMessage{{Bot: true, Body: ExposedReply(exposed)}}}},
		"exposed, the thread cannot be read: answered": {exposed: []review.LedgerEntry{exposed},
			gh: fakeGitHub{ThreadMessagesError: errors.New("502")}, posted: []posted{{To: 20, Body: ExposedReply(exposed)}}, problems: 1},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := FollowUp(context.Background(), &tt.gh, PullRequest{Repository: "o/r", Number: 7}, tt.fixed, tt.exposed, tt.resolvedBefore)
			if f.Unresolved != tt.unresolved || len(f.Problems) != tt.problems {
				t.Errorf("followed up %+v, want %d unresolved, %d problems", f, tt.unresolved, tt.problems)
			}
			if diff := cmp.Diff(tt.posted, tt.gh.Posted); diff != "" {
				t.Errorf("posted (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.resolved, tt.gh.Resolved); diff != "" {
				t.Errorf("resolved (-want +got):\n%s", diff)
			}
		})
	}
	if got := ExposedReply(warned); got == ExposedReply(exposed) {
		t.Errorf("a secret under secrets.removed: warn is told it blocks: %q", got)
	}
}
