package webhook

import (
	"context"

	"github.com/mergeguard/mergeguard/github"
	"github.com/mergeguard/mergeguard/review"
)

// NewGitHub returns the GitHub that comment commands use: each call opens
// the repository's handle of the App's installation.
func NewGitHub(installations *github.Installations) GitHub { return repoGitHub{installations} }

type repoGitHub struct{ i *github.Installations }

func (g repoGitHub) CanWrite(ctx context.Context, installationID int64, repo, user string) (bool, error) {
	r, err := g.i.Repo(installationID, repo)
	if err != nil {
		return false, err
	}
	return r.CanWrite(ctx, user)
}

func (g repoGitHub) Head(ctx context.Context, installationID int64, repo string, number int) (review.PullHead, error) {
	r, err := g.i.Repo(installationID, repo)
	if err != nil {
		return review.PullHead{}, err
	}
	return r.Head(ctx, number)
}

func (g repoGitHub) React(ctx context.Context, installationID int64, repo string, commentID int64, reaction string) error {
	r, err := g.i.Repo(installationID, repo)
	if err != nil {
		return err
	}
	return r.React(ctx, commentID, reaction)
}

func (g repoGitHub) Comment(ctx context.Context, installationID int64, repo string, number int, body string) error {
	r, err := g.i.Repo(installationID, repo)
	if err != nil {
		return err
	}
	_, err = r.Comment(ctx, number, body)
	return err
}

func (g repoGitHub) ReplyToReviewComment(ctx context.Context, installationID int64, repo string, number int, commentID int64, body string) error {
	r, err := g.i.Repo(installationID, repo)
	if err != nil {
		return err
	}
	_, err = r.Reply(ctx, number, commentID, body)
	return err
}

func (g repoGitHub) ResolveThread(ctx context.Context, installationID int64, repo, threadID string) error {
	r, err := g.i.Repo(installationID, repo)
	if err != nil {
		return err
	}
	return r.ResolveThread(ctx, threadID)
}
