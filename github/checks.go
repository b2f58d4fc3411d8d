package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	gh "github.com/google/go-github/v60/github"

	"github.com/mergeguard/mergeguard/github/markdown"
	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/text"
)

// CheckName is the name of MergeGuard's check run, the name to require in
// branch protection or rulesets.
const CheckName = "MergeGuard"

// Check run statuses.
const (
	CheckQueued     = review.CheckQueued
	CheckInProgress = review.CheckInProgress
	CheckCompleted  = review.CheckCompleted
)

// Check run conclusions (GitHub also knows skipped, stale and timed_out).
const (
	ConclusionSuccess        = review.ConclusionSuccess
	ConclusionFailure        = review.ConclusionFailure
	ConclusionNeutral        = review.ConclusionNeutral
	ConclusionCancelled      = review.ConclusionCancelled
	ConclusionActionRequired = "action_required"
	ConclusionSkipped        = "skipped"
	ConclusionTimedOut       = "timed_out"
)

// MaxAnnotationsPerRequest is how many annotations GitHub takes in one
// create or update of a check run.
const MaxAnnotationsPerRequest = 50

// maxCheckText is the longest summary or text GitHub accepts, in
// characters.
const maxCheckText = 65535

// checkRun is one check run as GitHub takes it.
type checkRun struct {
	// Name defaults to CheckName.
	Name string
	// HeadSHA is the commit checked; required by CreateCheck.
	HeadSHA string
	// Status is CheckQueued, CheckInProgress or CheckCompleted; a
	// Conclusion implies CheckCompleted, as GitHub sets it.
	Status string
	// Conclusion is one of the Conclusion* constants; required with
	// CheckCompleted.
	Conclusion string
	// DetailsURL links the run's live page in MergeGuard.
	DetailsURL string
	// ExternalID is the run's id in MergeGuard.
	ExternalID string
	// Title and Summary (markdown, written by MergeGuard) are the
	// output's; Text is optional details. Untrusted text must be rendered
	// first (CheckOutput does).
	Title, Summary, Text string
	// Annotations go in batches of MaxAnnotationsPerRequest.
	Annotations []markdown.Annotation
	// StartedAt and CompletedAt default to now when the run starts or
	// completes.
	StartedAt, CompletedAt time.Time
}

func (c checkRun) validate(create bool) error {
	switch {
	case create && c.HeadSHA == "":
		return errors.New("check run: head sha is required")
	case c.Status == CheckCompleted && c.Conclusion == "":
		return errors.New("check run: a completed check needs a conclusion")
	case c.Conclusion != "" && c.Status != "" && c.Status != CheckCompleted:
		return fmt.Errorf("check run: conclusion %s with status %s (a conclusion completes the check)", c.Conclusion, c.Status)
	case c.Title == "" && c.Summary != "", c.Title != "" && c.Summary == "":
		return errors.New("check run: the output needs both a title and a summary")
	}
	for i, a := range c.Annotations {
		if a.Path == "" || a.StartLine <= 0 || a.EndLine < a.StartLine || a.Message == "" {
			return fmt.Errorf("check run: annotation %d (%s:%d-%d) needs a path, 1 <= start_line <= end_line and a message", i, a.Path, a.StartLine, a.EndLine)
		}
	}
	return nil
}

// fill sets the defaults: the name, the completed status of a conclusion,
// the completion time.
func (c checkRun) fill(now time.Time) checkRun {
	if c.Name == "" {
		c.Name = CheckName
	}
	if c.Conclusion != "" {
		c.Status = CheckCompleted
		if c.CompletedAt.IsZero() {
			c.CompletedAt = now
		}
	}
	return c
}

// output is the check's output with one batch of annotations, nil when
// it has neither title nor annotations.
func (c checkRun) output(batch []markdown.Annotation) *gh.CheckRunOutput {
	if c.Title == "" && len(batch) == 0 {
		return nil
	}
	o := &gh.CheckRunOutput{Title: gh.String(c.Title), Summary: gh.String(text.Clip(c.Summary, maxCheckText-10))}
	if c.Text != "" {
		o.Text = gh.String(text.Clip(c.Text, maxCheckText-10))
	}
	for _, a := range batch {
		ann := &gh.CheckRunAnnotation{
			Path: gh.String(a.Path), StartLine: gh.Int(a.StartLine), EndLine: gh.Int(a.EndLine),
			AnnotationLevel: gh.String(a.Level), Message: gh.String(a.Message),
		}
		if a.Title != "" {
			ann.Title = gh.String(a.Title)
		}
		if a.StartLine == a.EndLine && a.StartColumn > 0 {
			ann.StartColumn = gh.Int(a.StartColumn)
			if a.EndColumn >= a.StartColumn {
				ann.EndColumn = gh.Int(a.EndColumn)
			}
		}
		o.Annotations = append(o.Annotations, ann)
	}
	return o
}

func optString(s string) *string {
	if s == "" {
		return nil
	}
	return gh.String(s)
}

func optTime(t time.Time) *gh.Timestamp {
	if t.IsZero() {
		return nil
	}
	return &gh.Timestamp{Time: t.UTC()}
}

// batches cuts annotations into GitHub's requests: the first batch goes
// with the create or update, each other one in a PATCH of its own.
func batches(as []markdown.Annotation) [][]markdown.Annotation {
	var out [][]markdown.Annotation
	for len(as) > MaxAnnotationsPerRequest {
		out = append(out, as[:MaxAnnotationsPerRequest])
		as = as[MaxAnnotationsPerRequest:]
	}
	return append(out, as)
}

// CreateCheck creates MergeGuard's check run of c.HeadSHA (see
// createCheck) and returns its id; c.Annotate become its annotations.
func (r *Repo) CreateCheck(ctx context.Context, c review.Check) (int64, error) {
	return r.createCheck(ctx, runOf(c))
}

// UpdateCheck updates MergeGuard's check run id to c (see updateCheck).
func (r *Repo) UpdateCheck(ctx context.Context, id int64, c review.Check) error {
	return r.updateCheck(ctx, id, runOf(c))
}

// CheckSummary renders a pull request's ledger as a check's title and
// summary (see CheckSummary).
func (r *Repo) CheckSummary(ledger []review.LedgerEntry, blocking review.Severity, pullURL string) (title, summary string) {
	return markdown.CheckSummary(ledger, blocking, pullURL)
}

// runOf is MergeGuard's check as GitHub takes it.
func runOf(c review.Check) checkRun {
	run := checkRun{HeadSHA: c.HeadSHA, Status: c.Status, Conclusion: c.Conclusion, DetailsURL: c.DetailsURL,
		ExternalID: c.ExternalID, Title: c.Title, Summary: c.Summary}
	if len(c.Annotate) > 0 {
		run.Annotations = markdown.LedgerAnnotations(c.Annotate, c.Blocking, c.PullURL)
	}
	return run
}

// createCheck creates a check run on c.HeadSHA and returns its id. The
// first MaxAnnotationsPerRequest annotations go with the create, the rest
// in further updates. A batch GitHub refuses (422) is dropped and the
// error wraps review.ErrAnnotationsRejected, with the id of the created run.
//
// GitHub API docs: https://docs.github.com/rest/checks/runs#create-a-check-run
func (r *Repo) createCheck(ctx context.Context, c checkRun) (int64, error) {
	if err := c.validate(true); err != nil {
		return 0, err
	}
	c = c.fill(time.Now())
	if c.StartedAt.IsZero() && c.Status != CheckQueued {
		c.StartedAt = time.Now()
	}
	parts := batches(c.Annotations)
	opts := func(batch []markdown.Annotation) gh.CreateCheckRunOptions {
		return gh.CreateCheckRunOptions{
			Name: c.Name, HeadSHA: c.HeadSHA, DetailsURL: optString(c.DetailsURL), ExternalID: optString(c.ExternalID),
			Status: optString(c.Status), Conclusion: optString(c.Conclusion),
			StartedAt: optTime(c.StartedAt), CompletedAt: optTime(c.CompletedAt), Output: c.output(batch),
		}
	}
	run, _, err := r.client.Checks.CreateCheckRun(ctx, r.owner, r.name, opts(parts[0]))
	var rejected error
	if isStatus(err, http.StatusUnprocessableEntity) && len(parts[0]) > 0 {
		rejected = fmt.Errorf("%w: %w", review.ErrAnnotationsRejected, err)
		run, _, err = r.client.Checks.CreateCheckRun(ctx, r.owner, r.name, opts(nil))
	}
	if err != nil {
		return 0, fmt.Errorf("create check run on %s@%s: %w", r.FullName(), text.ShortSHA(c.HeadSHA), apiError(err))
	}
	id := run.GetID()
	return id, errors.Join(rejected, r.addAnnotations(ctx, id, c, parts[1:]))
}

// updateCheck updates check run id with what c sets (an empty field is
// left as it is); annotations are added, in batches as CreateCheck sends
// them.
//
// GitHub API docs: https://docs.github.com/rest/checks/runs#update-a-check-run
func (r *Repo) updateCheck(ctx context.Context, id int64, c checkRun) error {
	if err := c.validate(false); err != nil {
		return err
	}
	c = c.fill(time.Now())
	parts := batches(c.Annotations)
	opts := func(batch []markdown.Annotation) gh.UpdateCheckRunOptions {
		return gh.UpdateCheckRunOptions{
			Name: c.Name, DetailsURL: optString(c.DetailsURL), ExternalID: optString(c.ExternalID),
			Status: optString(c.Status), Conclusion: optString(c.Conclusion), CompletedAt: optTime(c.CompletedAt),
			Output: c.output(batch),
		}
	}
	_, _, err := r.client.Checks.UpdateCheckRun(ctx, r.owner, r.name, id, opts(parts[0]))
	var rejected error
	if isStatus(err, http.StatusUnprocessableEntity) && len(parts[0]) > 0 {
		rejected = fmt.Errorf("%w: %w", review.ErrAnnotationsRejected, err)
		_, _, err = r.client.Checks.UpdateCheckRun(ctx, r.owner, r.name, id, opts(nil))
	}
	if err != nil {
		return fmt.Errorf("update check run %d on %s: %w", id, r.FullName(), apiError(err))
	}
	return errors.Join(rejected, r.addAnnotations(ctx, id, c, parts[1:]))
}

// addAnnotations sends the further batches of annotations, each in a
// PATCH carrying the output's title and summary (GitHub requires them
// with an output).
func (r *Repo) addAnnotations(ctx context.Context, id int64, c checkRun, parts [][]markdown.Annotation) error {
	var errs []error
	for _, batch := range parts {
		if c.Title == "" {
			c.Title, c.Summary = "MergeGuard", "Findings on the lines of this commit."
		}
		_, _, err := r.client.Checks.UpdateCheckRun(ctx, r.owner, r.name, id, gh.UpdateCheckRunOptions{Name: c.Name, Output: c.output(batch)})
		switch {
		case isStatus(err, http.StatusUnprocessableEntity):
			errs = append(errs, fmt.Errorf("%w: check run %d: %w", review.ErrAnnotationsRejected, id, err))
		case err != nil:
			return errors.Join(append(errs, fmt.Errorf("add annotations to check run %d on %s: %w", id, r.FullName(), apiError(err)))...)
		}
	}
	return errors.Join(errs...)
}
