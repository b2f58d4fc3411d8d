package worker

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"

	gh "github.com/google/go-github/v60/github"

	"github.com/mergeguard/mergeguard/internal/retry"
	"github.com/mergeguard/mergeguard/review/lifecycle"
	"github.com/mergeguard/mergeguard/review/task"
)

// TestTransient covers what the worker adds to github.Transient (whose own
// table is in package github): the model and the worker's own failures.
func TestTransient(t *testing.T) {
	tests := []struct {
		name string
		err  error
		ok   bool
	}{
		{"github 502 through the worker", fmt.Errorf("get pull request: %w", &gh.ErrorResponse{Response: &http.Response{StatusCode: 502, Request: &http.Request{URL: &url.URL{}}}}), true},
		{"llm unavailable", fmt.Errorf("%w: 2 of 2 agents failed", task.ErrLLMUnavailable), true},
		{"broken config", &task.RepoConfigError{Err: errors.New(".mergeguard.yml:3: unknown key")}, false},
		{"bad options", lifecycle.UserError{Err: errors.New("run options: bad")}, false},
		{"panic", panicError{value: "boom"}, false},
		{"run timeout", errRunTimeout, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, ok := transient(tt.err); ok != tt.ok {
				t.Errorf("transient(%v) = %t, want %t", tt.err, ok, tt.ok)
			}
		})
	}
}

func TestRetryDelay(t *testing.T) {
	r := retry.Backoff{Base: 10 * time.Second, Max: time.Minute}
	tests := []struct {
		attempt  int
		asked    time.Duration
		min, max time.Duration
	}{
		{attempt: 1, min: 8 * time.Second, max: 12 * time.Second},
		{attempt: 2, min: 16 * time.Second, max: 24 * time.Second},
		{attempt: 3, min: 32 * time.Second, max: 48 * time.Second},
		{attempt: 9, min: 48 * time.Second, max: 72 * time.Second},
		{attempt: 1, asked: 5 * time.Minute, min: 5 * time.Minute, max: 5 * time.Minute},
	}
	for _, tt := range tests {
		for range 20 {
			if d := runDelay(r, tt.attempt, tt.asked); d < tt.min || d > tt.max {
				t.Errorf("delay(%d, %v) = %v, want within [%v, %v]", tt.attempt, tt.asked, d, tt.min, tt.max)
			}
		}
	}
}
