package github

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"mime"
	"net/http"
	"strings"
)

// Delivery is one webhook delivery whose signature was checked.
type Delivery struct {
	// Event is X-GitHub-Event, e.g. "pull_request".
	Event string
	// ID is X-GitHub-Delivery, GitHub's id of the delivery (the same on a
	// redelivery).
	ID string
	// Payload is the JSON body, signed with the App's webhook secret.
	Payload []byte
}

// Why a request is not a delivery to act on. Each is decided from the
// headers alone, before the body is read, except ErrBadSignature and
// ErrTooLarge.
var (
	ErrNoEvent       = errors.New("no X-GitHub-Event header")
	ErrNoDeliveryID  = errors.New("no valid X-GitHub-Delivery header (printable ASCII, at most 100 bytes)")
	ErrNotJSON       = errors.New("the body must be application/json (set the App's webhook content type to JSON)")
	ErrUnsigned      = errors.New("no X-Hub-Signature-256 header")
	ErrBadSignature  = errors.New("the signature does not match the body")
	ErrTooLarge      = errors.New("the body is larger than a webhook payload may be")
	errSignatureForm = errors.New("X-Hub-Signature-256 is not sha256=<64 hex digits>")
)

// ReadDelivery checks a webhook request's headers, asks reserve for the
// memory the body will take (its announced length, or max when it is not
// announced) and returns reserve's error if it refuses, then reads the body
// into one buffer of that size and returns the delivery only when its
// HMAC-SHA256 with secret matches the signature (X-Hub-Signature-256,
// compared in constant time). A request without an event, delivery
// id, JSON content type or signature is refused before any of its body is
// read; a body announced or found larger than max is refused as soon as
// that is known. Form-encoded deliveries are refused: GitHub sends JSON when
// the App is configured so, and a form body must be held whole to be
// decoded. Nothing of the body is parsed here.
//
// GitHub docs: https://docs.github.com/webhooks/using-webhooks/validating-webhook-deliveries
func ReadDelivery(h http.Header, body io.Reader, contentLength int64, secret []byte, max int64, reserve func(n int64) error) (Delivery, error) {
	d := Delivery{Event: h.Get("X-GitHub-Event"), ID: h.Get("X-GitHub-Delivery")}
	want, err := checkHeaders(h, d)
	if err != nil {
		return Delivery{}, err
	}
	if contentLength > max {
		return Delivery{}, ErrTooLarge
	}
	size := max
	if contentLength >= 0 {
		size = contentLength
	}
	if err := reserve(size); err != nil {
		return Delivery{}, err
	}
	payload, err := readBody(body, contentLength, max)
	if err != nil {
		return Delivery{}, err
	}
	mac := hmac.New(sha256.New, secret)
	mac.Write(payload)
	if !signed(mac, want) {
		return Delivery{}, ErrBadSignature
	}
	d.Payload = payload
	return d, nil
}

// readBody reads a body of contentLength bytes (-1: unknown) of at most
// max into one buffer: of the body's length when it is known, else of max
// bytes, what the intake reserved for it. The buffer never grows: growing
// would hold the old and the new one at once, beyond the reservation.
func readBody(body io.Reader, contentLength, max int64) ([]byte, error) {
	if contentLength >= 0 {
		b := make([]byte, contentLength)
		if _, err := io.ReadFull(body, b); err != nil {
			return nil, fmt.Errorf("read webhook body: %w", err)
		}
		return b, nil
	}
	b := make([]byte, max)
	n, err := io.ReadFull(body, b)
	switch {
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return b[:n], nil
	case err != nil:
		return nil, fmt.Errorf("read webhook body: %w", err)
	}
	var more [1]byte
	if n, _ := io.ReadFull(body, more[:]); n > 0 {
		return nil, ErrTooLarge
	}
	return b, nil
}

// checkHeaders checks what the headers alone can tell and returns the
// signature the body must have.
func checkHeaders(h http.Header, d Delivery) ([]byte, error) {
	switch {
	case d.Event == "":
		return nil, ErrNoEvent
	case !validDeliveryID(d.ID):
		return nil, ErrNoDeliveryID
	}
	if mt, _, err := mime.ParseMediaType(h.Get("Content-Type")); err != nil || mt != "application/json" {
		return nil, ErrNotJSON
	}
	sig := h.Get("X-Hub-Signature-256")
	if sig == "" {
		return nil, ErrUnsigned
	}
	hexSum, ok := strings.CutPrefix(sig, "sha256=")
	want, err := hex.DecodeString(hexSum)
	if !ok || err != nil || len(want) != sha256.Size {
		return nil, fmt.Errorf("%w: %w", ErrBadSignature, errSignatureForm)
	}
	return want, nil
}

func signed(mac hash.Hash, want []byte) bool { return hmac.Equal(mac.Sum(nil), want) }

// validDeliveryID reports whether id can be GitHub's delivery id (a GUID):
// not empty, at most 100 bytes of printable ASCII. It becomes a primary key
// and a log field.
func validDeliveryID(id string) bool {
	if id == "" || len(id) > 100 {
		return false
	}
	for i := range len(id) {
		if id[i] < 0x21 || id[i] > 0x7e {
			return false
		}
	}
	return true
}
