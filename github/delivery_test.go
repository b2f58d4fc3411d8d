package github_test

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/mergeguard/mergeguard/github"
	"github.com/mergeguard/mergeguard/github/githubtest"
)

// TestReadDeliveryBodies reads bodies of known and unknown length around
// the largest size allowed: what fits is returned whole, what does not is
// ErrTooLarge, a body shorter than announced is an error, and a wrong
// signature is ErrBadSignature.
func TestReadDeliveryBodies(t *testing.T) {
	const max = 64
	secret := []byte("s3cret")
	body := func(n int) string { return `{"x":"` + strings.Repeat("a", n-8) + `"}` }
	tests := map[string]struct {
		body          string
		contentLength int64 // -1: unknown
		signed        string
		want          error // nil: the body is returned
	}{
		"known length":             {body: body(40), contentLength: 40},
		"known length, at max":     {body: body(max), contentLength: max},
		"known length, over max":   {body: body(max + 1), contentLength: max + 1, want: github.ErrTooLarge},
		"unknown length":           {body: body(40), contentLength: -1},
		"unknown length, at max":   {body: body(max), contentLength: -1},
		"unknown length, over max": {body: body(max + 1), contentLength: -1, want: github.ErrTooLarge},
		"shorter than announced":   {body: body(40), contentLength: 41, want: io.ErrUnexpectedEOF},
		"signed by another secret": {body: body(40), contentLength: 40, signed: "other", want: github.ErrBadSignature},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			key := secret
			if tt.signed != "" {
				key = []byte(tt.signed)
			}
			h := http.Header{}
			h.Set("Content-Type", "application/json")
			h.Set("X-GitHub-Event", "pull_request")
			h.Set("X-GitHub-Delivery", "d-1")
			h.Set("X-Hub-Signature-256", githubtest.Sign(key, []byte(tt.body)))
			d, err := github.ReadDelivery(h, strings.NewReader(tt.body), tt.contentLength, secret, max,
				func(int64) error { return nil })
			switch {
			case tt.want != nil && !errors.Is(err, tt.want):
				t.Fatalf("ReadDelivery error %v, want %v", err, tt.want)
			case tt.want == nil && err != nil:
				t.Fatalf("ReadDelivery: %v", err)
			case tt.want == nil && string(d.Payload) != tt.body:
				t.Errorf("payload %q, want %q", d.Payload, tt.body)
			}
		})
	}
}
