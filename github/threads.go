package github

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	gh "github.com/google/go-github/v60/github"
	"github.com/shurcooL/githubv4"

	"github.com/mergeguard/mergeguard/github/markdown"
	"github.com/mergeguard/mergeguard/review"
)

// maxThreadPages bounds the pages of review threads read (100 a page).
const maxThreadPages = 50

// threadsQuery is one page of a pull request's review threads, each with
// its first comment.
type threadsQuery struct {
	Repository struct {
		PullRequest struct {
			ReviewThreads struct {
				Nodes []struct {
					ID         githubv4.ID
					IsResolved bool
					IsOutdated bool
					Path       string
					ResolvedBy *struct {
						Login string
					}
					Comments struct {
						Nodes []struct {
							FullDatabaseID string `graphql:"fullDatabaseId"`
							Body           string
							Author         *struct {
								Typename string `graphql:"__typename"`
								Login    string
							}
						}
					} `graphql:"comments(first: 1)"`
				}
				PageInfo struct {
					HasNextPage bool
					EndCursor   githubv4.String
				}
			} `graphql:"reviewThreads(first: 100, after: $cursor)"`
		} `graphql:"pullRequest(number: $number)"`
	} `graphql:"repository(owner: $owner, name: $name)"`
}

// Threads returns the review threads of pull request number, as GitHub
// holds them now: resolved or not (and by whom), outdated or not, and
// their first comment. Fingerprint is set only on MergeGuard's threads:
// those whose first comment the App's bot wrote and whose marker line
// names a finding (the marker is read as Publish reads it). A pull request
// that does not exist is review.ErrNotFound.
//
// GitHub API docs: https://docs.github.com/graphql/reference/objects#pullrequestreviewthread
func (r *Repo) Threads(ctx context.Context, number int) ([]review.ReviewThread, error) {
	if r.v4 == nil {
		return nil, fmt.Errorf("review threads of %s#%d: %w", r.FullName(), number, review.ErrUnsupported)
	}
	vars := map[string]any{
		"owner":  githubv4.String(r.owner),
		"name":   githubv4.String(r.name),
		"number": githubv4.Int(int32(min(number, 1<<31-1))), //nolint:gosec // clamped
		"cursor": (*githubv4.String)(nil),
	}
	var out []review.ReviewThread
	for page := 0; page < maxThreadPages; page++ {
		var q threadsQuery
		if err := r.v4.Query(ctx, &q, vars); err != nil {
			return nil, fmt.Errorf("review threads of %s#%d: %w", r.FullName(), number, graphQLError(err))
		}
		rt := q.Repository.PullRequest.ReviewThreads
		for _, n := range rt.Nodes {
			t := review.ReviewThread{ID: fmt.Sprint(n.ID), Resolved: n.IsResolved, Outdated: n.IsOutdated, Path: n.Path}
			if n.ResolvedBy != nil {
				t.ResolvedBy = n.ResolvedBy.Login
			}
			if len(n.Comments.Nodes) > 0 {
				c := n.Comments.Nodes[0]
				t.CommentID, _ = strconv.ParseInt(c.FullDatabaseID, 10, 64)
				if c.Author != nil {
					t.Author = restLogin(c.Author.Typename, c.Author.Login)
				}
				if t.Author == r.login {
					t.Fingerprint = markdown.ReadMarkers(c.Body)[markdown.MarkerFP]
				}
			}
			out = append(out, t)
		}
		if !rt.PageInfo.HasNextPage {
			return out, nil
		}
		vars["cursor"] = githubv4.NewString(rt.PageInfo.EndCursor)
	}
	return out, fmt.Errorf("review threads of %s#%d: more than %d threads", r.FullName(), number, maxThreadPages*100)
}

// restLogin is an actor's login as REST and webhooks spell it: GraphQL
// names a bot "slug", REST "slug[bot]".
func restLogin(typename, login string) string {
	if typename == "Bot" && !strings.HasSuffix(login, "[bot]") {
		return login + "[bot]"
	}
	return login
}

// graphQLError marks GitHub's "Could not resolve" errors as
// review.ErrNotFound (githubv4 returns only the first error's message).
func graphQLError(err error) error {
	if strings.Contains(err.Error(), "Could not resolve") {
		return fmt.Errorf("%w: %w", review.ErrNotFound, err)
	}
	return err
}

// ResolveThread marks review thread threadID (a GraphQL node id) as
// resolved; resolving a resolved thread is not an error. A thread GitHub
// does not know is review.ErrNotFound.
//
// GitHub API docs: https://docs.github.com/graphql/reference/mutations#resolvereviewthread
func (r *Repo) ResolveThread(ctx context.Context, threadID string) error {
	if r.v4 == nil {
		return fmt.Errorf("resolve review thread %s: %w", threadID, review.ErrUnsupported)
	}
	if threadID == "" {
		return errors.New("resolve review thread: thread id is required")
	}
	var m struct {
		ResolveReviewThread struct {
			Thread struct {
				ID         githubv4.ID
				IsResolved bool
			}
		} `graphql:"resolveReviewThread(input: $input)"`
	}
	if err := r.v4.Mutate(ctx, &m, githubv4.ResolveReviewThreadInput{ThreadID: githubv4.ID(threadID)}, nil); err != nil {
		return fmt.Errorf("resolve review thread %s in %s: %w", threadID, r.FullName(), graphQLError(err))
	}
	if !m.ResolveReviewThread.Thread.IsResolved {
		return fmt.Errorf("resolve review thread %s in %s: GitHub left it unresolved", threadID, r.FullName())
	}
	return nil
}

// maxReply is the longest reply MergeGuard writes, in characters.
const maxReply = 8000

// Reply answers review comment commentID of pull request number in its
// thread and returns the new comment's id. commentID must be the thread's
// first comment (GitHub answers 422 for a reply to a reply). body is
// rendered as untrusted text: it mentions no one, links only into the
// repository and carries no marker; its first ```suggestion block, if any,
// stays a suggestion of the thread's lines, in a fence its code cannot
// close.
//
// GitHub API docs: https://docs.github.com/rest/pulls/comments#create-a-reply-for-a-review-comment
func (r *Repo) Reply(ctx context.Context, number int, commentID int64, body string) (int64, error) {
	tp := markdown.NewPolicy(r.PullURL(number))
	text := tp.Reply(body, maxReply)
	if strings.TrimSpace(text) == "" {
		return 0, errors.New("reply to a review comment: the body is empty")
	}
	u := fmt.Sprintf("repos/%s/%s/pulls/%d/comments/%d/replies", r.owner, r.name, number, commentID)
	req, err := r.client.NewRequest("POST", u, map[string]string{"body": text})
	if err != nil {
		return 0, fmt.Errorf("reply to review comment %d: %w", commentID, err)
	}
	var c gh.PullRequestComment
	if _, err := r.client.Do(ctx, req, &c); err != nil {
		return 0, fmt.Errorf("reply to review comment %d on %s#%d: %w", commentID, r.FullName(), number, apiError(err))
	}
	return c.GetID(), nil
}

// maxThreadComments bounds the pull request's review comments read to
// find one thread's.
const maxThreadComments = 3000

// ThreadMessages returns the comments of the review thread that starts
// with review comment threadCommentID of pull request number, oldest
// first, each marked when the App's bot wrote it.
//
// GitHub API docs: https://docs.github.com/rest/pulls/comments#list-review-comments-on-a-pull-request
func (r *Repo) ThreadMessages(ctx context.Context, number int, threadCommentID int64) ([]review.ThreadMessage, error) {
	comments, err := listAll(ctx, maxThreadComments, func(opts *gh.ListOptions) ([]*gh.PullRequestComment, *gh.Response, error) {
		return r.client.PullRequests.ListComments(ctx, r.owner, r.name, number, &gh.PullRequestListCommentsOptions{ListOptions: *opts})
	})
	if err != nil {
		return nil, fmt.Errorf("review comments of %s#%d: %w", r.FullName(), number, apiError(err))
	}
	var out []review.ThreadMessage
	for _, c := range comments {
		if c.GetID() != threadCommentID && c.GetInReplyTo() != threadCommentID {
			continue
		}
		login := c.GetUser().GetLogin()
		out = append(out, review.ThreadMessage{ID: c.GetID(), Author: login, Bot: login == r.login, Body: c.GetBody()})
	}
	return out, nil
}

// Answer posts an answer in pull request number's conversation and
// returns the comment's id. body is rendered as untrusted text, as Reply
// renders it.
//
// GitHub API docs: https://docs.github.com/rest/issues/comments#create-an-issue-comment
func (r *Repo) Answer(ctx context.Context, number int, body string) (int64, error) {
	tp := markdown.NewPolicy(r.PullURL(number))
	text := tp.Block(body, maxReply)
	if strings.TrimSpace(text) == "" {
		return 0, errors.New("answer on a pull request: the body is empty")
	}
	return comment(ctx, r.client, r.owner, r.name, number, text)
}

// maxReactions bounds the reactions read of one comment.
const maxReactions = 300

// Reactions returns the reactions of review comment commentID, oldest
// first (GitHub sends no webhook for them).
//
// GitHub API docs: https://docs.github.com/rest/reactions/reactions#list-reactions-for-a-pull-request-review-comment
func (r *Repo) Reactions(ctx context.Context, commentID int64) ([]review.Reaction, error) {
	list, err := listAll(ctx, maxReactions, func(opts *gh.ListOptions) ([]*gh.Reaction, *gh.Response, error) {
		return r.client.Reactions.ListPullRequestCommentReactions(ctx, r.owner, r.name, commentID, opts)
	})
	if err != nil {
		return nil, fmt.Errorf("reactions of review comment %d in %s: %w", commentID, r.FullName(), apiError(err))
	}
	out := make([]review.Reaction, len(list))
	for i, x := range list {
		out[i] = review.Reaction{Login: x.GetUser().GetLogin(), Content: x.GetContent()}
	}
	return out, nil
}
