package webhook

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"
)

// rejection is why a request is not handed to a handler.
type rejection struct {
	status  int
	outcome string // for the deliveries metric
	err     error
}

func reject(status int, outcome, format string, args ...any) *rejection {
	return &rejection{status: status, outcome: outcome, err: fmt.Errorf(format, args...)}
}

// Outcomes of rejected requests, for the deliveries metric.
const (
	outcomeUnauthorized = "unauthorized"
	outcomeUnsupported  = "unsupported_media_type"
	outcomeTooLarge     = "too_large"
	outcomeBusy         = "busy"
)

// verified returns the payload of a request signed with the App's secret.
// It reads the body only after the headers pass, at most
// MaxPayloadBytes, and only when a body slot is free; on success the caller
// must release the slot (release) once the delivery is handled.
func (h *Handler) verified(r *http.Request) ([]byte, *rejection) {
	if rej := checkHeaders(r); rej != nil {
		return nil, rej
	}
	// checkHeaders made sure of the signature's form.
	want, _ := signature(r.Header.Get("X-Hub-Signature-256"))
	if !h.acquire(r.Context(), r.ContentLength) {
		return nil, reject(http.StatusServiceUnavailable, outcomeBusy,
			"too many webhook deliveries in flight; retry after %s seconds", retryAfter)
	}
	mac := hmac.New(sha256.New, h.secret)
	body := make([]byte, r.ContentLength)
	if _, err := io.ReadFull(io.TeeReader(r.Body, mac), body); err != nil {
		h.release(r.ContentLength)
		return nil, reject(http.StatusBadRequest, outcomeMalformed, "read the body: %w", err)
	}
	if !hmac.Equal(mac.Sum(nil), want) {
		h.release(r.ContentLength)
		return nil, reject(http.StatusUnauthorized, outcomeUnauthorized, "the X-Hub-Signature-256 signature does not match the body")
	}
	return body, nil
}

// checkHeaders vets what can be vetted before reading the body: the event,
// a JSON content type (415 otherwise: a form-encoded delivery is refused,
// configure the webhook to send JSON), a well-formed signature (401), the
// delivery id and the announced length (411 without one, 413 above
// MaxPayloadBytes).
func checkHeaders(r *http.Request) *rejection {
	if r.Header.Get("X-GitHub-Event") == "" {
		return reject(http.StatusBadRequest, outcomeMalformed, "missing X-GitHub-Event header")
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		return reject(http.StatusUnsupportedMediaType, outcomeUnsupported,
			"content type %q: webhooks must be sent as application/json", r.Header.Get("Content-Type"))
	}
	if _, err := signature(r.Header.Get("X-Hub-Signature-256")); err != nil {
		return reject(http.StatusUnauthorized, outcomeUnauthorized, "X-Hub-Signature-256: %w", err)
	}
	if !validDeliveryID(r.Header.Get("X-GitHub-Delivery")) {
		return reject(http.StatusBadRequest, outcomeMalformed, "missing or invalid X-GitHub-Delivery header")
	}
	switch {
	case r.ContentLength < 0:
		return reject(http.StatusLengthRequired, outcomeMalformed, "Content-Length required")
	case r.ContentLength > MaxPayloadBytes:
		return reject(http.StatusRequestEntityTooLarge, outcomeTooLarge,
			"body of %d bytes, above the %d bytes GitHub sends at most", r.ContentLength, MaxPayloadBytes)
	}
	return nil
}

// signature decodes an X-Hub-Signature-256 value, "sha256=" and 64 hex
// digits.
func signature(v string) ([]byte, error) {
	hexSum, ok := strings.CutPrefix(v, "sha256=")
	if !ok {
		return nil, errors.New("missing or not sha256=<hex>")
	}
	sum, err := hex.DecodeString(hexSum)
	if err != nil || len(sum) != sha256.Size {
		return nil, errors.New("not a hex HMAC-SHA256")
	}
	return sum, nil
}

// validDeliveryID reports whether id can be a GitHub delivery id: not
// empty, short, printable ASCII.
func validDeliveryID(id string) bool {
	if id == "" || len(id) > maxDeliveryIDBytes {
		return false
	}
	for i := range len(id) {
		if id[i] <= ' ' || id[i] > '~' {
			return false
		}
	}
	return true
}

// acquire takes a body slot for a body of n bytes, waiting up to
// bodySlotWait for one (slots are held for milliseconds by GitHub's
// deliveries, so a burst waits rather than fails), and a large slot when n
// is above SmallPayloadBytes, without waiting; false when none is free.
func (h *Handler) acquire(ctx context.Context, n int64) bool {
	wait := time.NewTimer(bodySlotWait)
	defer wait.Stop()
	select {
	case h.bodies <- struct{}{}:
	case <-wait.C:
		return false
	case <-ctx.Done():
		return false
	}
	if n <= SmallPayloadBytes {
		return true
	}
	select {
	case h.largeBodies <- struct{}{}:
		return true
	default:
		<-h.bodies
		return false
	}
}

// release gives back the slots acquire took for a body of n bytes.
func (h *Handler) release(n int64) {
	if n > SmallPayloadBytes {
		<-h.largeBodies
	}
	<-h.bodies
}
