// Package lifecycle is the life of a pull request's reviews
// (docs/architecture.md, The life of a pull request): one use case per job
// — what a review starts from and why it is full or incremental
// (Preparing), what follows a posted review (FollowUp), the check run
// (Checking), the gate refreshed after a dismissal (Gating), answering a
// question (Answering), describing (Describing). It is pure: it imports
// only review/... and config, and speaks to GitHub and the store through
// the small role interfaces it defines, which the worker implements over
// github.Repo and the store.
package lifecycle

import (
	"errors"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/task"
)

// Reasons for a full review that follow from the pull request's last
// review and its commits; the pipeline adds the ones that follow from the
// repository's configuration (incremental: false, a changed
// configuration, an unreadable since-diff).
const (
	ReasonFirst      = "first review of this pull request"
	ReasonAsked      = "a full review was asked for"
	ReasonFailed     = "the previous review did not complete"
	ReasonNoLedger   = "the previous review was made before MergeGuard kept a finding ledger"
	ReasonSameHead   = "this head was reviewed before; it is reviewed again whole"
	ReasonBaseMoved  = "the base branch moved since the last review"
	ReasonRewritten  = "the branch was force-pushed or rebased since the last review"
	ReasonCompareErr = "the commits since the last review could not be compared"
)

// Head is the pair of commits a review is asked for.
type Head struct {
	SHA, BaseSHA string
}

// FullReason is the reason the review of head must be full that needs no
// comparison of commits, "" when the commits since the last review must be
// compared to decide (then see Compared).
func FullReason(last review.LastReview, head Head, asked bool) string {
	switch {
	case !last.Found:
		return ReasonFirst
	case asked:
		return ReasonAsked
	case !last.Succeeded:
		return ReasonFailed
	case !last.KeptLedger:
		return ReasonNoLedger
	case last.HeadSHA == head.SHA:
		return ReasonSameHead
	case last.BaseSHA != head.BaseSHA:
		return ReasonBaseMoved
	}
	return ""
}

// Compared decides from the comparison of the last reviewed head with the
// new one (GitHub's compare API, err its error) whether the review can be
// incremental: it returns what changed since, or the reason for a full
// review. The caller returns a transient err instead of calling Compared:
// a retry may compare.
func Compared(last review.LastReview, cmp review.Comparison, err error) (*task.Since, string) {
	switch {
	case errors.Is(err, review.ErrNotFound):
		return nil, ReasonRewritten
	case err != nil:
		return nil, ReasonCompareErr
	case cmp.Status == review.CompareIdentical:
		return nil, ReasonSameHead
	case cmp.Status != review.CompareAhead:
		return nil, ReasonRewritten
	}
	return &task.Since{SHA: last.HeadSHA, Commits: cmp.AheadBy, Diff: cmp.Diff, ConfigDigest: last.ConfigDigest}, ""
}
