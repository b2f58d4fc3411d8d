package review

import "errors"

// This file is what MergeGuard writes on a pull request, as the life of a
// pull request (review/lifecycle) decides it and package github writes it:
// the review, the check run of its head and the description's section
// (docs/architecture.md, The life of a pull request).

// LineIndex answers where GitHub accepts review comments on the pull
// request's diff; *diff.Index implements it.
type LineIndex interface {
	Commentable(path string, side Side, line int) bool
	CommentableRange(path string, side Side, start, end int) bool
}

// Post is one review to publish on a pull request.
type Post struct {
	Number int
	// HeadSHA is the reviewed commit (the review's commit_id).
	HeadSHA string
	// RunID identifies the run; a review carrying its marker is never
	// posted twice. Letters, digits, ".", "_", ":" and single "-" only.
	RunID string
	// Verdict is the review's verdict: its decision is the review's event,
	// its summary, notes and stats go in the body.
	Verdict Verdict
	// Findings are the findings to post, each with its Fingerprint
	// (letters, digits, ".", "_", ":" and single "-", as in RunID); false
	// positives are stored, not posted.
	Findings []Finding
	// Index says which lines GitHub accepts comments on; nil puts every
	// finding in the body.
	Index LineIndex
	// DetailsURL links the review's page in MergeGuard's web UI; "" leaves
	// the link out.
	DetailsURL string
	// FollowUp, for a pull request reviewed before, says what this review
	// covered and where the ledger stands; nil for a first review.
	FollowUp *FollowUp
}

// FollowUp is the follow-up part of a review's body.
type FollowUp struct {
	// Scope is what this review covered.
	Scope Scope
	// Fixed are the findings found fixed by this review. StillOpen are
	// earlier findings still open at this head, linked to their comments;
	// Dismissed are findings people dismissed. Neither is ever posted
	// again, even when Post.Findings repeats them.
	Fixed, StillOpen, Dismissed []LedgerEntry
	// Exposed are the secrets that left the pull request's diff after
	// they were pushed (FindingExposed): listed with the commit that
	// pushed them, never posted again.
	Exposed []LedgerEntry
	// BlockingCleared says the last blocking finding was fixed or
	// dismissed.
	BlockingCleared bool
}

// Posted is a published review: its id, its address, and where each
// finding went.
type Posted struct {
	ReviewID int64
	URL      string
	// AlreadyPosted is set when a review of this run existed and nothing
	// new was posted.
	AlreadyPosted bool
	// Placements maps each finding's fingerprint to where it went.
	Placements map[string]Placement
}

// ErrDismiss is wrapped by a publisher's error when the review was posted
// but an earlier review of the bot could not be dismissed.
var ErrDismiss = errors.New("dismiss earlier review")

// Check run statuses and conclusions, as GitHub names them.
const (
	CheckQueued         = "queued"
	CheckInProgress     = "in_progress"
	CheckCompleted      = "completed"
	ConclusionSuccess   = "success"
	ConclusionFailure   = "failure"
	ConclusionNeutral   = "neutral"
	ConclusionCancelled = "cancelled"
)

// Check is MergeGuard's check run of a head.
type Check struct {
	HeadSHA string
	// Status is CheckInProgress or CheckCompleted; Conclusion is set with
	// CheckCompleted.
	Status, Conclusion string
	// DetailsURL is the run's page in MergeGuard, ExternalID its id.
	DetailsURL, ExternalID string
	// Title and Summary are MergeGuard's markdown.
	Title, Summary string
	// Annotate are the ledger entries the check annotates (the open ones
	// of the ledger), at levels by Blocking, linked to the pull request at
	// PullURL.
	Annotate []LedgerEntry
	Blocking Severity
	PullURL  string
}

// ErrAnnotationsRejected is wrapped by a check's error when GitHub refused
// its annotations: the check run was written without them.
var ErrAnnotationsRejected = errors.New("check run annotations rejected")

// Description is what MergeGuard writes into a pull request's
// description, between its markers.
type Description struct {
	// Walkthrough is the walkthrough of a review of the pull request.
	Walkthrough *Walkthrough
	// HeadSHA is the head the review read.
	HeadSHA string
	// DetailsURL is the review's page in MergeGuard; "" leaves the link
	// out.
	DetailsURL string
}

// ErrDescriptionTooLong is wrapped by the error of a description GitHub
// refuses as too long (DescriptionTooLongError).
var ErrDescriptionTooLong = errors.New("description too long")

// DescriptionTooLongError is GitHub's refusal of a description too long:
// the author's to fix, so the pull request is told Err's own text. It
// wraps Err and ErrDescriptionTooLong.
type DescriptionTooLongError struct{ Err error }

func (e DescriptionTooLongError) Error() string   { return e.Err.Error() }
func (e DescriptionTooLongError) Unwrap() []error { return []error{e.Err, ErrDescriptionTooLong} }

// ThreadChange is a review thread of MergeGuard's resolved or unresolved
// on GitHub.
type ThreadChange struct {
	// ThreadID is the thread's node id; CommentID its first comment, by
	// which an entry whose thread id is not known yet is found.
	ThreadID  string
	CommentID int64
	Resolved  bool
	// By is who resolved or unresolved it.
	By string
}

// ReviewedHead is a recorded review of a pull request's head that
// succeeded.
type ReviewedHead struct {
	RunID, HeadSHA string
	// CheckRunID is the run's check run, 0 without one.
	CheckRunID int64
	// Verdict is the stored review, nil without one.
	Verdict *Verdict
}

// LastReview is what the pull request's last review left that decides the
// scope of the next one. The zero value is a pull request never reviewed.
type LastReview struct {
	// Found is false when the pull request was never reviewed.
	Found bool
	// Succeeded is true when the last review completed.
	Succeeded bool
	// KeptLedger is true when the last review recorded a finding ledger
	// (it has a review kind).
	KeptLedger bool
	// HeadSHA and BaseSHA are the commits the last review reviewed.
	HeadSHA, BaseSHA string
	// ConfigDigest identifies the configuration the last review used.
	ConfigDigest string
}
