package github

import (
	"context"
	"fmt"
	"net/http"

	gh "github.com/google/go-github/v60/github"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/diff"
	"github.com/mergeguard/mergeguard/review/text"
)

// Compare tells how head relates to base (two commits, or refs) and, when
// head is ahead of base, the unified diff from base to head: the diff of
// the commits pushed since base. A diff GitHub refuses as too large (406,
// as for a pull request's diff) is assembled from the comparison's
// per-file patches, as Source.Diff does. Behind, diverged and identical
// comparisons carry no diff: nothing of base alone can be reviewed
// incrementally. A commit GitHub does not know is review.ErrNotFound.
//
// It makes two calls when head is ahead (the comparison, one commit a
// page, then its diff) and one otherwise.
//
// GitHub API docs: https://docs.github.com/rest/commits/commits#compare-two-commits
func (r *Repo) Compare(ctx context.Context, base, head string) (review.Comparison, error) {
	where := fmt.Sprintf("compare %s...%s in %s", text.ShortSHA(base), text.ShortSHA(head), r.FullName())
	// One commit a page: the status and counts are all that is read; the
	// files come on the first page whatever its size.
	cmp, _, err := r.client.Repositories.CompareCommits(ctx, r.owner, r.name, base, head, &gh.ListOptions{PerPage: 1})
	if err != nil {
		return review.Comparison{}, fmt.Errorf("%s: %w", where, apiError(err))
	}
	out := review.Comparison{
		Status:   review.CompareStatus(cmp.GetStatus()),
		AheadBy:  cmp.GetAheadBy(),
		BehindBy: cmp.GetBehindBy(),
	}
	switch out.Status {
	case review.CompareAhead, review.CompareBehind, review.CompareDiverged, review.CompareIdentical:
	default:
		return review.Comparison{}, fmt.Errorf("%s: GitHub answered status %q", where, out.Status)
	}
	if out.Status != review.CompareAhead {
		return out, nil
	}
	raw, _, err := r.client.Repositories.CompareCommitsRaw(ctx, r.owner, r.name, base, head, gh.RawOptions{Type: gh.Diff})
	switch {
	case err == nil:
		out.Diff = raw
	case isStatus(err, http.StatusNotAcceptable):
		d, perr := diffFromPatches(cmp.Files)
		if perr != nil {
			return review.Comparison{}, fmt.Errorf("%s: diff from patches: %w", where, perr)
		}
		out.Diff = diff.Format(d)
	default:
		return review.Comparison{}, fmt.Errorf("%s: diff: %w", where, apiError(err))
	}
	return out, nil
}
