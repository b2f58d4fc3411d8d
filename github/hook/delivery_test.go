package hook_test

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/mergeguard/mergeguard/github/githubtest"
	"github.com/mergeguard/mergeguard/github/hook"
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
		"known length, over max":   {body: body(max + 1), contentLength: max + 1, want: hook.ErrTooLarge},
		"unknown length":           {body: body(40), contentLength: -1},
		"unknown length, at max":   {body: body(max), contentLength: -1},
		"unknown length, over max": {body: body(max + 1), contentLength: -1, want: hook.ErrTooLarge},
		"shorter than announced":   {body: body(40), contentLength: 41, want: io.ErrUnexpectedEOF},
		"signed by another secret": {body: body(40), contentLength: 40, signed: "other", want: hook.ErrBadSignature},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			key := secret
			if tt.signed != "" {
				key = []byte(tt.signed)
			}
			h := deliveryHeader("pull_request", key, tt.body)
			d, err := hook.ReadDelivery(h, strings.NewReader(tt.body), tt.contentLength, secret, max,
				func(int64) error { return nil })
			checkRead(t, d, err, tt.body, tt.want)
		})
	}
}

// TestReadDeliveryReservesAsBytesArrive: the memory asked of reserve
// follows the bytes that arrived, not the announced length: a body that
// announces 24 MiB and sends ten bytes is asked one first chunk (before:
// the 24 MiB it announced), a body of several chunks is asked its length
// and read whole, and a refused chunk refuses the delivery with
// reserve's error.
func TestReadDeliveryReservesAsBytesArrive(t *testing.T) {
	const max = 25 << 20
	secret := []byte("s3cret")
	full := `{"x":"` + strings.Repeat("a", 3<<20) + `"}`
	errFull := errors.New("full")
	tests := map[string]struct {
		body          string
		contentLength int64
		limit         int64 // what reserve grants in all; 0: no limit
		wantAsked     int64
		want          error
	}{
		"announces 24 MiB, sends ten bytes": {body: `{"x":"a"}`, contentLength: 24 << 20, wantAsked: hook.FirstChunkBytes, want: io.ErrUnexpectedEOF},
		"a small body, its length":          {body: `{"x":"a"}`, contentLength: 9, wantAsked: 9},
		"several chunks, known length":      {body: full, contentLength: int64(len(full)), wantAsked: int64(len(full))},
		"several chunks, unknown length":    {body: full, contentLength: -1, wantAsked: hook.FirstChunkBytes + 3*hook.ChunkBytes}, // chunks of ChunkBytes
		"refused after the first chunk":     {body: full, contentLength: int64(len(full)), limit: 1 << 20, wantAsked: hook.FirstChunkBytes, want: errFull},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			h := deliveryHeader("pull_request", secret, tt.body)
			var asked int64
			d, err := hook.ReadDelivery(h, strings.NewReader(tt.body), tt.contentLength, secret, max, func(n int64) error {
				if tt.limit > 0 && asked+n > tt.limit {
					return errFull
				}
				asked += n
				return nil
			})
			checkRead(t, d, err, tt.body, tt.want)
			if asked != tt.wantAsked {
				t.Errorf("reserved %d bytes, want %d", asked, tt.wantAsked)
			}
		})
	}
}

// TestMismatchErrorVerify: a body whose signature does not match the
// secret it was read with is ErrBadSignature, and can be verified again
// with another secret: the payload is given only for the secret that
// signed it.
func TestMismatchErrorVerify(t *testing.T) {
	body := `{"zen":"Keep it logically awesome."}`
	h := deliveryHeader("ping", []byte("new"), body)
	_, err := hook.ReadDelivery(h, strings.NewReader(body), -1, []byte("old"), 1<<20, func(int64) error { return nil })
	var mismatch *hook.MismatchError
	if !errors.Is(err, hook.ErrBadSignature) || !errors.As(err, &mismatch) {
		t.Fatalf("ReadDelivery with the old secret: %v, want a MismatchError", err)
	}
	tests := []struct {
		secret string
		ok     bool
	}{{"old", false}, {"other", false}, {"new", true}}
	for _, tt := range tests {
		d, ok := mismatch.Verify([]byte(tt.secret))
		if ok != tt.ok || (ok && string(d.Payload) != body) || (!ok && d.Payload != nil) {
			t.Errorf("Verify(%q) = %q, %v; want ok %v", tt.secret, d.Payload, ok, tt.ok)
		}
	}
}

// deliveryHeader is the header of delivery d-1 of event, body signed with
// key.
func deliveryHeader(event string, key []byte, body string) http.Header {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("X-GitHub-Event", event)
	h.Set("X-GitHub-Delivery", "d-1")
	h.Set("X-Hub-Signature-256", githubtest.Sign(key, []byte(body)))
	return h
}

// checkRead checks what ReadDelivery returned: the error want, or (want
// nil) the body whole.
func checkRead(t *testing.T, d hook.Delivery, err error, body string, want error) {
	t.Helper()
	switch {
	case want != nil && !errors.Is(err, want):
		t.Fatalf("ReadDelivery error %v, want %v", err, want)
	case want == nil && err != nil:
		t.Fatalf("ReadDelivery: %v", err)
	case want == nil && string(d.Payload) != body:
		t.Errorf("payload of %d bytes, want the %d sent", len(d.Payload), len(body))
	}
}
