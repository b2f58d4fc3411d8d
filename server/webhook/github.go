package webhook

import (
	"context"
	"fmt"
	"strings"

	gh "github.com/google/go-github/v60/github"
	"github.com/palantir/go-githubapp/githubapp"
)

// NewGitHub returns the GitHub that comment commands use: calls through
// each installation's client from cc.
func NewGitHub(cc githubapp.ClientCreator) GitHub { return installationGitHub{cc: cc} }

type installationGitHub struct{ cc githubapp.ClientCreator }

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
	p, resp, err := client.Repositories.GetPermissionLevel(ctx, owner, name, user)
	if resp != nil && resp.StatusCode == 404 {
		return false, nil // not a collaborator
	}
	if err != nil {
		return false, fmt.Errorf("get permission of %s on %s: %w", user, repo, err)
	}
	switch p.GetPermission() {
	case "admin", "maintain", "write":
		return true, nil
	}
	return false, nil
}

func (g installationGitHub) React(ctx context.Context, installationID int64, repo string, commentID int64, reaction string) error {
	client, owner, name, err := g.client(installationID, repo)
	if err != nil {
		return err
	}
	if _, _, err := client.Reactions.CreateIssueCommentReaction(ctx, owner, name, commentID, reaction); err != nil {
		return fmt.Errorf("react %s to comment %d: %w", reaction, commentID, err)
	}
	return nil
}

func (g installationGitHub) Comment(ctx context.Context, installationID int64, repo string, number int, body string) error {
	client, owner, name, err := g.client(installationID, repo)
	if err != nil {
		return err
	}
	if _, _, err := client.Issues.CreateComment(ctx, owner, name, number, &gh.IssueComment{Body: &body}); err != nil {
		return fmt.Errorf("comment on %s#%d: %w", repo, number, err)
	}
	return nil
}
