package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/github"
	"github.com/mergeguard/mergeguard/review/lifecycle"
	"github.com/mergeguard/mergeguard/review/task"
)

// prPostTimeout bounds posting the review of `review --pr`, which a newer
// head does not cancel once it has begun.
const prPostTimeout = 30 * time.Second

// prReview is a pull request that `mergeguard review --pr` reads, and posts
// to with --post, through a plain token.
type prReview struct {
	ref  github.PullRef
	repo *github.Repo
}

// openPR checks --pr and GITHUB_TOKEN and opens the pull request through
// the token. The REST address is --github-url, else GITHUB_API_URL (as
// GitHub Actions sets it), else the one of the address's host; the
// GraphQL address is GITHUB_GRAPHQL_URL when the REST address came from
// the environment, else derived from the REST address. With --post it
// learns the login the token posts as (--login, else GET /user; GitHub
// Actions' token: github-actions[bot]). gh gives the client's timeout and
// retry policy, and the cap on inline comments.
func openPR(ctx context.Context, f reviewFlags, gh config.GitHub, getenv func(string) string, stderr io.Writer) (*prReview, error) {
	ref, err := github.ParsePullURL(f.pr, "")
	if err != nil {
		return nil, usageError{fmt.Errorf("review: --pr: %w", err)}
	}
	token := getenv("GITHUB_TOKEN")
	if token == "" {
		return nil, usageError{errors.New("review: --pr needs a GitHub token in GITHUB_TOKEN (in GitHub Actions: env: GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }})")}
	}
	v3, v4 := github.APIURLs(ref.Host)
	switch {
	case f.githubURL != "":
		v3, v4 = f.githubURL, github.GraphQLURL(f.githubURL)
	case getenv("GITHUB_API_URL") != "":
		v3, v4 = getenv("GITHUB_API_URL"), getenv("GITHUB_GRAPHQL_URL")
		if v4 == "" {
			v4 = github.GraphQLURL(v3)
		}
	}
	client, v4c, err := github.NewTokenClients(token, v3, v4, githubOptions(gh, buildInfo().version))
	if err != nil {
		return nil, fmt.Errorf("review: %w", err)
	}
	opts := github.PublisherOptions{BotLogin: f.login, MaxInlineComments: gh.MaxInlineComments}
	if f.post && opts.BotLogin == "" {
		login, actions, err := github.TokenLogin(ctx, client)
		if err != nil {
			return nil, fmt.Errorf("review: %w", err)
		}
		if actions {
			fmt.Fprintf(stderr, "mergeguard: the token may not read its user (GET /user): posting as %s, the account of GitHub Actions' GITHUB_TOKEN (pass --login otherwise)\n", login)
		}
		opts.BotLogin = login
	}
	// A person's pending review is their unsubmitted draft, never ours to
	// delete; bots have none of their own.
	opts.KeepPending = !strings.HasSuffix(opts.BotLogin, "[bot]")
	webURL := "https://" + ref.Host + "/"
	return &prReview{ref: ref, repo: github.NewTokenRepo(client, v4c, ref.Owner, ref.Repo, webURL, opts)}, nil
}

// request is the pipeline request of the pull request: the operator's
// review defaults with the .mergeguard.yml of the pull request's base
// read over them, as for the App's reviews.
func (p *prReview) request(cfg task.Request) task.Request {
	cfg.Source = p.repo.Source(p.ref.Number)
	cfg.ReadRepoFile = true
	return cfg
}

// reviewAndPost reviews the pull request with r and publishes the review
// as the token's account, once per head commit, through the life of a pull
// request the App's reviews go through (lifecycle.Reviewing) with nothing
// recorded: a rerun on the same head finds its review by the run marker
// and posts nothing; on a later head, findings already commented on are
// not commented on again. Nothing is posted when the review was skipped
// or the head moved during the review. It returns the pipeline's result
// with its error (the model unavailable: the analyzers' review is posted),
// and apart the error of posting, which the caller returns once the
// verdict is printed.
func (p *prReview) reviewAndPost(ctx context.Context, r lifecycle.Reviewer, req task.Request, stderr io.Writer) (res *task.Result, postErr, err error) {
	head, err := p.repo.Head(ctx, p.ref.Number)
	if err != nil {
		return nil, nil, fmt.Errorf("read the head: %w", err)
	}
	var none lifecycle.Unrecorded
	uc := lifecycle.Reviewing{Pipeline: r, Publisher: p.repo, Checking: lifecycle.Checking{Checks: p.repo}, Learnings: none, Run: none,
		Preparing: lifecycle.Preparing{Ledger: none, Conversation: p.repo, People: p.repo, Commits: p.repo}, PostTimeout: prPostTimeout}
	o, err := uc.Review(ctx, lifecycle.ReviewAsked{PullRequest: lifecycle.PullRequest{Repository: p.repo.FullName(), Number: p.ref.Number},
		RunID: "cli:" + head.SHA, Queued: head, LastAttempt: true,
		ReviewInput: lifecycle.ReviewInput{Source: req.Source, Options: req.Options, Repo: req.Repo, MaxTokens: req.MaxTokens, Sink: req.Sink}})
	if pe, ok := errors.AsType[lifecycle.PublishError](err); ok {
		postErr, err = pe.Err, nil
	}
	for _, problem := range o.Problems {
		fmt.Fprintln(stderr, "mergeguard:", problem)
	}
	switch {
	case o.Ending == lifecycle.EndedSuperseded:
		fmt.Fprintln(stderr, "mergeguard: nothing posted:", o.Reason)
	case o.Posted != nil && o.Posted.AlreadyPosted:
		fmt.Fprintln(stderr, "mergeguard: this head was already reviewed, nothing new posted:", o.Posted.URL)
	case o.Posted != nil:
		fmt.Fprintln(stderr, "mergeguard: posted", o.Posted.URL)
	case err == nil && postErr == nil:
		fmt.Fprintln(stderr, "mergeguard: nothing posted: the review was skipped")
	}
	if o.Result == nil && err == nil {
		return nil, nil, fmt.Errorf("nothing reviewed: %s", o.Reason)
	}
	return o.Result, postErr, err
}
