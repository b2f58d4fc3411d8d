package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/mergeguard/mergeguard/github"
	"github.com/mergeguard/mergeguard/review/pipeline"
)

// prTimeout bounds each attempt of a GitHub request of `review --pr`.
const prTimeout = 30 * time.Second

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
// Actions' token: github-actions[bot]).
func openPR(ctx context.Context, f reviewFlags, getenv func(string) string, stderr io.Writer) (*prReview, error) {
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
	client, v4c, err := github.NewTokenClients(token, v3, v4, github.ClientOptions{Version: buildInfo().version, Timeout: prTimeout})
	if err != nil {
		return nil, fmt.Errorf("review: %w", err)
	}
	opts := github.PublisherOptions{BotLogin: f.login}
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
func (p *prReview) request(cfg pipeline.Request) pipeline.Request {
	cfg.Source = p.repo.Source(p.ref.Number)
	cfg.ReadRepoFile = true
	return cfg
}

// post publishes the review on the pull request as the token's account,
// once per head commit: a rerun on the same head finds its review by the
// run marker and posts nothing; on a later head, findings already
// commented on are not commented on again. Nothing is posted when the
// review was skipped or the head moved during the review.
func (p *prReview) post(ctx context.Context, res *pipeline.Result, stderr io.Writer) error {
	if res.Skipped {
		fmt.Fprintln(stderr, "mergeguard: nothing posted: the review was skipped")
		return nil
	}
	head, err := p.repo.Head(ctx, p.ref.Number)
	if err != nil {
		return fmt.Errorf("review: re-read the head before posting: %w", err)
	}
	if head.SHA != res.Change.HeadSHA {
		fmt.Fprintf(stderr, "mergeguard: nothing posted: the head moved from %s to %s during the review\n", res.Change.HeadSHA, head.SHA)
		return nil
	}
	post := github.Post{Number: p.ref.Number, HeadSHA: res.Change.HeadSHA, RunID: "cli:" + res.Change.HeadSHA,
		Verdict: res.Verdict, Findings: res.Verdict.Findings()}
	if res.Index != nil {
		post.Index = res.Index
	}
	posted, err := p.repo.Publish(ctx, post)
	switch {
	case errors.Is(err, github.ErrDismiss):
		fmt.Fprintln(stderr, "mergeguard: review posted; an earlier review could not be dismissed:", err)
	case err != nil:
		return fmt.Errorf("review: post: %w", err)
	}
	if posted.AlreadyPosted {
		fmt.Fprintln(stderr, "mergeguard: this head was already reviewed, nothing new posted:", posted.URL)
	} else {
		fmt.Fprintln(stderr, "mergeguard: posted", posted.URL)
	}
	return nil
}
