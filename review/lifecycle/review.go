package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/experiment"
	"github.com/mergeguard/mergeguard/review/memory"
	"github.com/mergeguard/mergeguard/review/task"
	"github.com/mergeguard/mergeguard/review/text"
)

// This file is reviewing a head (docs/architecture.md, The life of a pull
// request): prepare (the healed ledger, every reason the review is full),
// run the pipeline, publish once unless the head moved, follow up
// (resolve fixed, answer exposed, the check, the description).

// Reviewer runs one review; *pipeline.Pipeline implements it.
type Reviewer interface {
	Run(ctx context.Context, req task.Request) (*task.Result, error)
}

// Publisher posts reviews on the pull request.
type Publisher interface {
	Head(ctx context.Context, number int) (review.PullHead, error)
	// Publish posts p once: a review carrying the run's marker is found,
	// not posted again.
	Publish(ctx context.Context, p review.Post) (review.Posted, error)
	PullURL(number int) string
}

// Learnings are the repository's learnings.
type Learnings interface {
	Learnings(ctx context.Context, repo string, status review.LearningStatus) ([]review.Learning, error)
}

// ErrCancelled is wrapped by RunLog.ClaimPost when the run was cancelled
// (a newer head) before it posted.
var ErrCancelled = errors.New("run cancelled")

// Reviewing is the use case of reviewing a pull request's head, with the
// roles it needs.
type Reviewing struct {
	Pipeline  Reviewer
	Publisher Publisher
	Admitting Admitting
	Preparing Preparing
	Checking  Checking
	Learnings Learnings
	Run       RunLog
	// Experiments are the arms of a model comparison (llm.experiments):
	// the pull request's arm (experiment.Choose) reviews each of its
	// heads, so no pull request is reviewed by two arms.
	Experiments []config.Experiment
	// Describing, set when the run was asked to describe, writes the
	// walkthrough: from the review of the head when there is one
	// (nothing is reviewed), else after the review.
	Describing *Describing
	PublicURL  string
	// PostTimeout bounds posting. Posting is not cancelled by a newer
	// head once it has begun: the post was claimed while the head was
	// current, and a half-posted review is worse than a stale one.
	PostTimeout time.Duration
}

// ReviewInput is what any review reads and is asked with.
type ReviewInput struct {
	Source  review.Source
	Options review.Options
	// Repo is the default repository configuration .mergeguard.yml is
	// read over.
	Repo config.Repo
	// MaxTokens caps the review's tokens; 0 for no cap.
	MaxTokens int
	Sink      review.Sink
}

// request is the pipeline's request of in.
func (in ReviewInput) request() task.Request {
	return task.Request{Source: in.Source, Options: in.Options, Repo: in.Repo, MaxTokens: in.MaxTokens, Sink: in.Sink}
}

// ReviewAsked is a review of a pull request's head to make.
type ReviewAsked struct {
	PullRequest
	ReviewInput
	RunID string
	// InstallationID is the installation the run spends for.
	InstallationID int64
	// CheckRunID is the run's check run, started by an earlier attempt; 0
	// without one.
	CheckRunID int64
	// Queued is the head the run was queued for; a zero SHA takes the
	// head the review finds.
	Queued review.PullHead
	// Automatic is set for a review a webhook queued.
	Automatic bool
	// LastAttempt is set on the run's last attempt: a review whose model
	// stays unavailable is then published without it.
	LastAttempt bool
}

// Outcome is how a review ended, and what it posted.
type Outcome struct {
	Ending Ending
	// Reason says why it was skipped or superseded; Notice what the pull
	// request is told.
	Reason, Notice string
	// Result is the pipeline's; nil when the run was skipped before the
	// review or superseded before the pipeline read the change.
	Result *task.Result
	// Posted is the posted review; Ledger the ledger entries the review
	// changed, with where their findings were posted.
	Posted *review.Posted
	Ledger []review.LedgerEntry
	// Check is the completed check of a posted review; NoCheck keeps the
	// head's check as it is (a describe run that reviewed nothing).
	Check   *review.Check
	NoCheck bool
	// Unresolved counts the fixed findings' threads that could not be
	// resolved.
	Unresolved int
	// Healed is set when what people did since the last review changed
	// the ledger before the review.
	Healed bool
	// Suppressed are the findings the posted review left out, similar to
	// findings writers dismissed (docs/quality.md).
	Suppressed []memory.Suppressed
	Problems   []error
}

// Review reviews the pull request's head and publishes the review once:
// a describe run whose head was reviewed describes from that review; a
// run not admitted is skipped before any GitHub call; the head's check
// run is started; then the review is prepared, made and published.
func (r Reviewing) Review(ctx context.Context, q ReviewAsked) (Outcome, error) {
	if r.Describing != nil {
		d, err := r.Describing.FromReview(ctx, q.PullRequest, q.Queued.SHA)
		if d.Done || err != nil {
			return Outcome{Ending: EndedSkipped, Reason: d.Skipped, Notice: d.Notice, NoCheck: d.Done, Problems: nonNil(d.Problem)}, err
		}
	}
	adm, err := r.Admitting.Admit(ctx, q.PullRequest, q.InstallationID, q.Automatic)
	switch {
	case err != nil:
		return Outcome{}, err
	case adm.Skip != "":
		return Outcome{Ending: EndedSkipped, Reason: adm.Skip, Notice: adm.Notice}, nil
	}
	started := r.startCheck(ctx, q)
	out, err := r.review(ctx, q)
	out.Problems = append(started, out.Problems...)
	return out, err
}

// startCheck starts the head's check run and records it on the run; best
// effort: the problems are a StepError each.
func (r Reviewing) startCheck(ctx context.Context, q ReviewAsked) []error {
	id, err := r.Checking.Start(ctx, Run{ID: q.RunID, HeadSHA: q.Queued.SHA, CheckRunID: q.CheckRunID})
	switch {
	case err != nil:
		return []error{StepError{Step: StepCheckRun, Err: fmt.Errorf("create the check run: %w", err)}}
	case id == 0:
		return nil
	}
	if err := r.Run.SetCheck(ctx, id); err != nil {
		return []error{fmt.Errorf("record the check run: %w", err)}
	}
	return nil
}

// review prepares, makes and publishes the review.
func (r Reviewing) review(ctx context.Context, q ReviewAsked) (Outcome, error) {
	prep, err := r.Preparing.Prepare(ctx, q.PullRequest, q.RunID, Head{SHA: q.Queued.SHA, BaseSHA: q.Queued.BaseSHA}, q.Options.Full)
	if err != nil {
		return Outcome{}, err
	}
	req := q.request()
	if req.Learnings, err = r.Learnings.Learnings(ctx, q.Repository, review.LearningActive); err != nil {
		return Outcome{}, err
	}
	req.Source = headSource{Source: req.Source, queued: q.Queued, log: r.Run}
	req.ReadRepoFile, req.Automatic, req.History = true, q.Automatic, prep.History
	req.Arm = experiment.Choose(r.Experiments, q.Repository, q.Number)
	res, err := r.Pipeline.Run(ctx, req)
	var moved HeadMovedError
	switch {
	case errors.As(err, &moved):
		return Outcome{Ending: EndedSuperseded, Reason: moved.Error(), Problems: prep.Problems}, nil
	case errors.Is(err, task.ErrLLMUnavailable) && res != nil:
		return r.withoutModel(ctx, q, res, prep, err)
	case err != nil:
		return Outcome{}, err
	case res.Skipped:
		out := Outcome{Ending: EndedSkipped, Reason: res.SkipReason, Notice: res.Notice, Result: res, Problems: prep.Problems}
		if r.Describing != nil {
			out.Notice = JoinNotice(out.Notice, NoReviewToDescribe)
		}
		return out, nil
	}
	out, err := r.publish(ctx, q, res, prep)
	out.Problems, out.Healed = append(prep.Problems, out.Problems...), prep.Applied
	return out, err
}

// ReviewText reviews a change that is not a pull request's (a bare diff);
// nothing is posted. With the model unavailable it returns the review
// without the model and the model's error.
func ReviewText(ctx context.Context, r Reviewer, in ReviewInput) (Outcome, error) {
	res, err := r.Run(ctx, in.request())
	if err != nil && (res == nil || !ModelUnavailable(err)) {
		return Outcome{}, err
	}
	if res.Skipped {
		return Outcome{Ending: EndedSkipped, Reason: res.SkipReason, Notice: res.Notice, Result: res}, err
	}
	return Outcome{Ending: EndedSucceeded, Notice: res.Notice, Result: res}, err
}

// withoutModel delivers a review whose model was unavailable: degraded,
// not empty. Before the run's last attempt the model's error is returned
// and the run is tried again later (a run posts one review). On its last
// attempt, when the built-in analyzers and linters found something, their
// review is published (the check counts it, its notes say the model could
// not be reached) and the run still ends failed, telling the pull request
// (AnalyzersPostedError): the next review of the pull request is then a
// full one, which the model reviews.
func (r Reviewing) withoutModel(ctx context.Context, q ReviewAsked, res *task.Result, prep Prepared, modelErr error) (Outcome, error) {
	if len(res.Verdict.Findings()) == 0 || !q.LastAttempt {
		return Outcome{Result: res, Problems: prep.Problems}, modelErr
	}
	out, err := r.publish(ctx, q, res, prep)
	out.Problems = append(prep.Problems, out.Problems...)
	if err != nil {
		return out, fmt.Errorf("publish the review without the model: %w", err)
	}
	return out, AnalyzersPostedError{modelErr}
}

// AnalyzersPostedError is the error of a run whose model was unavailable
// after the analyzers' review was posted; it unwraps to the model's error.
type AnalyzersPostedError struct{ error }

func (e AnalyzersPostedError) Unwrap() error { return e.error }

// PublishError is a review GitHub did not take.
type PublishError struct{ Err error }

func (e PublishError) Error() string { return e.Err.Error() }
func (e PublishError) Unwrap() error { return e.Err }

// publish posts the review once, unless the head moved during the review,
// then follows it up.
func (r Reviewing) publish(ctx context.Context, q ReviewAsked, res *task.Result, prep Prepared) (Outcome, error) {
	head, err := r.Publisher.Head(ctx, q.Number)
	if err != nil {
		return Outcome{}, fmt.Errorf("re-read head before posting: %w", err)
	}
	if head.SHA != res.Change.HeadSHA {
		return Outcome{Ending: EndedSuperseded, Result: res, Reason: fmt.Sprintf("the head moved from %s to %s during the review", text.ShortSHA(res.Change.HeadSHA), text.ShortSHA(head.SHA))}, nil
	}
	out := Outcome{Ending: EndedSucceeded, Notice: res.Notice, Result: res}
	alreadyStarted, err := r.Run.ClaimPost(ctx)
	switch {
	case errors.Is(err, ErrCancelled):
		return Outcome{Ending: EndedSuperseded, Result: res, Reason: "a newer head was pushed before the review was posted"}, nil
	case err != nil:
		return Outcome{}, err
	case alreadyStarted:
		out.Problems = append(out.Problems, errors.New("an earlier attempt started posting; Publish finds its review by the run's marker"))
	}
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.PostTimeout)
	defer cancel()
	post := review.Post{Number: q.Number, HeadSHA: res.Change.HeadSHA, RunID: q.RunID, Verdict: res.Verdict,
		Findings: res.Verdict.Findings(), DetailsURL: RunPage(r.PublicURL, q.RunID)}
	if res.Index != nil { // a nil *diff.Index is not a nil LineIndex
		post.Index = res.Index
	}
	if prep.FollowUp {
		post.FollowUp = followUpBody(res)
	}
	posted, err := r.Publisher.Publish(pctx, post)
	switch {
	case errors.Is(err, review.ErrDismiss):
		out.Problems = append(out.Problems, fmt.Errorf("review posted; an earlier review could not be dismissed: %w", err))
	case err != nil:
		return Outcome{Result: res}, PublishError{err}
	}
	posted.Placements = placements(post.Findings, posted.Placements, &out.Problems)
	out.Posted = &posted
	out.Ledger = WithPlacements(res.Ledger.Changed, posted.Placements)
	r.recordSuppressed(pctx, q, res, &out)
	f := FollowUp(pctx, r.Preparing.Conversation, q.PullRequest, res.Ledger.Fixed, res.Ledger.Exposed, prep.Resolved)
	out.Problems = append(out.Problems, f.Problems...)
	out.Unresolved = f.Unresolved
	check := r.Checking.Reviewed(res, r.Publisher.PullURL(q.Number))
	out.Check = &check
	if r.Describing != nil {
		notice, problem := r.Describing.AfterReview(pctx, q.PullRequest, q.RunID, res.Change.HeadSHA, res.Verdict.Walkthrough)
		out.Notice = JoinNotice(out.Notice, notice)
		if problem != nil {
			out.Problems = append(out.Problems, problem)
		}
	}
	return out, nil
}

// followUpBody is the follow-up part of the review body.
func followUpBody(res *task.Result) *review.FollowUp {
	l := res.Ledger
	var exposed []review.LedgerEntry
	for _, e := range l.All {
		if e.State == review.FindingExposed {
			exposed = append(exposed, e)
		}
	}
	return &review.FollowUp{Scope: res.Scope, Fixed: l.Fixed, StillOpen: l.StillOpen, Dismissed: l.Dismissed,
		Exposed: exposed, BlockingCleared: l.BlockingCleared}
}

// placements keeps where Publish put each posted finding for the store. A
// placement of a fingerprint the run does not store is a problem and is
// dropped: it must not keep the run from being recorded.
func placements(findings []review.Finding, placed map[string]review.Placement, problems *[]error) map[string]review.Placement {
	stored := make(map[string]bool, len(findings))
	for _, f := range findings {
		stored[f.Fingerprint] = true
	}
	out := make(map[string]review.Placement, len(placed))
	for fp, pl := range placed {
		if !stored[fp] {
			*problems = append(*problems, fmt.Errorf("placement of an unknown finding %s (%s) dropped", fp, pl.Where))
			continue
		}
		out[fp] = pl
	}
	return out
}

// HeadMovedError is a pull request whose head is no longer the one the
// run was queued for.
type HeadMovedError struct{ From, To string }

func (e HeadMovedError) Error() string {
	return fmt.Sprintf("the head moved from %s to %s before the review started", text.ShortSHA(e.From), text.ShortSHA(e.To))
}

// headSource is the Source of a pull request run: when the pipeline first
// reads the change, the run learns (and records) the head it reviews, or
// stops when a newer head was pushed after it was queued.
type headSource struct {
	review.Source
	queued review.PullHead
	log    RunLog
}

// Preload fetches the whole head at once when the Source can (GitHub's
// archive: one call instead of one per file); the embedded interface
// alone would hide it from the pipeline.
func (s headSource) Preload(ctx context.Context) error {
	if p, ok := s.Source.(interface{ Preload(context.Context) error }); ok {
		return p.Preload(ctx)
	}
	return nil
}

// Change reads the change, and records on the run the revision the review
// reads (head, base and branch as GitHub gives them when the review
// starts) unless the run already names exactly that: a run queued without
// a head learns it only now, and the base a webhook payload gave may have
// moved since.
func (s headSource) Change(ctx context.Context) (review.Change, error) {
	change, err := s.Source.Change(ctx)
	if err != nil {
		return review.Change{}, fmt.Errorf("read pull request: %w", err)
	}
	if s.queued.SHA != "" && change.HeadSHA != s.queued.SHA {
		return review.Change{}, HeadMovedError{From: s.queued.SHA, To: change.HeadSHA}
	}
	if head := change.PullHead(); head != s.queued {
		return change, s.log.SetHead(ctx, head)
	}
	return change, nil
}
