package hook

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

// Sizes of the pieces a body is read in: FirstChunkBytes first (a body
// announced shorter, the whole body: GitHub's deliveries are mostly tens
// of kilobytes), then ChunkBytes at a time.
const (
	FirstChunkBytes = 64 << 10
	ChunkBytes      = 1 << 20
)

// ReadDelivery checks a webhook request's headers, then reads the body in
// chunks, asking reserve for each chunk's memory (n more bytes) as the
// bytes arrive, never for the announced length, computing its HMAC-SHA256
// with secret on the way, and returns the delivery only when the HMAC
// matches the signature (X-Hub-Signature-256, compared in constant time).
// When reserve refuses a chunk, ReadDelivery returns its error. A request without an event, delivery id, JSON content type or
// signature is refused before any of its body is read; a body announced or
// found larger than max is refused as soon as that is known. Form-encoded
// deliveries are refused: GitHub sends JSON when the App is configured so,
// and a form body must be held whole to be decoded. Nothing of the body is
// parsed here.
//
// A body read in more than one chunk is copied into one buffer once its
// signature matched; that buffer takes over the chunks' reservation (the chunks are garbage
// from then on).
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
	mac := hmac.New(sha256.New, secret)
	chunks, err := readChunks(body, contentLength, max, reserve, mac)
	if err != nil {
		return Delivery{}, err
	}
	if !signed(mac, want) {
		return Delivery{}, &MismatchError{d: d, want: want, chunks: chunks}
	}
	d.Payload = join(chunks)
	return d, nil
}

// MismatchError is ErrBadSignature for a body read whole whose signature
// does not match the secret it was read with. Verify checks it against
// another secret (the App's secret may have just been rotated, or the App
// just been created on another replica).
type MismatchError struct {
	d      Delivery
	want   []byte
	chunks [][]byte
}

func (e *MismatchError) Error() string { return ErrBadSignature.Error() }
func (e *MismatchError) Unwrap() error { return ErrBadSignature }

// Verify returns the delivery when its signature matches secret.
func (e *MismatchError) Verify(secret []byte) (Delivery, bool) {
	mac := hmac.New(sha256.New, secret)
	for _, c := range e.chunks {
		mac.Write(c)
	}
	if !signed(mac, e.want) {
		return Delivery{}, false
	}
	d := e.d
	d.Payload = join(e.chunks)
	return d, true
}

// readChunks reads a body of contentLength bytes (-1: unknown) of at most
// max in chunks, each reserved before it is allocated and written to
// mac as it is read. No chunk grows: growing would hold the old and the
// new buffer at once.
func readChunks(body io.Reader, contentLength, max int64, reserve func(n int64) error, mac hash.Hash) ([][]byte, error) {
	var chunks [][]byte
	var got int64
	for {
		size := int64(ChunkBytes)
		if got == 0 {
			size = FirstChunkBytes
		}
		left := max + 1 - got // one byte more than max tells a body too large
		if contentLength >= 0 {
			left = contentLength - got
		}
		size = min(size, left)
		if size == 0 {
			return chunks, nil
		}
		if err := reserve(size); err != nil {
			return nil, err
		}
		c := make([]byte, size)
		n, err := io.ReadFull(body, c)
		mac.Write(c[:n])
		chunks = append(chunks, c[:n])
		got += int64(n)
		switch {
		case got > max:
			return nil, ErrTooLarge
		case contentLength < 0 && (errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)):
			return chunks, nil
		case errors.Is(err, io.EOF):
			return nil, fmt.Errorf("read webhook body: %w", io.ErrUnexpectedEOF) // shorter than announced
		case err != nil:
			return nil, fmt.Errorf("read webhook body: %w", err)
		}
	}
}

// join returns the chunks as one buffer; a body of one chunk is that chunk.
func join(chunks [][]byte) []byte {
	switch len(chunks) {
	case 0:
		return []byte{}
	case 1:
		return chunks[0]
	}
	n := 0
	for _, c := range chunks {
		n += len(c)
	}
	b := make([]byte, 0, n)
	for _, c := range chunks {
		b = append(b, c...)
	}
	return b
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
