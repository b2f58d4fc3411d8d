package markdown

import (
	"cmp"
	"slices"
	"strings"

	"github.com/mergeguard/mergeguard/review"
)

// This file is the pure half of publishing: it decides where each finding
// goes and renders the review request, from the Post and what earlier runs
// commented, without any call to GitHub. publish.go does the calls.

// Reasons a finding is in the body rather than inline.
const (
	reasonNotInDiff = "not on a line of the diff"
	reasonOverCap   = "over the inline comment limit"
	ReasonRejected  = "GitHub refused the inline comment"
)

// Review events.
const (
	EventApprove        = "APPROVE"
	EventRequestChanges = "REQUEST_CHANGES"
	EventComment        = "COMMENT"
)

// eventFor maps the verdict the pipeline decided to the review's event.
// The pipeline has applied allow_approve and blocking_severity; an unknown
// decision comments.
func eventFor(d review.Decision) string {
	switch d {
	case review.DecisionApprove:
		return EventApprove
	case review.DecisionRequestChanges:
		return EventRequestChanges
	}
	return EventComment
}

// Item is one finding and where it goes.
type Item struct {
	Finding     review.Finding
	Fingerprint string
	// Where is the review.Placed* place; Reason says why a finding is in
	// the body.
	Where, Reason string
	// Comment is the inline comment of a finding placed inline.
	Comment *Comment
	// Earlier is the earlier comment of a review.PlacedDuplicate.
	Earlier int64
}

// Comment is an inline comment of a review: on Line of Path, on Side; a
// range starts at StartLine (0 for one line), on StartSide.
type Comment struct {
	Path            string
	Line, StartLine int
	Side, StartSide string
	Body            string
}

// Plan is the review to create: its event and every finding's place.
type Plan struct {
	// Event is the review's event (EventApprove, EventRequestChanges,
	// EventComment); Items every finding's place, most severe first.
	Event string
	Items []*Item
	// capped is how many anchorable findings the inline limit sent to the
	// body; maxInline is that limit.
	capped, maxInline int
	text              Policy
	pullURL           string
	post              review.Post // what the plan places
}

// PlanReview places every finding of post: a duplicate when earlier (the
// bot's earlier inline comments by fingerprint) holds its fingerprint, when
// post.FollowUp lists it as still open or dismissed, or when it repeats
// one of this run, inline when the index accepts one of its
// lines and fewer than maxInline comments are planned, in the body
// otherwise.
func PlanReview(post review.Post, pullURL string, earlier map[string]int64, maxInline int) *Plan {
	pl := &Plan{Event: eventFor(post.Verdict.Verdict), maxInline: maxInline, text: NewPolicy(pullURL), pullURL: pullURL, post: post}
	seen := map[string]bool{}
	suppressed := suppressed(post.FollowUp)
	inline := 0
	for _, f := range sortedFindings(post.Findings) {
		it := &Item{Finding: f, Fingerprint: f.Fingerprint}
		pl.Items = append(pl.Items, it)
		id, ok := earlier[it.Fingerprint]
		if prior, held := suppressed[it.Fingerprint]; held && !ok {
			id, ok = prior, true
		}
		if ok {
			it.Where, it.Earlier = review.PlacedDuplicate, id
			continue
		}
		if seen[it.Fingerprint] {
			it.Where = review.PlacedDuplicate
			continue
		}
		seen[it.Fingerprint] = true
		comment, exact := anchor(post.Index, f)
		switch {
		case comment == nil:
			it.Where, it.Reason = review.PlacedBody, reasonNotInDiff
		case inline >= maxInline:
			it.Where, it.Reason = review.PlacedBody, reasonOverCap
			pl.capped++
		default:
			suggest := exact && sideOf(f) == review.SideRight
			comment.Body = commentBody(pl.text, f, it.Fingerprint, suggest)
			it.Where, it.Comment = review.PlacedInline, comment
			inline++
		}
	}
	return pl
}

// Inline returns the findings planned as inline comments.
func (pl *Plan) Inline() []*Item {
	var out []*Item
	for _, it := range pl.Items {
		if it.Where == review.PlacedInline {
			out = append(out, it)
		}
	}
	return out
}

// Reject moves findings planned inline to the body: GitHub refused them.
func (pl *Plan) Reject(items []*Item) {
	for _, it := range items {
		it.Where, it.Reason, it.Comment = review.PlacedBody, ReasonRejected, nil
	}
}

// Placements says where each fingerprint went; a fingerprint repeated in
// the run keeps its first place.
func (pl *Plan) Placements() map[string]review.Placement {
	out := make(map[string]review.Placement, len(pl.Items))
	for _, it := range pl.Items {
		if _, ok := out[it.Fingerprint]; !ok {
			out[it.Fingerprint] = review.Placement{Where: it.Where, CommentID: it.Earlier}
		}
	}
	return out
}

// sortedFindings orders findings most important first (findingOrder).
func sortedFindings(fs []review.Finding) []review.Finding {
	out := slices.Clone(fs)
	slices.SortStableFunc(out, findingOrder)
	return out
}

// findingOrder orders findings by severity, then verified before the
// rest, then file and line.
func findingOrder(a, b review.Finding) int {
	return cmp.Or(
		cmp.Compare(b.Severity.Rank(), a.Severity.Rank()),
		cmp.Compare(b.VerificationStatus.Rank(), a.VerificationStatus.Rank()),
		strings.Compare(a.FilePath, b.FilePath),
		cmp.Compare(a.LineStart, b.LineStart),
	)
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
func anchor(idx review.LineIndex, f review.Finding) (*Comment, bool) {
	if idx == nil || f.LineStart <= 0 || f.FilePath == "" {
		return nil, false
	}
	side := sideOf(f)
	start, end := f.LineStart, max(f.LineEnd, f.LineStart)
	c := &Comment{Path: f.FilePath, Side: string(side)}
	switch {
	case start == end && idx.Commentable(f.FilePath, side, end):
		c.Line = end
		return c, true
	case start < end && idx.CommentableRange(f.FilePath, side, start, end):
		c.StartLine, c.StartSide, c.Line = start, string(side), end
		return c, true
	}
	for line := start; line <= end && line < start+maxAnchorScan; line++ {
		if idx.Commentable(f.FilePath, side, line) {
			c.Line = line
			return c, false
		}
	}
	return nil, false
}
