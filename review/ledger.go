package review

import "time"

// FindingState is where a finding of a pull request stands in its ledger
// (docs/architecture.md).
type FindingState string

// Finding states.
const (
	// FindingOpen: reported and not fixed; it counts towards the verdict.
	FindingOpen FindingState = "open"
	// FindingFixed: its cited code is gone from its lines at a later head.
	FindingFixed FindingState = "fixed"
	// FindingDismissed: a person resolved its thread, used a command or
	// gave feedback; it is never posted again on that pull request.
	FindingDismissed FindingState = "dismissed"
	// FindingOutdated: its file left the pull request.
	FindingOutdated FindingState = "outdated"
	// FindingExposed: a secret that was pushed and is no longer in the
	// pull request's diff. Removing it does not un-leak it (it stays in the
	// branch's history), so it keeps blocking until a person dismisses it
	// (StateHow ExposedBlocking) or, with secrets.removed: warn, it is
	// reported without blocking (ExposedWarning).
	FindingExposed FindingState = "exposed"
)

// How a secret became exposed: the repository's secrets.removed.
const (
	ExposedBlocking = "secret_removed"      // secrets.removed: block
	ExposedWarning  = "secret_removed_warn" // secrets.removed: warn
)

// How a finding was dismissed.
const (
	DismissedThreadResolved = "thread_resolved" // a person resolved its review thread
	DismissedCommand        = "command"         // /mergeguard ignore
	DismissedFeedback       = "feedback"        // a writer's reply or reaction
	DismissedAPI            = "api"             // the API token's holder, through the API or the web UI
)

// ReopensOnUnresolve reports whether unresolving the review thread of a
// finding dismissed this way opens it again: a person resolved the thread,
// or MergeGuard did when it read a writer's reply or 👎 as dismissing the
// finding, so unresolving undoes a misread reply.
func ReopensOnUnresolve(how string) bool {
	return how == DismissedThreadResolved || how == DismissedFeedback
}

// LedgerEntry is one finding of a pull request's ledger: the finding as it
// was last seen, and its life across the runs of that pull request. It is
// MergeGuard's one ledger type, from the pipeline to the store, the API and
// the publisher.
type LedgerEntry struct {
	// Finding is the finding as last reported (its Fingerprint is the
	// ledger's key within the pull request).
	Finding Finding      `json:"finding"`
	State   FindingState `json:"state"`
	// FirstSeenSHA and LastSeenSHA are the first and last heads the
	// finding was reported or confirmed at.
	FirstSeenSHA string `json:"first_seen_sha"`
	LastSeenSHA  string `json:"last_seen_sha"`
	// FixedSHA is the head at which the finding was found fixed.
	FixedSHA string `json:"fixed_sha,omitempty"`
	// StateBy is who changed the state last (a GitHub login, or
	// "mergeguard"); StateHow says how (DismissedThreadResolved, ...).
	StateBy  string `json:"state_by,omitempty"`
	StateHow string `json:"state_how,omitempty"`
	// CommentID is the GitHub review comment the finding was posted as;
	// ThreadID the GraphQL node id of its review thread. Zero / "" when it
	// was not posted inline.
	CommentID int64     `json:"comment_id,omitempty"`
	ThreadID  string    `json:"thread_id,omitempty"`
	UpdatedAt time.Time `json:"updated_at"`
	// Outcome is what became of the finding when its pull request closed
	// (docs/quality.md), set once; nil while no closing decided it. Runs
	// never write it: the store sets it at the close.
	Outcome *ClosedOutcome `json:"outcome,omitempty"`
}

// Blocking reports whether an entry blocks the pull request at the given
// severity threshold: an open (or exposed under secrets.removed: block)
// verified finding at or above it, as the verdict counts them.
func (e LedgerEntry) Blocking(threshold Severity) bool {
	return e.Counts() && e.Finding.Severity.AtLeast(threshold) && e.Finding.VerificationStatus == Verified
}

// Counts reports whether the entry counts towards the verdict: it is open,
// or an exposed secret under secrets.removed: block.
func (e LedgerEntry) Counts() bool {
	return e.State == FindingOpen || (e.State == FindingExposed && e.StateHow != ExposedWarning)
}

// Kinds of review of a pull request, for Scope.Kind.
const (
	ScopeFull        = "full"
	ScopeIncremental = "incremental"
)

// Scope is what a review of a pull request covered: the whole pull request
// or only what the commits since an earlier reviewed head changed, and why.
// It is MergeGuard's one scope type, from the pipeline to the store, the
// API and the review body.
type Scope struct {
	// Kind is ScopeFull or ScopeIncremental; Reason says why a review was
	// full ("the branch was force-pushed", ...).
	Kind   string `json:"kind"`
	Reason string `json:"reason,omitempty"`
	// SinceSHA is the head reviewed last; Commits and Files are how many
	// commits since it and how many files they touched (incremental).
	SinceSHA string `json:"since_sha,omitempty"`
	Commits  int    `json:"commits,omitempty"`
	Files    int    `json:"files,omitempty"`
	// ConfigDigest identifies the repository configuration reviewed with:
	// a review under another configuration is never incremental.
	ConfigDigest string `json:"config_digest,omitempty"`
}

// ReviewThread is a GitHub review thread as MergeGuard follows it.
type ReviewThread struct {
	// ID is the thread's GraphQL node id.
	ID         string
	Resolved   bool
	ResolvedBy string
	Outdated   bool
	Path       string
	// CommentID is the database id of the thread's first comment; Author
	// its author's login.
	CommentID int64
	Author    string
	// Fingerprint is the finding named by MergeGuard's marker in the
	// first comment, "" when the thread is not MergeGuard's.
	Fingerprint string
}

// CompareStatus is how one commit relates to another (GitHub's compare
// API): the head is ahead of, behind, diverged from or identical to the
// base.
type CompareStatus string

// Compare statuses.
const (
	CompareAhead     CompareStatus = "ahead"
	CompareBehind    CompareStatus = "behind"
	CompareDiverged  CompareStatus = "diverged"
	CompareIdentical CompareStatus = "identical"
)

// Comparison is what changed from an earlier reviewed head to a newer one.
type Comparison struct {
	Status   CompareStatus
	AheadBy  int
	BehindBy int
	// Diff is the unified diff from the earlier head to the newer one: its
	// new side is the newer head, so its line numbers are the pull
	// request diff's right-side numbers.
	Diff string
}
