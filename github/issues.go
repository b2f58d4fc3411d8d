package github

import (
	"context"
	"fmt"
	"net/http"
	"slices"

	gh "github.com/google/go-github/v60/github"
)

// Head is where a pull request stands.
type Head struct {
	// SHA is the head commit.
	SHA string
	// Ref is the head branch.
	Ref string
	// BaseSHA is the base commit.
	BaseSHA string
}

// PullHead returns the current head of a pull request. Workers read it
// just before posting (a review of an older head is stale), and comment
// commands read it to name the head they ask to review.
//
// GitHub API docs: https://docs.github.com/rest/pulls/pulls#get-a-pull-request
func PullHead(ctx context.Context, client *gh.Client, owner, repo string, number int) (Head, error) {
	pr, _, err := client.PullRequests.Get(ctx, owner, repo, number)
	if err != nil {
		return Head{}, fmt.Errorf("get head of %s/%s#%d: %w", owner, repo, number, apiError(err))
	}
	return Head{SHA: pr.GetHead().GetSHA(), Ref: pr.GetHead().GetRef(), BaseSHA: pr.GetBase().GetSHA()}, nil
}

// Comment posts a comment on a pull request's conversation (failure
// notices, help replies) and returns its id. A body above GitHub's limit
// is cut.
//
// GitHub API docs: https://docs.github.com/rest/issues/comments#create-an-issue-comment
func Comment(ctx context.Context, client *gh.Client, owner, repo string, number int, body string) (int64, error) {
	body = clipText(body, maxBodyLength-10)
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

// React adds a reaction to a comment on a pull request's conversation.
// Reacting twice the same way is not an error.
//
// GitHub API docs: https://docs.github.com/rest/reactions/reactions#create-reaction-for-an-issue-comment
func React(ctx context.Context, client *gh.Client, owner, repo string, commentID int64, content string) error {
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

// Permission returns a user's permission on a repository: admin, write,
// read or none (GitHub reports maintain as write and triage as read). A
// user GitHub does not know as a collaborator (404) has none.
//
// GitHub API docs: https://docs.github.com/rest/collaborators/collaborators#get-repository-permissions-for-a-user
func Permission(ctx context.Context, client *gh.Client, owner, repo, user string) (string, error) {
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
