package worker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/bradleyfalzon/ghinstallation/v2"
	gh "github.com/google/go-github/v60/github"
)

func TestTransient(t *testing.T) {
	response := func(status int, header http.Header) *http.Response {
		return &http.Response{StatusCode: status, Header: header, Request: &http.Request{Method: "GET", URL: &url.URL{}}}
	}
	retryAfter := http.Header{"Retry-After": []string{"30"}}
	minute := time.Minute
	tests := []struct {
		name  string
		err   error
		ok    bool
		asked time.Duration
	}{
		{"github 502", fmt.Errorf("get pull request: %w", &gh.ErrorResponse{Response: response(502, nil)}), true, 0},
		{"github 429 with Retry-After", &gh.ErrorResponse{Response: response(429, retryAfter)}, true, 30 * time.Second},
		{"github 422", &gh.ErrorResponse{Response: response(422, nil)}, false, 0},
		{"github 404", &gh.ErrorResponse{Response: response(404, nil)}, false, 0},
		{"secondary rate limit", &gh.AbuseRateLimitError{Response: response(403, nil), RetryAfter: &minute}, true, time.Minute},
		{"installation token 503", &ghinstallation.HTTPError{Response: response(503, nil)}, true, 0},
		{"installation token 401", fmt.Errorf("installation client: %w", &url.Error{Op: "Get", URL: "x", Err: &ghinstallation.HTTPError{Response: response(401, nil)}}), false, 0},
		{"connection refused", &url.Error{Op: "Get", URL: "x", Err: &net.OpError{Op: "dial", Err: errors.New("connection refused")}}, true, 0},
		{"client timeout", &url.Error{Op: "Get", URL: "x", Err: context.DeadlineExceeded}, true, 0},
		{"cut response", fmt.Errorf("read: %w", io.ErrUnexpectedEOF), true, 0},
		{"connection closed before the answer", fmt.Errorf("create review: %w", &url.Error{Op: "Post", URL: "x", Err: io.EOF}), true, 0},
		{"end of a body outside HTTP", fmt.Errorf("decode: %w", io.EOF), false, 0},
		{"llm unavailable", fmt.Errorf("%w: 2 of 2 agents failed", errLLMUnavailable), true, 0},
		{"broken config", userError{errors.New(".mergeguard.yml:3: unknown key")}, false, 0},
		{"panic", panicError{value: "boom"}, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			asked, ok := transient(tt.err)
			if ok != tt.ok {
				t.Errorf("transient(%v) = %t, want %t", tt.err, ok, tt.ok)
			}
			if asked.Round(time.Second) != tt.asked {
				t.Errorf("asked wait %v, want %v", asked, tt.asked)
			}
		})
	}
}

func TestRetryDelay(t *testing.T) {
	r := Retry{Base: 10 * time.Second, Max: time.Minute}
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
			if d := r.delay(tt.attempt, tt.asked); d < tt.min || d > tt.max {
				t.Errorf("delay(%d, %v) = %v, want within [%v, %v]", tt.attempt, tt.asked, d, tt.min, tt.max)
			}
		}
	}
}
