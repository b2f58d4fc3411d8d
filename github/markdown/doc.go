// Package markdown is what MergeGuard writes on GitHub, as text: the
// review's body and inline comments and where each finding goes (Plan),
// the check run's summary and annotations, the section of a pull request's
// description, replies, and the markers by which MergeGuard finds its own
// posts again. Everything a model or a pull request's author wrote is
// rendered by Policy, so that GitHub acts on none of it: no mention, HTML,
// marker, heading or link out of the repository stays live.
//
// It is strings in, strings out: package github sends what it renders
// through the API (docs/architecture.md, Packages).
package markdown
