package webhook

import (
	"context"
	"fmt"
	"strings"

	gh "github.com/google/go-github/v60/github"
	"github.com/palantir/go-githubapp/githubapp"

	"github.com/mergeguard/mergeguard/github"
)

// NewGitHub returns the GitHub that comment commands use: package github's
// calls through each installation's client from cc.
func NewGitHub(cc githubapp.ClientCreator) GitHub { return installationGitHub{cc: cc} }

type installationGitHub struct{ cc githubapp.ClientCreator }

// client returns the installation's client and repo split into owner and
// name.
func (g installationGitHub) client(installationID int64, repo string) (*gh.Client, string, string, error) {
	client, err := g.cc.NewInstallationClient(installationID)
	if err != nil {
		return nil, "", "", fmt.Errorf("installation client: %w", err)
	}
	owner, name, _ := strings.Cut(repo, "/")
	return client, owner, name, nil
}

func (g installationGitHub) CanWrite(ctx context.Context, installationID int64, repo, user string) (bool, error) {
	client, owner, name, err := g.client(installationID, repo)
	if err != nil {
		return false, err
	}
	level, err := github.Permission(ctx, client, owner, name, user)
	if err != nil {
		return false, err
	}
	return github.CanWrite(level), nil
}

func (g installationGitHub) Head(ctx context.Context, installationID int64, repo string, number int) (github.Head, error) {
	client, owner, name, err := g.client(installationID, repo)
	if err != nil {
		return github.Head{}, err
	}
	return github.PullHead(ctx, client, owner, name, number)
}

func (g installationGitHub) React(ctx context.Context, installationID int64, repo string, commentID int64, reaction string) error {
	client, owner, name, err := g.client(installationID, repo)
	if err != nil {
		return err
	}
	return github.React(ctx, client, owner, name, commentID, reaction)
}

func (g installationGitHub) Comment(ctx context.Context, installationID int64, repo string, number int, body string) error {
	client, owner, name, err := g.client(installationID, repo)
	if err != nil {
		return err
	}
	_, err = github.Comment(ctx, client, owner, name, number, body)
	return err
}
