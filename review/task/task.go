// Package task is what the review pipeline is asked to do and what it
// returns: a review's Request and Result (with the pull request's History
// and the Ledger the review leaves), a question's AnswerRequest and
// AnswerResult, and the errors and notes a caller acts on. The lifecycle
// (review/lifecycle) and the pipeline (review/pipeline) both speak it, so
// the lifecycle needs none of the pipeline's machinery (docs/architecture.md).
package task

import (
	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/diff"
	"github.com/mergeguard/mergeguard/review/memory"
)

// Request is one review to run.
type Request struct {
	Source review.Source
	// Repo is the repository's configuration: the configuration used as
	// is, or the one .mergeguard.yml is read over (ReadRepoFile).
	Repo config.Repo
	// ReadRepoFile reads .mergeguard.yml from the Source's base revision
	// (never its head) over Repo; an invalid file fails the review with a
	// *RepoConfigError.
	ReadRepoFile bool
	Options      review.Options
	// Sink receives progress events; nil discards them.
	Sink review.Sink
	// Automatic applies the auto_review gates (an explicit request is only
	// refused when the repository disabled MergeGuard).
	Automatic bool
	// MaxTokens caps the tokens (input + output) the review's model calls
	// may use; 0 means no cap. A review that runs out is skipped, with
	// Result.Notice saying so.
	MaxTokens int
	// History is what earlier reviews of the pull request left (its
	// ledger, and what changed since the last reviewed head); nil for a
	// review without history: the API's and the CLI's.
	History *History
	// Learnings are the repository's active learnings (the caller filters
	// by status): those that apply to a chunk's files go into its prompt,
	// and the verifier drops the findings they cover.
	Learnings []review.Learning
	// Arm names the experiment arm that reviews (experiment.Choose): its
	// model and prompt variant are the run's; "" is the default arm.
	Arm string
}

// Result is a finished (or skipped) review.
type Result struct {
	Verdict review.Verdict
	// Findings holds every finding that survived the filters, reported or
	// judged false positive, each with its verification status, reason and
	// fingerprint, ordered by file and line.
	Findings   []review.Finding
	Skipped    bool
	SkipReason string
	// Notice is what the pull request's people should be told about a
	// review that could not be completed (a spent budget); "" for none.
	Notice string
	Index  *diff.Index
	Change review.Change
	Cost   review.CostInfo
	// Scope is what the review covered (full or incremental, and why).
	Scope review.Scope
	// Config is the repository configuration the review used (.mergeguard.yml
	// over Request.Repo).
	Config config.Repo
	// ModelSkipped says why the model did not review the change (title
	// keywords, skip labels, max_files: what an author controls); the
	// built-in analyzers and linters reviewed it all the same. "" when the
	// model reviewed, or no model is configured.
	ModelSkipped string
	// Ledger is what the review did to the pull request's finding ledger
	// (zero without Request.History). The verdict counts its open
	// findings, earlier ones included.
	Ledger Ledger
	// Arm names the experiment arm that reviewed (config.DefaultArm for
	// the default), Model its model ("" without an LLM) and PromptVersion
	// its reviewer prompt's version (PromptVersion or a variant's): what a
	// run records, and its findings' source (review.FindingSource).
	Arm, Model, PromptVersion string
	// Suppressed are the new findings the memory of dismissals
	// (History.Memory) kept from the review, with the dismissals each
	// matched: not reported, not counted, not in the ledger.
	Suppressed []memory.Suppressed
}

// History is what a pull request's earlier reviews left: its finding
// ledger and, when the caller found that the new head only adds commits to
// the last reviewed one, what those commits changed.
type History struct {
	// Ledger is the pull request's finding ledger, as read before the
	// review (thread states already applied).
	Ledger []review.LedgerEntry
	// Since is set when an incremental review is possible; nil gives a
	// full review for FullReason.
	Since      *Since
	FullReason string
	// Memory is the repository's memory of dismissals: a new finding
	// similar to at least the repository's memory.suppress_after findings
	// writers dismissed is not reported (Result.Suppressed); nil
	// suppresses nothing.
	Memory *memory.Memory
}

// Since is what changed from the last reviewed head to the new one.
type Since struct {
	SHA     string
	Commits int
	// Diff is the unified diff from SHA to the new head (GitHub's compare
	// API): its new side is the new head.
	Diff string
	// ConfigDigest is the configuration the last review used.
	ConfigDigest string
}

// Ledger is what a review did to the pull request's finding ledger.
type Ledger struct {
	// Changed are the entries to store: this review's new findings, the
	// open entries seen at the new head, and those it found fixed or gone.
	Changed []review.LedgerEntry
	// Fixed are the entries found fixed at the new head.
	Fixed []review.LedgerEntry
	// Exposed are the secrets this review found gone from the pull
	// request's diff: pushed, so still leaked (review.FindingExposed).
	Exposed []review.LedgerEntry
	// StillOpen are the earlier findings still open at the new head;
	// Dismissed the entries people dismissed. Neither is posted again.
	StillOpen []review.LedgerEntry
	Dismissed []review.LedgerEntry
	// All is the whole ledger after this review.
	All []review.LedgerEntry
	// BlockingCleared says the ledger had a blocking finding open before
	// this review and has none now.
	BlockingCleared bool
}

// Open are the ledger's open entries after the review, new ones included.
func (l Ledger) Open() []review.LedgerEntry {
	var out []review.LedgerEntry
	for _, e := range l.All {
		if e.State == review.FindingOpen {
			out = append(out, e)
		}
	}
	return out
}

// AnswerRequest is one question to answer.
type AnswerRequest struct {
	// Source is the pull request at its current head.
	Source   review.Source
	Question review.Question
	// Finding is the finding of the MergeGuard thread the question is in;
	// nil elsewhere.
	Finding *review.LedgerEntry
	// Thread is the thread's comments before the question, oldest first.
	Thread []review.ThreadMessage
	// Answered is how many answers MergeGuard gave in the thread before.
	Answered int
	// Repo is the configuration .mergeguard.yml is read over (from the
	// base revision, as for reviews).
	Repo config.Repo
	Sink review.Sink
	// Arm names the experiment arm of the pull request
	// (experiment.Choose), whose model answers; "" is the default arm.
	Arm string
}

// AnswerResult is an answer, or why there is none.
type AnswerResult struct {
	// Text is the answer, markdown written by the model: untrusted.
	Text string
	// Classification is how the reply reads (reply questions only).
	Classification review.Classification
	// Learning is the rule for the repository the reply states, proposed
	// by the model; nil when it states none.
	Learning *review.Learning
	// Skipped is set, with Notice (what to tell the thread, "" for
	// nothing), when no answer is given: the thread's limit is reached.
	Skipped bool
	Notice  string
	Agent   review.AgentResult
	Cost    review.CostInfo
	Config  config.Repo
	// Arm names the experiment arm that answered and Model its model
	// (Result.Arm, Result.Model).
	Arm, Model string
}
