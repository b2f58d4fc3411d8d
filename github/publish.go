package github

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	gh "github.com/google/go-github/v60/github"

	"github.com/mergeguard/mergeguard/review"
)

// Review events.
const (
	EventApprove        = "APPROVE"
	EventRequestChanges = "REQUEST_CHANGES"
	EventComment        = "COMMENT"
)

// Where a finding was placed.
const (
	PlacedInline    = "inline"    // an inline comment of the review
	PlacedBody      = "body"      // listed in the review body
	PlacedDuplicate = "duplicate" // already commented on by an earlier review
)

// DefaultMaxInlineComments is how many inline comments one review carries
// by default. GitHub documents no maximum, but each review is one
// content-creating request under the secondary rate limits, and tool
// authors report rejected or "spammy" reviews with large batches; reviewdog
// caps at 30 per request after "403 You have triggered an abuse detection
// mechanism" (REVIEW_RULES.md §3). Further findings are summarised in the
// body.
const DefaultMaxInlineComments = 30

// defaultMaxProbes bounds the pending reviews made to find the comments
// GitHub rejects (each probe is two content-creating requests).
const defaultMaxProbes = 16

// LineIndex answers where GitHub accepts review comments on the pull
// request's diff; *diff.Index implements it.
type LineIndex interface {
	Commentable(path string, side review.Side, line int) bool
	CommentableRange(path string, side review.Side, start, end int) bool
}

// PublisherOptions configures a Publisher.
type PublisherOptions struct {
	// BotLogin is the App's bot account ("<app-slug>[bot]"). Only its
	// reviews and comments are ever read as ours, dismissed or deleted.
	// Empty means any account of type Bot whose posts carry MergeGuard's
	// markers.
	BotLogin string
	// MaxInlineComments caps the inline comments of one review; 0 means
	// DefaultMaxInlineComments.
	MaxInlineComments int
}

// Publisher posts MergeGuard's pull-request reviews. It is safe for
// concurrent use; it holds no per-review state.
type Publisher struct {
	botLogin  string
	maxInline int
	maxProbes int
}

// NewPublisher returns a Publisher.
func NewPublisher(opts PublisherOptions) *Publisher {
	p := &Publisher{botLogin: opts.BotLogin, maxInline: opts.MaxInlineComments, maxProbes: defaultMaxProbes}
	if p.maxInline <= 0 {
		p.maxInline = DefaultMaxInlineComments
	}
	return p
}

// Post is one review to publish.
type Post struct {
	Owner, Repo string
	Number      int
	// HeadSHA is the reviewed commit (the review's commit_id). Callers
	// check with HeadSHA that the pull request still points at it.
	HeadSHA string
	// RunID identifies the run; a review carrying its marker is never
	// posted twice. Letters, digits, ".", "_", ":" and single "-" only.
	RunID   string
	Verdict review.Verdict
	// Findings are the findings to post, each with its Fingerprint
	// (letters, digits, ".", "_", ":" and single "-", as in RunID).
	Findings []review.Finding
	// Index says which lines GitHub accepts comments on; nil puts every
	// finding in the body.
	Index LineIndex
	// AllowApprove lets the review APPROVE when the verdict is approve
	// and nothing blocks.
	AllowApprove bool
	// BlockingSeverity is the lowest severity of a verified finding that
	// makes the review REQUEST_CHANGES; empty means critical.
	BlockingSeverity review.Severity
	// DetailsURL links the review's page in MergeGuard's web UI.
	DetailsURL string
	// Footer is markdown appended to the review body.
	Footer string
}

// Placement says where a finding went.
type Placement struct {
	// Where is PlacedInline, PlacedBody or PlacedDuplicate.
	Where string
	// CommentID is the inline comment (for PlacedDuplicate, the earlier
	// one); 0 in the body.
	CommentID int64
}

// Posted describes a published review.
type Posted struct {
	ReviewID int64
	URL      string
	Event    string
	// AlreadyPosted is set when a review of this run existed and nothing
	// new was posted.
	AlreadyPosted bool
	// Placements maps each finding's fingerprint to where it went.
	Placements map[string]Placement
	// Dismissed lists the earlier REQUEST_CHANGES reviews of the bot this
	// review dismissed.
	Dismissed []int64
}

// ErrDismiss wraps the failure to dismiss an earlier review after the new
// one was posted. Publish then returns the Posted with the error.
var ErrDismiss = errors.New("dismiss earlier review")

// Publish posts the review of one run as ONE pull-request review, the
// reviewdog way plus more:
//
//  1. A review of the bot carrying the run's marker means the run already
//     posted (a retried job): it is returned with AlreadyPosted set.
//  2. Findings whose fingerprint an earlier comment of the bot carries are
//     not commented on again (PlacedDuplicate).
//  3. The review is created on post.HeadSHA with event REQUEST_CHANGES when
//     a verified finding is at or above BlockingSeverity, APPROVE when
//     approving is allowed and the verdict approves, COMMENT otherwise.
//     Findings on lines the index accepts become inline comments (at most
//     MaxInlineComments, most severe first), with a ```suggestion block
//     when the suggestion replaces exactly the commented lines; the rest
//     are listed in the body, by file.
//  4. GitHub rejects a whole review for one bad comment (422). The
//     rejected comments are then found by bisection with pending reviews
//     (each created without event, then deleted), moved to the body, and
//     the review is posted once; the review itself is never lost.
//  5. When this review does not request changes, the bot's earlier
//     REQUEST_CHANGES reviews are dismissed.
//
// When the review was posted but a dismissal failed, Publish returns the
// Posted and an error wrapping ErrDismiss.
//
// GitHub API docs: https://docs.github.com/rest/pulls/reviews#create-a-review-for-a-pull-request
func (p *Publisher) Publish(ctx context.Context, client *gh.Client, post Post) (Posted, error) {
	if err := post.validate(); err != nil {
		return Posted{}, err
	}
	where := fmt.Sprintf("%s/%s#%d", post.Owner, post.Repo, post.Number)
	reviews, err := listAll(ctx, 0, func(opts *gh.ListOptions) ([]*gh.PullRequestReview, *gh.Response, error) {
		return client.PullRequests.ListReviews(ctx, post.Owner, post.Repo, post.Number, opts)
	})
	if err != nil {
		return Posted{}, fmt.Errorf("publish review on %s: list reviews: %w", where, apiError(err))
	}
	comments, err := listAll(ctx, 0, func(opts *gh.ListOptions) ([]*gh.PullRequestComment, *gh.Response, error) {
		return client.PullRequests.ListComments(ctx, post.Owner, post.Repo, post.Number, &gh.PullRequestListCommentsOptions{ListOptions: *opts})
	})
	if err != nil {
		return Posted{}, fmt.Errorf("publish review on %s: list review comments: %w", where, apiError(err))
	}
	earlier := map[string]*gh.PullRequestComment{}
	for _, c := range comments {
		if p.isBot(c.GetUser()) {
			for _, fp := range postedFingerprints(c.GetBody()) {
				if _, seen := earlier[fp]; !seen {
					earlier[fp] = c
				}
			}
		}
	}

	var posted Posted
	if rv := p.findRun(reviews, post.RunID); rv != nil {
		posted = Posted{ReviewID: rv.GetID(), URL: rv.GetHTMLURL(), Event: eventOfState(rv.GetState()), AlreadyPosted: true,
			Placements: placementsOf(post, rv.GetID(), earlier)}
	} else {
		if err := p.deletePending(ctx, client, post, reviews); err != nil {
			return Posted{}, fmt.Errorf("publish review on %s: %w", where, err)
		}
		pl := p.plan(post, earlier)
		rv, err := p.create(ctx, client, post, pl)
		if err != nil {
			return Posted{}, fmt.Errorf("publish review on %s: %w", where, err)
		}
		posted = Posted{ReviewID: rv.GetID(), URL: rv.GetHTMLURL(), Event: pl.event, Placements: pl.placements()}
		if err := p.fillCommentIDs(ctx, client, post, &posted); err != nil {
			return posted, fmt.Errorf("publish review on %s: %w", where, err)
		}
	}
	if posted.Event == EventRequestChanges {
		return posted, nil
	}
	var errs []error
	for _, rv := range reviews {
		if rv.GetID() == posted.ReviewID || rv.GetState() != "CHANGES_REQUESTED" || !p.isBot(rv.GetUser()) || !strings.Contains(rv.GetBody(), markerPrefix) {
			continue
		}
		msg := fmt.Sprintf("MergeGuard no longer requests changes: a later review of %s found nothing blocking.", shortSHA(post.HeadSHA))
		if _, _, err := client.PullRequests.DismissReview(ctx, post.Owner, post.Repo, post.Number, rv.GetID(), &gh.PullRequestReviewDismissalRequest{Message: &msg}); err != nil {
			errs = append(errs, fmt.Errorf("%w %d on %s: %w", ErrDismiss, rv.GetID(), where, err))
			continue
		}
		posted.Dismissed = append(posted.Dismissed, rv.GetID())
	}
	return posted, errors.Join(errs...)
}

func (post Post) validate() error {
	switch {
	case post.Owner == "" || post.Repo == "" || post.Number <= 0:
		return fmt.Errorf("publish review: owner, repo and number are required (got %q/%q#%d)", post.Owner, post.Repo, post.Number)
	case post.HeadSHA == "":
		return errors.New("publish review: head sha is required")
	case !markerValueRE.MatchString(post.RunID):
		return fmt.Errorf("publish review: run id %q must be letters, digits, '.', '_', ':' and single '-'", post.RunID)
	}
	for i, f := range post.Findings {
		if !markerValueRE.MatchString(f.Fingerprint) {
			return fmt.Errorf("publish review: finding %d (%s:%d) has fingerprint %q; it must be non-empty letters, digits, '.', '_', ':' and single '-'", i, f.FilePath, f.LineStart, f.Fingerprint)
		}
	}
	return nil
}

func (p *Publisher) findRun(reviews []*gh.PullRequestReview, runID string) *gh.PullRequestReview {
	marker := runMarker(runID)
	for _, rv := range reviews {
		if rv.GetState() != "PENDING" && p.isBot(rv.GetUser()) && strings.Contains(rv.GetBody(), marker) {
			return rv
		}
	}
	return nil
}

// isBot reports whether u is the App's bot account.
func (p *Publisher) isBot(u *gh.User) bool {
	if p.botLogin != "" {
		return strings.EqualFold(u.GetLogin(), p.botLogin)
	}
	return u.GetType() == "Bot"
}

// deletePending deletes the bot's pending reviews, which an interrupted
// bisection may have left: GitHub allows one pending review per user.
// Pending reviews are visible only to their author.
func (p *Publisher) deletePending(ctx context.Context, client *gh.Client, post Post, reviews []*gh.PullRequestReview) error {
	for _, rv := range reviews {
		if rv.GetState() == "PENDING" && p.isBot(rv.GetUser()) {
			if _, _, err := client.PullRequests.DeletePendingReview(ctx, post.Owner, post.Repo, post.Number, rv.GetID()); err != nil {
				return fmt.Errorf("delete pending review %d: %w", rv.GetID(), apiError(err))
			}
		}
	}
	return nil
}

func eventOfState(state string) string {
	switch state {
	case "APPROVED":
		return EventApprove
	case "CHANGES_REQUESTED":
		return EventRequestChanges
	}
	return EventComment
}

// decideEvent chooses the review's event: REQUEST_CHANGES on a verified
// finding at or above the blocking severity, APPROVE when allowed and the
// verdict approves, COMMENT otherwise.
func decideEvent(post Post) string {
	blocking := post.BlockingSeverity
	if blocking.Rank() == 0 {
		blocking = review.SeverityCritical
	}
	for _, f := range post.Findings {
		if f.VerificationStatus == review.Verified && f.Severity.AtLeast(blocking) {
			return EventRequestChanges
		}
	}
	if post.AllowApprove && post.Verdict.Verdict == review.DecisionApprove {
		return EventApprove
	}
	return EventComment
}

// Reasons a finding is in the body rather than inline.
const (
	reasonNotInDiff = "not on a line of the diff"
	reasonOverCap   = "over the inline comment limit"
	reasonRejected  = "GitHub refused the inline comment"
)

// planned is one finding and where it goes.
type planned struct {
	finding review.Finding
	fp      string
	where   string
	reason  string // for PlacedBody
	comment *gh.DraftReviewComment
	earlier int64 // for PlacedDuplicate
}

type plan struct {
	event string
	items []*planned // most severe first
	// capped is how many anchorable findings the inline limit sent to the
	// body; maxInline is that limit.
	capped, maxInline int
}

// plan places every finding: duplicate, inline or body.
func (p *Publisher) plan(post Post, earlier map[string]*gh.PullRequestComment) *plan {
	pl := &plan{event: decideEvent(post), maxInline: p.maxInline}
	seen := map[string]bool{}
	inline := 0
	for _, f := range sortedFindings(post.Findings) {
		it := &planned{finding: f, fp: f.Fingerprint}
		pl.items = append(pl.items, it)
		if c, ok := earlier[it.fp]; ok {
			it.where, it.earlier = PlacedDuplicate, c.GetID()
			continue
		}
		if seen[it.fp] {
			it.where = PlacedDuplicate
			continue
		}
		seen[it.fp] = true
		comment, exact := anchor(post.Index, f)
		switch {
		case comment == nil:
			it.where, it.reason = PlacedBody, reasonNotInDiff
		case inline >= p.maxInline:
			it.where, it.reason = PlacedBody, reasonOverCap
			pl.capped++
		default:
			suggest := exact && sideOf(f) == review.SideRight
			comment.Body = gh.String(commentBody(f, it.fp, suggest))
			it.where, it.comment = PlacedInline, comment
			inline++
		}
	}
	return pl
}

func (pl *plan) inline() []*planned {
	var out []*planned
	for _, it := range pl.items {
		if it.where == PlacedInline {
			out = append(out, it)
		}
	}
	return out
}

func (pl *plan) placements() map[string]Placement {
	out := make(map[string]Placement, len(pl.items))
	for _, it := range pl.items {
		if _, ok := out[it.fp]; !ok {
			out[it.fp] = Placement{Where: it.where, CommentID: it.earlier}
		}
	}
	return out
}

// sortedFindings orders findings most important first: severity, then
// verified before the rest, then file and line.
func sortedFindings(fs []review.Finding) []review.Finding {
	out := slices.Clone(fs)
	slices.SortStableFunc(out, func(a, b review.Finding) int {
		return cmp.Or(
			cmp.Compare(b.Severity.Rank(), a.Severity.Rank()),
			cmp.Compare(b.VerificationStatus.Rank(), a.VerificationStatus.Rank()),
			strings.Compare(a.FilePath, b.FilePath),
			cmp.Compare(a.LineStart, b.LineStart),
		)
	})
	return out
}

func sideOf(f review.Finding) review.Side {
	if f.Side == review.SideLeft {
		return review.SideLeft
	}
	return review.SideRight
}

// maxAnchorScan bounds the search for a commentable line inside a range
// that GitHub would not accept whole.
const maxAnchorScan = 500

// anchor returns the inline comment position of a finding, nil when no
// line of it is commentable; exact reports whether the comment covers
// exactly the finding's lines. Single-line comments carry line and side
// only (GitHub rejects start_line == line); a range carries start_line and
// start_side only when the index accepts the whole range.
func anchor(idx LineIndex, f review.Finding) (*gh.DraftReviewComment, bool) {
	if idx == nil || f.LineStart <= 0 || f.FilePath == "" {
		return nil, false
	}
	side := sideOf(f)
	start, end := f.LineStart, max(f.LineEnd, f.LineStart)
	c := &gh.DraftReviewComment{Path: gh.String(f.FilePath), Side: gh.String(string(side))}
	switch {
	case start == end && idx.Commentable(f.FilePath, side, end):
		c.Line = gh.Int(end)
		return c, true
	case start < end && idx.CommentableRange(f.FilePath, side, start, end):
		c.StartLine, c.StartSide, c.Line = gh.Int(start), gh.String(string(side)), gh.Int(end)
		return c, true
	}
	for line := start; line <= end && line < start+maxAnchorScan; line++ {
		if idx.Commentable(f.FilePath, side, line) {
			c.Line = gh.Int(line)
			return c, false
		}
	}
	return nil, false
}

// request builds the CreateReview request of a plan.
func (pl *plan) request(post Post) *gh.PullRequestReviewRequest {
	req := &gh.PullRequestReviewRequest{
		CommitID: gh.String(post.HeadSHA),
		Event:    gh.String(pl.event),
		Body:     gh.String(reviewBody(post, pl)),
	}
	for _, it := range pl.inline() {
		req.Comments = append(req.Comments, it.comment)
	}
	return req
}

// create posts the review; on a 422 it finds the rejected comments, moves
// them to the body and posts again, and as a last resort posts with every
// finding in the body.
func (p *Publisher) create(ctx context.Context, client *gh.Client, post Post, pl *plan) (*gh.PullRequestReview, error) {
	rv, _, err := client.PullRequests.CreateReview(ctx, post.Owner, post.Repo, post.Number, pl.request(post))
	if err == nil {
		return rv, nil
	}
	inline := pl.inline()
	if !isStatus(err, http.StatusUnprocessableEntity) || len(inline) == 0 {
		return nil, fmt.Errorf("create review: %w", apiError(err))
	}
	rejected, perr := p.findRejected(ctx, client, post, inline)
	if perr != nil {
		return nil, fmt.Errorf("create review: %w (finding the rejected comments: %w)", err, perr)
	}
	if len(rejected) > 0 {
		for _, it := range rejected {
			it.where, it.reason, it.comment = PlacedBody, reasonRejected, nil
		}
		if rv, _, err = client.PullRequests.CreateReview(ctx, post.Owner, post.Repo, post.Number, pl.request(post)); err == nil {
			return rv, nil
		}
		if !isStatus(err, http.StatusUnprocessableEntity) || len(pl.inline()) == 0 {
			return nil, fmt.Errorf("create review: %w", apiError(err))
		}
	}
	for _, it := range pl.inline() {
		it.where, it.reason, it.comment = PlacedBody, reasonRejected, nil
	}
	rv, _, err = client.PullRequests.CreateReview(ctx, post.Owner, post.Repo, post.Number, pl.request(post))
	if err != nil {
		return nil, fmt.Errorf("create review without inline comments: %w", apiError(err))
	}
	return rv, nil
}

// errProbesSpent ends a bisection that used its probes.
var errProbesSpent = errors.New("probes spent")

// findRejected finds the inline comments GitHub refuses by bisection:
// each probe creates a pending review (no event, no body) with some of the
// comments and deletes it when GitHub accepts it. A first probe without
// comments checks that the review itself is acceptable. When the probes
// run out, the comments not yet cleared count as rejected.
func (p *Publisher) findRejected(ctx context.Context, client *gh.Client, post Post, items []*planned) ([]*planned, error) {
	probes := p.maxProbes
	probe := func(set []*planned) (bool, error) {
		if probes == 0 {
			return false, errProbesSpent
		}
		probes--
		req := &gh.PullRequestReviewRequest{CommitID: gh.String(post.HeadSHA)}
		for _, it := range set {
			req.Comments = append(req.Comments, it.comment)
		}
		rv, _, err := client.PullRequests.CreateReview(ctx, post.Owner, post.Repo, post.Number, req)
		if isStatus(err, http.StatusUnprocessableEntity) {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("create pending review: %w", apiError(err))
		}
		if _, _, err := client.PullRequests.DeletePendingReview(ctx, post.Owner, post.Repo, post.Number, rv.GetID()); err != nil {
			return false, fmt.Errorf("delete pending review %d: %w", rv.GetID(), apiError(err))
		}
		return true, nil
	}
	ok, err := probe(nil)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, errors.New("GitHub rejects the review even without inline comments")
	}
	var rejected []*planned
	// search adds the rejected comments of set; knownBad says a probe of
	// set already failed.
	var search func(set []*planned, knownBad bool) error
	search = func(set []*planned, knownBad bool) error {
		if len(set) == 0 {
			return nil
		}
		if !knownBad {
			ok, err := probe(set)
			if errors.Is(err, errProbesSpent) {
				rejected = append(rejected, set...)
				return nil
			}
			if err != nil || ok {
				return err
			}
		}
		if len(set) == 1 {
			rejected = append(rejected, set[0])
			return nil
		}
		left, right := set[:len(set)/2], set[len(set)/2:]
		ok, err := probe(left)
		switch {
		case errors.Is(err, errProbesSpent):
			rejected = append(rejected, set...)
			return nil
		case err != nil:
			return err
		case ok:
			return search(right, true)
		}
		if err := search(left, true); err != nil {
			return err
		}
		return search(right, false)
	}
	if err := search(items, false); err != nil {
		return nil, err
	}
	return rejected, nil
}

// fillCommentIDs reads the new review's comments to record their ids.
//
// GitHub API docs: https://docs.github.com/rest/pulls/reviews#list-comments-for-a-pull-request-review
func (p *Publisher) fillCommentIDs(ctx context.Context, client *gh.Client, post Post, posted *Posted) error {
	inline := false
	for _, pl := range posted.Placements {
		inline = inline || pl.Where == PlacedInline
	}
	if !inline {
		return nil
	}
	comments, err := listAll(ctx, 0, func(opts *gh.ListOptions) ([]*gh.PullRequestComment, *gh.Response, error) {
		return client.PullRequests.ListReviewComments(ctx, post.Owner, post.Repo, post.Number, posted.ReviewID, opts)
	})
	if err != nil {
		return fmt.Errorf("list comments of review %d: %w", posted.ReviewID, apiError(err))
	}
	for _, c := range comments {
		for _, fp := range postedFingerprints(c.GetBody()) {
			if pl, ok := posted.Placements[fp]; ok && pl.Where == PlacedInline {
				pl.CommentID = c.GetID()
				posted.Placements[fp] = pl
			}
		}
	}
	return nil
}

// placementsOf reconstructs where a run's findings went from the comments
// of its review (a retried job that finds its review posted).
func placementsOf(post Post, reviewID int64, earlier map[string]*gh.PullRequestComment) map[string]Placement {
	out := make(map[string]Placement, len(post.Findings))
	for _, f := range post.Findings {
		fp := f.Fingerprint
		switch c, ok := earlier[fp]; {
		case ok && c.GetPullRequestReviewID() == reviewID:
			out[fp] = Placement{Where: PlacedInline, CommentID: c.GetID()}
		case ok:
			out[fp] = Placement{Where: PlacedDuplicate, CommentID: c.GetID()}
		default:
			out[fp] = Placement{Where: PlacedBody}
		}
	}
	return out
}

// listAll collects the pages of a GitHub list, 100 a page: every page, or
// the first limit items when limit > 0.
func listAll[T any](ctx context.Context, limit int, list func(*gh.ListOptions) ([]T, *gh.Response, error)) ([]T, error) {
	var all []T
	opts := &gh.ListOptions{PerPage: perPage}
	for {
		page, resp, err := list(opts)
		if err != nil {
			return nil, err
		}
		all = append(all, page...)
		if limit > 0 && len(all) >= limit {
			return all[:limit], nil
		}
		if resp.NextPage == 0 {
			return all, nil
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		opts.Page = resp.NextPage
	}
}

func shortSHA(sha string) string { return sha[:min(len(sha), 7)] }
