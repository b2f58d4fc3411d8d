package github

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
	built := time.Now()
	retryAt := http.Header{"Retry-After": []string{built.Add(90 * time.Second).UTC().Format(http.TimeFormat)}}
	minute := time.Minute
	tests := []struct {
		name   string
		err    error
		ok     bool
		asked  time.Duration
		reason string
	}{
		{"github 502", fmt.Errorf("get pull request: %w", &gh.ErrorResponse{Response: response(502, nil)}), true, 0, "502"},
		{"github 429 with Retry-After", &gh.ErrorResponse{Response: response(429, retryAfter)}, true, 30 * time.Second, "rate_limited"},
		{"github 503 with a Retry-After date", &gh.ErrorResponse{Response: response(503, retryAt)}, true, 90 * time.Second, "503"},
		{"github 422", &gh.ErrorResponse{Response: response(422, nil)}, false, 0, "422"},
		{"github 404", &gh.ErrorResponse{Response: response(404, nil)}, false, 0, "404"},
		{"secondary rate limit", &gh.AbuseRateLimitError{Response: response(403, nil), RetryAfter: &minute}, true, time.Minute, "rate_limited"},
		{"installation token 503", &ghinstallation.HTTPError{Response: response(503, nil)}, true, 0, "network"},
		{"installation token 401", fmt.Errorf("installation client: %w", &url.Error{Op: "Get", URL: "x", Err: &ghinstallation.HTTPError{Response: response(401, nil)}}), false, 0, "other"},
		{"connection refused", &url.Error{Op: "Get", URL: "x", Err: &net.OpError{Op: "dial", Err: errors.New("connection refused")}}, true, 0, "network"},
		{"client timeout", &url.Error{Op: "Get", URL: "x", Err: context.DeadlineExceeded}, true, 0, "network"},
		{"cut response", fmt.Errorf("read: %w", io.ErrUnexpectedEOF), true, 0, "network"},
		{"connection closed before the answer", fmt.Errorf("create review: %w", &url.Error{Op: "Post", URL: "x", Err: io.EOF}), true, 0, "network"},
		{"end of a body outside HTTP", fmt.Errorf("decode: %w", io.EOF), false, 0, "other"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			asked, ok := Transient(tt.err)
			if ok != tt.ok {
				t.Errorf("Transient(%v) = %t, want %t", tt.err, ok, tt.ok)
			}
			// An HTTP date has whole seconds: allow the second it rounds
			// off, and the time since it was written (a loaded machine).
			if d := tt.asked - asked; d < 0 || d > time.Second+time.Since(built) {
				t.Errorf("asked wait %v, want %v", asked, tt.asked)
			}
			if got := FailureReason(tt.err); got != tt.reason {
				t.Errorf("FailureReason = %q, want %q", got, tt.reason)
			}
		})
	}
}
