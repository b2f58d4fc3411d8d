package lifecycle

import (
	"context"
	"fmt"
	"strings"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/text"
)

// This file is what follows a posted review (docs/architecture.md, The
// life of a pull request): the threads of the findings it found fixed are
// resolved, and each secret it found exposed is answered once in its
// thread.

// FollowedUp is how the follow-up of a posted review went; it is best
// effort, the ledger already says what the review found.
type FollowedUp struct {
	// Unresolved counts the fixed findings' threads that could not be
	// resolved.
	Unresolved int
	Problems   []error
}

// FollowUp resolves the review threads of the findings a review found
// fixed, each with one reply naming the commit, and answers once in the
// thread of each secret it found exposed. A thread already resolved
// (resolved: by an earlier attempt of the run) gets no second reply.
func FollowUp(ctx context.Context, c Conversation, pr PullRequest, fixed, exposed []review.LedgerEntry, resolved map[string]bool) FollowedUp {
	var out FollowedUp
	for _, e := range fixed {
		if e.ThreadID == "" || resolved[e.ThreadID] {
			continue
		}
		if e.CommentID != 0 {
			if _, err := c.Reply(ctx, pr.Number, e.CommentID, fmt.Sprintf("Fixed in %s.", text.ShortSHA(e.FixedSHA))); err != nil {
				out.Problems = append(out.Problems, fmt.Errorf("reply in fixed finding %s's thread: %w", e.Finding.Fingerprint, err))
			}
		}
		if err := c.ResolveThread(ctx, e.ThreadID); err != nil {
			out.Unresolved++
			out.Problems = append(out.Problems, fmt.Errorf("resolve fixed finding %s's thread: %w", e.Finding.Fingerprint, err))
		}
	}
	for _, e := range exposed {
		if e.CommentID == 0 {
			continue
		}
		replied, err := repliedExposed(ctx, c, pr, e)
		if err != nil {
			out.Problems = append(out.Problems, err)
		}
		if replied {
			continue // an earlier attempt of the run replied
		}
		if _, err := c.Reply(ctx, pr.Number, e.CommentID, ExposedReply(e)); err != nil {
			out.Problems = append(out.Problems, fmt.Errorf("reply in exposed secret %s's thread: %w", e.Finding.Fingerprint, err))
		}
	}
	return out
}

// exposedReplyStart begins the reply in an exposed secret's thread.
const exposedReplyStart = "This secret is no longer in the pull request's diff"

// repliedExposed reports whether MergeGuard's bot already answered in the
// thread of the exposed entry e; a thread that cannot be read counts as
// not answered.
func repliedExposed(ctx context.Context, c Conversation, pr PullRequest, e review.LedgerEntry) (bool, error) {
	msgs, err := c.ThreadMessages(ctx, pr.Number, e.CommentID)
	if err != nil {
		return false, fmt.Errorf("read exposed secret %s's thread: %w", e.Finding.Fingerprint, err)
	}
	for _, m := range msgs {
		if m.Bot && strings.HasPrefix(m.Body, exposedReplyStart) {
			return true, nil
		}
	}
	return false, nil
}

// ExposedReply is the one reply in an exposed secret's thread: it was
// pushed, so removing it does not un-leak it.
func ExposedReply(e review.LedgerEntry) string {
	s := fmt.Sprintf(exposedReplyStart+", but commit %s pushed it: it stays in the branch's history on GitHub. "+
		"Treat it as leaked and rotate the credential.", text.ShortSHA(e.FirstSeenSHA))
	if e.StateHow == review.ExposedWarning {
		return s + " It no longer blocks this pull request (`secrets.removed: warn`)."
	}
	return s + " It keeps blocking this pull request until someone with write access dismisses it with `/mergeguard ignore` in this thread."
}

// WithPlacements records on the ledger entries where their findings were
// posted.
func WithPlacements(entries []review.LedgerEntry, placed map[string]review.Placement) []review.LedgerEntry {
	out := make([]review.LedgerEntry, len(entries))
	for i, e := range entries {
		if pl, ok := placed[e.Finding.Fingerprint]; ok && pl.CommentID != 0 {
			e.CommentID = pl.CommentID
		}
		out[i] = e
	}
	return out
}
