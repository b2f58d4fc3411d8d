package github

import (
	"cmp"
	"slices"
	"strings"

	gh "github.com/google/go-github/v60/github"

	"github.com/mergeguard/mergeguard/review"
)

// This file is the pure half of publishing: it decides where each finding
// goes and renders the review request, from the Post and what earlier runs
// commented, without any call to GitHub. publish.go does the calls.

// Reasons a finding is in the body rather than inline.
const (
	reasonNotInDiff = "not on a line of the diff"
	reasonOverCap   = "over the inline comment limit"
	reasonRejected  = "GitHub refused the inline comment"
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

// planned is one finding and where it goes.
type planned struct {
	finding review.Finding
	fp      string
	where   string
	reason  string // for review.PlacedBody
	comment *gh.DraftReviewComment
	earlier int64 // for review.PlacedDuplicate: the earlier comment
}

// reviewPlan is the review to create: its event and every finding's place.
type reviewPlan struct {
	event string
	items []*planned // most severe first
	// capped is how many anchorable findings the inline limit sent to the
	// body; maxInline is that limit.
	capped, maxInline int
	text              textPolicy
}

// planReview places every finding of post: a duplicate when earlier (the
// bot's earlier inline comments by fingerprint) holds its fingerprint, when
// post.FollowUp lists it as still open or dismissed, or when it repeats
// one of this run, inline when the index accepts one of its
// lines and fewer than maxInline comments are planned, in the body
// otherwise.
func planReview(post addressed, earlier map[string]int64, maxInline int) *reviewPlan {
	pl := &reviewPlan{event: eventFor(post.Verdict.Verdict), maxInline: maxInline, text: newTextPolicy(post.PullURL)}
	seen := map[string]bool{}
	suppressed := suppressed(post.FollowUp)
	inline := 0
	for _, f := range sortedFindings(post.Findings) {
		it := &planned{finding: f, fp: f.Fingerprint}
		pl.items = append(pl.items, it)
		id, ok := earlier[it.fp]
		if prior, held := suppressed[it.fp]; held && !ok {
			id, ok = prior, true
		}
		if ok {
			it.where, it.earlier = review.PlacedDuplicate, id
			continue
		}
		if seen[it.fp] {
			it.where = review.PlacedDuplicate
			continue
		}
		seen[it.fp] = true
		comment, exact := anchor(post.Index, f)
		switch {
		case comment == nil:
			it.where, it.reason = review.PlacedBody, reasonNotInDiff
		case inline >= maxInline:
			it.where, it.reason = review.PlacedBody, reasonOverCap
			pl.capped++
		default:
			suggest := exact && sideOf(f) == review.SideRight
			comment.Body = gh.String(commentBody(pl.text, f, it.fp, suggest))
			it.where, it.comment = review.PlacedInline, comment
			inline++
		}
	}
	return pl
}

// inline returns the findings planned as inline comments.
func (pl *reviewPlan) inline() []*planned {
	var out []*planned
	for _, it := range pl.items {
		if it.where == review.PlacedInline {
			out = append(out, it)
		}
	}
	return out
}

// reject moves findings planned inline to the body: GitHub refused them.
func (pl *reviewPlan) reject(items []*planned) {
	for _, it := range items {
		it.where, it.reason, it.comment = review.PlacedBody, reasonRejected, nil
	}
}

// placements says where each fingerprint went; a fingerprint repeated in
// the run keeps its first place.
func (pl *reviewPlan) placements() map[string]review.Placement {
	out := make(map[string]review.Placement, len(pl.items))
	for _, it := range pl.items {
		if _, ok := out[it.fp]; !ok {
			out[it.fp] = review.Placement{Where: it.where, CommentID: it.earlier}
		}
	}
	return out
}

// request renders the CreateReview request of the plan.
func (pl *reviewPlan) request(post addressed) *gh.PullRequestReviewRequest {
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
func anchor(idx review.LineIndex, f review.Finding) (*gh.DraftReviewComment, bool) {
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
