// Package layers holds the test that keeps the import directions of
// docs/architecture.md, Packages: review/ is pure (it never imports github/,
// server/ or the store), config/ imports nothing of ours, and the workers and
// the webhook intake reach GitHub only through package github.
package layers
