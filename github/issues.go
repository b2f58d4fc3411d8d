package github

import (
	"context"
	"fmt"
	"net/http"
	"slices"

	gh "github.com/google/go-github/v60/github"

	"github.com/mergeguard/mergeguard/github/markdown"
	"github.com/mergeguard/mergeguard/review/text"
)

func comment(ctx context.Context, client *gh.Client, owner, repo string, number int, body string) (int64, error) {
	body = text.Clip(body, markdown.MaxBodyLength-10)
	c, _, err := client.Issues.CreateComment(ctx, owner, repo, number, &gh.IssueComment{Body: &body})
	if err != nil {
		return 0, fmt.Errorf("comment on %s/%s#%d: %w", owner, repo, number, apiError(err))
	}
	return c.GetID(), nil
}

// Reactions the bot uses to acknowledge commands.
const (
	ReactionOK       = "+1"
	ReactionSeen     = "eyes"
	ReactionConfused = "confused"
)

// reactionContents are the reactions GitHub accepts.
var reactionContents = []string{"+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes"}

// react adds a reaction to an issue comment.
//
// GitHub API docs: https://docs.github.com/rest/reactions/reactions#create-reaction-for-an-issue-comment
func react(ctx context.Context, client *gh.Client, owner, repo string, commentID int64, content string) error {
	if !slices.Contains(reactionContents, content) {
		return fmt.Errorf("react to comment %d: unknown reaction %q", commentID, content)
	}
	if _, _, err := client.Reactions.CreateIssueCommentReaction(ctx, owner, repo, commentID, content); err != nil {
		return fmt.Errorf("react to comment %d in %s/%s: %w", commentID, owner, repo, apiError(err))
	}
	return nil
}

// Permission levels GitHub reports for a collaborator.
const (
	PermissionAdmin    = "admin"
	PermissionMaintain = "maintain"
	PermissionWrite    = "write"
	PermissionRead     = "read"
	PermissionNone     = "none"
)

// permission returns a user's permission on a repository: admin, write,
// read or none (GitHub reports maintain as write and triage as read). A
// user GitHub does not know as a collaborator (404) has none.
//
// GitHub API docs: https://docs.github.com/rest/collaborators/collaborators#get-repository-permissions-for-a-user
func permission(ctx context.Context, client *gh.Client, owner, repo, user string) (string, error) {
	p, _, err := client.Repositories.GetPermissionLevel(ctx, owner, repo, user)
	if isStatus(err, http.StatusNotFound) {
		return PermissionNone, nil
	}
	if err != nil {
		return "", fmt.Errorf("get permission of %s on %s/%s: %w", user, owner, repo, err)
	}
	return p.GetPermission(), nil
}

// CanWrite reports whether a permission level lets a user run commands:
// admin, maintain and write do.
func CanWrite(level string) bool {
	switch level {
	case PermissionAdmin, PermissionMaintain, PermissionWrite:
		return true
	}
	return false
}
