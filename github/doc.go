// Package github connects MergeGuard to GitHub: installation clients with a
// rate-limit-aware transport, a review.Source that reads a pull request
// through the REST and GraphQL APIs with as few calls as possible, a
// Publisher that posts one pull-request review per run (inline comments on
// lines GitHub accepts, everything else in the review body), check runs,
// the description's section, issue comments, reactions and permission
// checks. *Repo plays the GitHub roles of review/lifecycle as it is.
//
// What it writes is rendered by github/markdown; the webhook wire format
// and comment commands are github/hook's, the OAuth and manifest flows
// github/oauth's. The webhook server and the workers build on it. Its fake
// GitHub API for tests is githubtest.
package github
