package main

import (
	"context"
	"errors"
	"io"
)

// runReview is `mergeguard review`, built on branch engine, which replaces
// this file.
func runReview(_ context.Context, _ []string, _ func(string) string, _, _ io.Writer) error {
	return errors.New("review: not built yet")
}
