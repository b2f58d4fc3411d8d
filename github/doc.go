// Package github connects MergeGuard to GitHub: installation clients with a
// rate-limit-aware transport, a review.Source that reads a pull request
// through the REST and GraphQL APIs with as few calls as possible, a
// Publisher that posts one pull-request review per run (inline comments on
// lines GitHub accepts, everything else in the review body), issue comments,
// reactions, permission checks and the parser of /mergeguard comment
// commands.
//
// The package imports review and review/diff only; the webhook server and
// the workers build on it. Its fake GitHub API for tests is githubtest.
package github
