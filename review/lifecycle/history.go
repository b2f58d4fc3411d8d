package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/task"
)

// This file is what a review of a pull request starts from
// (docs/architecture.md, The life of a pull request): the finding ledger,
// healed from what people did to MergeGuard's threads and comments on
// GitHub since (a missed delivery heals here), and whether the new head
// only adds commits to the last reviewed one, or why the review is full.

// Ledger is the pull request's finding ledger and its last review, as the
// store keeps them.
type Ledger interface {
	Findings
	// ApplyThread records a thread's state: a thread resolved by a person
	// dismisses an open entry, one unresolved reopens an entry its
	// resolution dismissed; changed is false when the entry said so.
	ApplyThread(ctx context.Context, repo string, number int, t review.ThreadChange) (changed bool, err error)
	DismissFinding(ctx context.Context, repo string, number int, fingerprint, by, how string) (bool, error)
	RecordAgreement(ctx context.Context, repo string, number int, fingerprint, login string) error
	// LastReview is what the pull request's last review other than run
	// except left; the zero LastReview when it was never reviewed.
	LastReview(ctx context.Context, repo string, number int, except string) (review.LastReview, error)
}

// People are who acts on MergeGuard's comments on GitHub.
type People interface {
	// Login is the App's bot account.
	Login() string
	// CanWrite reports whether user may push to the repository.
	CanWrite(ctx context.Context, user string) (bool, error)
	Reactions(ctx context.Context, commentID int64) ([]review.Reaction, error)
}

// Commits compares two commits on GitHub.
type Commits interface {
	Compare(ctx context.Context, base, head string) (review.Comparison, error)
}

// Preparing is the use case of preparing a pull request's review, with
// the roles it needs.
type Preparing struct {
	Ledger       Ledger
	Conversation Conversation
	People       People
	Commits      Commits
	// Retry reports whether a failure to compare may pass when the run
	// is tried again: then it fails the attempt instead of making the
	// review full.
	Retry func(error) bool
	// Memory is the repository's memory of dismissals, MemoryLimit how
	// many of its most recent dismissals a review reads (memory.dismissals);
	// nil or 0 suppresses nothing.
	Memory      Memory
	MemoryLimit int
}

// Prepared is what a review of a pull request starts from.
type Prepared struct {
	// History is the pipeline's: the ledger, and what changed since the
	// last reviewed head or why the review is full.
	History *task.History
	// FollowUp is set when the pull request was reviewed before: the
	// review body then reads as a follow-up.
	FollowUp bool
	// Resolved are the review threads GitHub holds resolved.
	Resolved map[string]bool
	// Applied is set when what people did since the last review changed
	// the ledger.
	Applied bool
	// Problems are the best-effort steps that failed, and people's acts
	// that changed nothing.
	Problems []error
}

// Prepare reads the pull request's ledger, applies what people did to
// MergeGuard's threads since, and finds out whether the review of head by
// run runID can be incremental (asked: a full review was asked for).
func (p Preparing) Prepare(ctx context.Context, pr PullRequest, runID string, head Head, asked bool) (Prepared, error) {
	out := Prepared{}
	ledger, err := p.healedLedger(ctx, pr, &out)
	if err != nil {
		return Prepared{}, err
	}
	out.History = &task.History{Ledger: ledger, Memory: p.remember(ctx, pr, runID, &out)}
	last, err := p.Ledger.LastReview(ctx, pr.Repository, pr.Number, runID)
	switch {
	case errors.Is(err, review.ErrNotFound): // never reviewed
	case err != nil:
		return Prepared{}, err
	}
	out.FollowUp = last.Found
	if out.History.FullReason = FullReason(last, head, asked); out.History.FullReason != "" {
		return out, nil
	}
	cmp, err := p.Commits.Compare(ctx, last.HeadSHA, head.SHA)
	if err != nil && !errors.Is(err, review.ErrNotFound) {
		if p.Retry != nil && p.Retry(err) {
			return Prepared{}, err
		}
		out.Problems = append(out.Problems, fmt.Errorf("compare with the last reviewed head: %w", err))
	}
	out.History.Since, out.History.FullReason = Compared(last, cmp, err)
	return out, nil
}

// healedLedger reads the ledger and records on it the thread states GitHub
// holds (best effort: without them the ledger is as the deliveries left
// it), and sets out's resolved threads.
func (p Preparing) healedLedger(ctx context.Context, pr PullRequest, out *Prepared) ([]review.LedgerEntry, error) {
	ledger, err := p.Ledger.Ledger(ctx, pr.Repository, pr.Number)
	if err != nil || len(ledger) == 0 {
		return ledger, err
	}
	threads, err := p.Conversation.Threads(ctx, pr.Number)
	if err != nil {
		out.Problems = append(out.Problems, fmt.Errorf("read review threads; the ledger keeps the states deliveries gave it: %w", err))
		return ledger, nil
	}
	out.Resolved = map[string]bool{}
	w, applied := &writers{people: p.People, known: map[string]bool{}, problems: &out.Problems}, 0
	for _, t := range threads {
		out.Resolved[t.ID] = t.Resolved
		e, ok := entryOf(ledger, t)
		if !ok || (t.Resolved && t.ResolvedBy == p.People.Login()) {
			continue // not MergeGuard's finding, or resolved by MergeGuard as fixed
		}
		change := review.ThreadChange{ThreadID: t.ID, CommentID: t.CommentID, Resolved: t.Resolved, By: t.ResolvedBy}
		dismisses := t.Resolved && e.State == review.FindingOpen
		reopens := !t.Resolved && e.State == review.FindingDismissed && review.ReopensOnUnresolve(e.StateHow)
		if dismisses && !w.can(ctx, t.ResolvedBy) {
			out.Problems = append(out.Problems, fmt.Errorf("thread %s resolved by %s, who has no write access: it dismisses nothing", t.ID, t.ResolvedBy))
			dismisses, change.Resolved = false, false // learn the thread's id only
		}
		if !dismisses && !reopens && e.ThreadID == t.ID {
			continue // the ledger already says so
		}
		c, err := p.Ledger.ApplyThread(ctx, pr.Repository, pr.Number, change)
		if err != nil {
			return nil, err
		}
		applied++
		out.Applied = out.Applied || c
	}
	if p.healReactions(ctx, pr, ledger, w) {
		applied, out.Applied = applied+1, true
	}
	if applied == 0 {
		return ledger, nil
	}
	// Read back: states changed, thread ids were learned.
	return p.Ledger.Ledger(ctx, pr.Repository, pr.Number)
}

// entryOf returns the ledger entry review thread t was posted for: by the
// thread's id, or by its first comment when the ledger does not know the
// id yet.
func entryOf(ledger []review.LedgerEntry, t review.ReviewThread) (review.LedgerEntry, bool) {
	for _, e := range ledger {
		if (e.ThreadID != "" && e.ThreadID == t.ID) || (e.CommentID != 0 && e.CommentID == t.CommentID) {
			return e, true
		}
	}
	return review.LedgerEntry{}, false
}

// MaxReactionReads bounds the comments whose reactions a review reads.
const MaxReactionReads = 30

// healReactions applies people's reactions on the comments of open
// findings (GitHub sends no webhook for them): a writer's 👎 dismisses the
// finding as feedback, a 👍 is recorded as agreement. It is best effort and
// reports whether a finding was dismissed.
func (p Preparing) healReactions(ctx context.Context, pr PullRequest, ledger []review.LedgerEntry, w *writers) bool {
	read, dismissed := 0, false
	for _, e := range ledger {
		// An exposed secret too: a writer's 👎 is an explicit dismissal.
		if (e.State != review.FindingOpen && e.State != review.FindingExposed) || e.CommentID == 0 || read >= MaxReactionReads {
			continue
		}
		read++
		reactions, err := p.People.Reactions(ctx, e.CommentID)
		if err != nil {
			w.problem(fmt.Errorf("read reactions of comment %d: %w", e.CommentID, err))
			continue
		}
		done := false
		for _, x := range reactions {
			if x.Login == p.People.Login() || strings.HasSuffix(x.Login, "[bot]") {
				continue
			}
			switch {
			case x.Content == "-1" && !done && w.can(ctx, x.Login):
				ok, err := p.Ledger.DismissFinding(ctx, pr.Repository, pr.Number, e.Finding.Fingerprint, x.Login, review.DismissedFeedback)
				if err != nil {
					w.problem(fmt.Errorf("dismiss a finding after a 👎: %w", err))
				}
				if ok {
					done, dismissed = true, true
					p.acknowledge(ctx, pr, e, "Dismissed after a 👎 from "+x.Login+": MergeGuard will not raise it again on this pull request.", w)
				}
			case x.Content == "+1":
				if err := p.Ledger.RecordAgreement(ctx, pr.Repository, pr.Number, e.Finding.Fingerprint, x.Login); err != nil {
					w.problem(fmt.Errorf("record a 👍: %w", err))
				}
			}
		}
	}
	return dismissed
}

// acknowledge replies once in a dismissed finding's thread and resolves
// it; best effort.
func (p Preparing) acknowledge(ctx context.Context, pr PullRequest, e review.LedgerEntry, text string, w *writers) {
	if _, err := p.Conversation.Reply(ctx, pr.Number, e.CommentID, text); err != nil {
		w.problem(fmt.Errorf("acknowledge a dismissal: %w", err))
	}
	if err := ResolveThreadOf(ctx, p.Conversation, pr.Number, e); err != nil {
		w.problem(fmt.Errorf("resolve a dismissed finding's thread: %w", err))
	}
}

// writers answers, once per login, whether people may push to the
// repository: only their resolutions dismiss findings (GitHub also lets a
// pull request's author resolve threads).
type writers struct {
	people   People
	known    map[string]bool
	problems *[]error
}

func (w *writers) problem(err error) { *w.problems = append(*w.problems, err) }

func (w *writers) can(ctx context.Context, login string) bool {
	if ok, seen := w.known[login]; seen {
		return ok
	}
	ok, err := w.people.CanWrite(ctx, login)
	if err != nil {
		w.problem(fmt.Errorf("check %s's write access; the resolution dismisses nothing this time: %w", login, err))
		return false // asked again at the next review
	}
	w.known[login] = ok
	return ok
}
