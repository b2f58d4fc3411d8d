package github

import (
	"context"
	"errors"
	"fmt"

	gh "github.com/google/go-github/v60/github"

	"github.com/mergeguard/mergeguard/github/markdown"
	"github.com/mergeguard/mergeguard/review"
)

// ErrDescriptionTooLong is returned when the description with MergeGuard's
// section would be longer than GitHub takes (markdown.MaxBodyLength characters).
var ErrDescriptionTooLong = errors.New("the pull request's description is too long to add MergeGuard's walkthrough to (GitHub takes at most 65536 characters)")

// errNoDescriptionKey: Describe needs the key that signs its markers.
var errNoDescriptionKey = errors.New("no key to sign the description's markers (PublisherOptions.DescriptionKey)")

// Describe writes desc into the description of pull request number,
// between MergeGuard's markers, and reports whether the description
// changed. The description is read right before it is written, so an
// edit the author made while the review ran is kept; GitHub offers no
// conditional update of a pull request, so an edit made between that read
// and the write (well under a second) is lost: the accepted race.
//
// GitHub API docs: https://docs.github.com/rest/pulls/pulls#update-a-pull-request
func (r *Repo) Describe(ctx context.Context, number int, desc review.Description) (bool, error) {
	if len(r.descKey) == 0 {
		return false, errNoDescriptionKey
	}
	if desc.Walkthrough == nil {
		return false, errors.New("describe: the review has no walkthrough")
	}
	pr, _, err := r.client.PullRequests.Get(ctx, r.owner, r.name, number)
	if err != nil {
		return false, fmt.Errorf("read the description of %s#%d: %w", r.FullName(), number, apiError(err))
	}
	d := markdown.Section{Key: r.descKey, Repo: r.FullName(), Number: number}
	old := pr.GetBody()
	body := d.Splice(old, markdown.DescriptionText(r.PullURL(number), desc))
	if body == old {
		return false, nil
	}
	if len([]rune(body)) > markdown.MaxBodyLength {
		return false, review.DescriptionTooLongError{Err: ErrDescriptionTooLong}
	}
	if _, _, err := r.client.PullRequests.Edit(ctx, r.owner, r.name, number, &gh.PullRequest{Body: gh.String(body)}); err != nil {
		return false, fmt.Errorf("write the description of %s#%d: %w", r.FullName(), number, apiError(err))
	}
	return true, nil
}
