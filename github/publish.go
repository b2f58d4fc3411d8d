package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	gh "github.com/google/go-github/v60/github"

	"github.com/mergeguard/mergeguard/github/markdown"
	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/text"
)

// defaultMaxProbes bounds the pending reviews made to find the comments
// GitHub rejects (each probe is two content-creating requests).
const defaultMaxProbes = 16

// PublisherOptions configures a Publisher.
type PublisherOptions struct {
	// BotLogin is the App's bot account, "<app-slug>[bot]" as GET /app
	// gives the slug. It is required: only reviews and comments whose
	// author has exactly this login are read as MergeGuard's, dismissed or
	// deleted.
	BotLogin string
	// MaxInlineComments caps the inline comments of one review
	// (github.max_inline_comments); it is required, at least 1.
	MaxInlineComments int
	// KeepPending leaves the account's pending reviews alone: set it when
	// BotLogin is a person's account (a token's user), whose pending
	// reviews are their own unsubmitted drafts.
	KeepPending bool
	// DescriptionKey signs the markers of MergeGuard's section of pull
	// request descriptions (Repo.Describe; see DescriptionKey); without
	// it Describe refuses.
	DescriptionKey []byte
}

// Publisher posts MergeGuard's pull-request reviews. It is safe for
// concurrent use; it holds no per-review state.
type Publisher struct {
	botLogin    string
	maxInline   int
	maxProbes   int
	keepPending bool
}

// NewPublisher returns a Publisher. Publish refuses to post when
// opts.BotLogin is empty or opts.MaxInlineComments below 1.
func NewPublisher(opts PublisherOptions) *Publisher {
	return &Publisher{botLogin: opts.BotLogin, maxInline: opts.MaxInlineComments, maxProbes: defaultMaxProbes, keepPending: opts.KeepPending}
}

// addressed is a review.Post addressed to a repository: the one review
// Publish posts.
type addressed struct {
	review.Post
	Owner, Repo string
	// PullURL is the pull request's web address
	// (https://github.com/OWNER/REPO/pull/N). Markdown links and images in
	// what the model wrote stay live only when they point into this
	// repository; "" keeps none live.
	PullURL string
}

// published is a review Publish posted: the review.Posted with its event
// and the earlier REQUEST_CHANGES reviews of the bot it dismissed.
type published struct {
	review.Posted
	Event     string
	Dismissed []int64
}

// ErrPendingDraft is returned with KeepPending when the account has a pending review on the
// pull request, which blocks a new one and is not deleted.
var ErrPendingDraft = errors.New("the account has a pending (unsubmitted) review on the pull request: submit or delete it, then post again")

// Publish posts the review of one run as ONE pull-request review, the
// reviewdog way plus more:
//
//  1. A review of the bot whose marker line names the run means the run
//     already posted (a retried job): it is returned with AlreadyPosted set.
//  2. Findings whose fingerprint the marker line of an earlier inline
//     comment of the bot carries, or that post.FollowUp lists as still
//     open or dismissed, are not commented on again
//     (review.PlacedDuplicate).
//  3. The review is created on post.HeadSHA with the event of the
//     verdict's decision. Findings on lines the index accepts become inline
//     comments (at most MaxInlineComments, most severe first), with a
//     ```suggestion block when the suggestion replaces exactly the commented
//     lines; the rest are listed in the body, by file. What the model wrote
//     is rendered as untrusted text (see markdown.Policy).
//  4. GitHub rejects a whole review for one bad comment (422). The
//     rejected comments are then found by bisection with pending reviews
//     (each created without event, then deleted), moved to the body, and
//     the review is posted once; the review itself is never lost.
//  5. When this review does not request changes, the bot's earlier
//     REQUEST_CHANGES reviews are dismissed.
//
// Steps 2 and 3 are planReview (plan.go), which calls nothing. When the
// review was posted but a dismissal failed, Publish returns the Posted and
// an error wrapping review.ErrDismiss.
//
// GitHub API docs: https://docs.github.com/rest/pulls/reviews#create-a-review-for-a-pull-request
func (p *Publisher) Publish(ctx context.Context, client *gh.Client, post addressed) (published, error) {
	if p.botLogin == "" {
		return published{}, errors.New("publish review: the App's bot login is required (PublisherOptions.BotLogin)")
	}
	if p.maxInline < 1 {
		return published{}, errors.New("publish review: the cap on inline comments is required (PublisherOptions.MaxInlineComments, github.max_inline_comments)")
	}
	if err := post.validate(); err != nil {
		return published{}, err
	}
	where := fmt.Sprintf("%s/%s#%d", post.Owner, post.Repo, post.Number)
	reviews, earlier, err := p.readEarlier(ctx, client, post)
	if err != nil {
		return published{}, fmt.Errorf("publish review on %s: %w", where, err)
	}
	var posted published
	if rv := p.findRun(reviews, post.RunID); rv != nil {
		posted = published{Event: eventOfState(rv.GetState()), Posted: review.Posted{ReviewID: rv.GetID(), URL: rv.GetHTMLURL(), AlreadyPosted: true,
			Placements: placementsOf(post, rv.GetID(), earlier)}}
	} else {
		if err := p.deletePending(ctx, client, post, reviews); err != nil {
			return published{}, fmt.Errorf("publish review on %s: %w", where, err)
		}
		ids := make(map[string]int64, len(earlier))
		for fp, c := range earlier {
			ids[fp] = c.id
		}
		pl := markdown.PlanReview(post.Post, post.PullURL, ids, p.maxInline)
		rv, err := p.create(ctx, client, post, pl)
		if err != nil {
			return published{}, fmt.Errorf("publish review on %s: %w", where, err)
		}
		posted = published{Event: pl.Event, Posted: review.Posted{ReviewID: rv.GetID(), URL: rv.GetHTMLURL(), Placements: pl.Placements()}}
		if err := p.fillCommentIDs(ctx, client, post, &posted); err != nil {
			return posted, fmt.Errorf("publish review on %s: %w", where, err)
		}
	}
	if posted.Event == markdown.EventRequestChanges {
		return posted, nil
	}
	msg := fmt.Sprintf("MergeGuard no longer requests changes: a later review of %s found nothing blocking.", text.ShortSHA(post.HeadSHA))
	return posted, p.dismissEarlier(ctx, client, post, reviews, msg, &posted)
}

// DismissChangeRequests dismisses the bot's REQUEST_CHANGES reviews on
// pull request post.Number (post.Owner, post.Repo and post.HeadSHA are
// read) once nothing blocks it any more without a new review: a person
// dismissed its last blocking finding. It returns the dismissed reviews;
// an error wraps review.ErrDismiss for each one GitHub refused.
//
// GitHub API docs: https://docs.github.com/rest/pulls/reviews#dismiss-a-review-for-a-pull-request
func (p *Publisher) DismissChangeRequests(ctx context.Context, client *gh.Client, post addressed) ([]int64, error) {
	if p.botLogin == "" {
		return nil, errors.New("dismiss reviews: the App's bot login is required (PublisherOptions.BotLogin)")
	}
	reviews, err := listAll(ctx, 0, func(opts *gh.ListOptions) ([]*gh.PullRequestReview, *gh.Response, error) {
		return client.PullRequests.ListReviews(ctx, post.Owner, post.Repo, post.Number, opts)
	})
	if err != nil {
		return nil, fmt.Errorf("dismiss reviews on %s/%s#%d: list reviews: %w", post.Owner, post.Repo, post.Number, apiError(err))
	}
	var posted published
	msg := fmt.Sprintf("MergeGuard no longer requests changes: at %s the last blocking finding was dismissed.", text.ShortSHA(post.HeadSHA))
	err = p.dismissEarlier(ctx, client, post, reviews, msg, &posted)
	return posted.Dismissed, err
}

// earlierComment is an inline comment of the bot that carries a
// fingerprint.
type earlierComment struct{ id, reviewID int64 }

// readEarlier lists the pull request's reviews and the bot's inline
// comments by the fingerprint their marker line carries (the first
// comment of each).
func (p *Publisher) readEarlier(ctx context.Context, client *gh.Client, post addressed) ([]*gh.PullRequestReview, map[string]earlierComment, error) {
	reviews, err := listAll(ctx, 0, func(opts *gh.ListOptions) ([]*gh.PullRequestReview, *gh.Response, error) {
		return client.PullRequests.ListReviews(ctx, post.Owner, post.Repo, post.Number, opts)
	})
	if err != nil {
		return nil, nil, fmt.Errorf("list reviews: %w", apiError(err))
	}
	comments, err := listAll(ctx, 0, func(opts *gh.ListOptions) ([]*gh.PullRequestComment, *gh.Response, error) {
		return client.PullRequests.ListComments(ctx, post.Owner, post.Repo, post.Number, &gh.PullRequestListCommentsOptions{ListOptions: *opts})
	})
	if err != nil {
		return nil, nil, fmt.Errorf("list review comments: %w", apiError(err))
	}
	earlier := map[string]earlierComment{}
	for _, c := range comments {
		fp := p.marker(c.GetUser(), c.GetBody(), markdown.MarkerFP)
		if _, seen := earlier[fp]; fp != "" && !seen {
			earlier[fp] = earlierComment{id: c.GetID(), reviewID: c.GetPullRequestReviewID()}
		}
	}
	return reviews, earlier, nil
}

// marker returns the value of a marker key in a body the bot wrote, ""
// when the author is someone else or the body's last line does not carry
// the key.
func (p *Publisher) marker(author *gh.User, body, key string) string {
	if !p.isBot(author) {
		return ""
	}
	return markdown.ReadMarkers(body)[key]
}

func (post addressed) validate() error {
	switch {
	case post.Owner == "" || post.Repo == "" || post.Number <= 0:
		return fmt.Errorf("publish review: owner, repo and number are required (got %q/%q#%d)", post.Owner, post.Repo, post.Number)
	case post.HeadSHA == "":
		return errors.New("publish review: head sha is required")
	case !markdown.ValidMarkerValue(post.RunID):
		return fmt.Errorf("publish review: run id %q must be letters, digits, '.', '_', ':' and single '-'", post.RunID)
	}
	for i, f := range post.Findings {
		if !markdown.ValidMarkerValue(f.Fingerprint) {
			return fmt.Errorf("publish review: finding %d (%s:%d) has fingerprint %q; it must be non-empty letters, digits, '.', '_', ':' and single '-'", i, f.FilePath, f.LineStart, f.Fingerprint)
		}
	}
	return nil
}

// findRun returns the submitted review of the bot whose marker line names
// runID, nil when there is none.
func (p *Publisher) findRun(reviews []*gh.PullRequestReview, runID string) *gh.PullRequestReview {
	for _, rv := range reviews {
		if rv.GetState() != "PENDING" && p.marker(rv.GetUser(), rv.GetBody(), markdown.MarkerRun) == runID {
			return rv
		}
	}
	return nil
}

// isBot reports whether u is the App's bot account: exactly its login.
func (p *Publisher) isBot(u *gh.User) bool {
	return u.GetLogin() == p.botLogin
}

// deletePending deletes the bot's pending reviews, which an interrupted
// bisection may have left: GitHub allows one pending review per user.
// Pending reviews are visible only to their author. With KeepPending it
// deletes none: a pending review is then an error, ErrPendingDraft.
func (p *Publisher) deletePending(ctx context.Context, client *gh.Client, post addressed, reviews []*gh.PullRequestReview) error {
	for _, rv := range reviews {
		if rv.GetState() == "PENDING" && p.isBot(rv.GetUser()) {
			if p.keepPending {
				return fmt.Errorf("%w (review %d)", ErrPendingDraft, rv.GetID())
			}
			if _, _, err := client.PullRequests.DeletePendingReview(ctx, post.Owner, post.Repo, post.Number, rv.GetID()); err != nil {
				return fmt.Errorf("delete pending review %d: %w", rv.GetID(), apiError(err))
			}
		}
	}
	return nil
}

// dismissEarlier dismisses the bot's earlier REQUEST_CHANGES reviews (those
// with a run marker) and records them in posted.Dismissed.
func (p *Publisher) dismissEarlier(ctx context.Context, client *gh.Client, post addressed, reviews []*gh.PullRequestReview, msg string, posted *published) error {
	where := fmt.Sprintf("%s/%s#%d", post.Owner, post.Repo, post.Number)
	var errs []error
	for _, rv := range reviews {
		if rv.GetID() == posted.ReviewID || rv.GetState() != "CHANGES_REQUESTED" || p.marker(rv.GetUser(), rv.GetBody(), markdown.MarkerRun) == "" {
			continue
		}
		if _, _, err := client.PullRequests.DismissReview(ctx, post.Owner, post.Repo, post.Number, rv.GetID(), &gh.PullRequestReviewDismissalRequest{Message: &msg}); err != nil {
			errs = append(errs, fmt.Errorf("%w %d on %s: %w", review.ErrDismiss, rv.GetID(), where, err))
			continue
		}
		posted.Dismissed = append(posted.Dismissed, rv.GetID())
	}
	return errors.Join(errs...)
}

func eventOfState(state string) string {
	switch state {
	case "APPROVED":
		return markdown.EventApprove
	case "CHANGES_REQUESTED":
		return markdown.EventRequestChanges
	}
	return markdown.EventComment
}

// create posts the review; on a 422 it finds the rejected comments, moves
// them to the body and posts again, and as a last resort posts with every
// finding in the body.
func (p *Publisher) create(ctx context.Context, client *gh.Client, post addressed, pl *markdown.Plan) (*gh.PullRequestReview, error) {
	rv, _, err := client.PullRequests.CreateReview(ctx, post.Owner, post.Repo, post.Number, request(post, pl))
	if err == nil {
		return rv, nil
	}
	inline := pl.Inline()
	if !isStatus(err, http.StatusUnprocessableEntity) || len(inline) == 0 {
		return nil, fmt.Errorf("create review: %w", apiError(err))
	}
	rejected, perr := p.findRejected(ctx, client, post, inline)
	if perr != nil {
		return nil, fmt.Errorf("create review: %w (finding the rejected comments: %w)", err, perr)
	}
	if len(rejected) > 0 {
		pl.Reject(rejected)
		if rv, _, err = client.PullRequests.CreateReview(ctx, post.Owner, post.Repo, post.Number, request(post, pl)); err == nil {
			return rv, nil
		}
		if !isStatus(err, http.StatusUnprocessableEntity) || len(pl.Inline()) == 0 {
			return nil, fmt.Errorf("create review: %w", apiError(err))
		}
	}
	pl.Reject(pl.Inline())
	rv, _, err = client.PullRequests.CreateReview(ctx, post.Owner, post.Repo, post.Number, request(post, pl))
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
func (p *Publisher) findRejected(ctx context.Context, client *gh.Client, post addressed, items []*markdown.Item) ([]*markdown.Item, error) {
	bs := &bisection{client: client, post: post, probes: p.maxProbes}
	ok, err := bs.probe(ctx, nil)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, errors.New("GitHub rejects the review even without inline comments")
	}
	if err := bs.search(ctx, items, false); err != nil {
		return nil, err
	}
	return bs.rejected, nil
}

// bisection is the state of one findRejected.
type bisection struct {
	client   *gh.Client
	post     addressed
	probes   int // left
	rejected []*markdown.Item
}

// probe reports whether GitHub accepts a pending review with the comments
// of set.
func (bs *bisection) probe(ctx context.Context, set []*markdown.Item) (bool, error) {
	if bs.probes == 0 {
		return false, errProbesSpent
	}
	bs.probes--
	post := bs.post
	req := &gh.PullRequestReviewRequest{CommitID: gh.String(post.HeadSHA)}
	for _, it := range set {
		req.Comments = append(req.Comments, draft(it.Comment))
	}
	rv, _, err := bs.client.PullRequests.CreateReview(ctx, post.Owner, post.Repo, post.Number, req)
	if isStatus(err, http.StatusUnprocessableEntity) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("create pending review: %w", apiError(err))
	}
	if _, _, err := bs.client.PullRequests.DeletePendingReview(ctx, post.Owner, post.Repo, post.Number, rv.GetID()); err != nil {
		return false, fmt.Errorf("delete pending review %d: %w", rv.GetID(), apiError(err))
	}
	return true, nil
}

// search adds the rejected comments of set; knownBad says a probe of set
// already failed.
func (bs *bisection) search(ctx context.Context, set []*markdown.Item, knownBad bool) error {
	if len(set) == 0 {
		return nil
	}
	if !knownBad {
		ok, err := bs.probe(ctx, set)
		if errors.Is(err, errProbesSpent) {
			bs.rejected = append(bs.rejected, set...)
			return nil
		}
		if err != nil || ok {
			return err
		}
	}
	if len(set) == 1 {
		bs.rejected = append(bs.rejected, set[0])
		return nil
	}
	left, right := set[:len(set)/2], set[len(set)/2:]
	ok, err := bs.probe(ctx, left)
	switch {
	case errors.Is(err, errProbesSpent):
		bs.rejected = append(bs.rejected, set...)
		return nil
	case err != nil:
		return err
	case ok:
		return bs.search(ctx, right, true)
	}
	if err := bs.search(ctx, left, true); err != nil {
		return err
	}
	return bs.search(ctx, right, false)
}

// fillCommentIDs reads the new review's comments to record their ids.
//
// GitHub API docs: https://docs.github.com/rest/pulls/reviews#list-comments-for-a-pull-request-review
func (p *Publisher) fillCommentIDs(ctx context.Context, client *gh.Client, post addressed, posted *published) error {
	inline := false
	for _, pl := range posted.Placements {
		inline = inline || pl.Where == review.PlacedInline
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
		fp := p.marker(c.GetUser(), c.GetBody(), markdown.MarkerFP)
		if pl, ok := posted.Placements[fp]; ok && pl.Where == review.PlacedInline {
			pl.CommentID = c.GetID()
			posted.Placements[fp] = pl
		}
	}
	return nil
}

// placementsOf reconstructs where a run's findings went from the comments
// of its review (a retried job that finds its review posted).
func placementsOf(post addressed, reviewID int64, earlier map[string]earlierComment) map[string]review.Placement {
	out := make(map[string]review.Placement, len(post.Findings))
	for _, f := range post.Findings {
		fp := f.Fingerprint
		switch c, ok := earlier[fp]; {
		case ok && c.reviewID == reviewID:
			out[fp] = review.Placement{Where: review.PlacedInline, CommentID: c.id}
		case ok:
			out[fp] = review.Placement{Where: review.PlacedDuplicate, CommentID: c.id}
		default:
			out[fp] = review.Placement{Where: review.PlacedBody}
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

// request renders the CreateReview request of a plan.
func request(post addressed, pl *markdown.Plan) *gh.PullRequestReviewRequest {
	req := &gh.PullRequestReviewRequest{CommitID: gh.String(post.HeadSHA), Event: gh.String(pl.Event), Body: gh.String(pl.Body())}
	for _, it := range pl.Inline() {
		req.Comments = append(req.Comments, draft(it.Comment))
	}
	return req
}

// draft is an inline comment as GitHub takes it.
func draft(c *markdown.Comment) *gh.DraftReviewComment {
	d := &gh.DraftReviewComment{Path: gh.String(c.Path), Line: gh.Int(c.Line), Side: gh.String(c.Side), Body: gh.String(c.Body)}
	if c.StartLine > 0 {
		d.StartLine, d.StartSide = gh.Int(c.StartLine), gh.String(c.StartSide)
	}
	return d
}
