package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/mergeguard/mergeguard/review/text"
)

// Error types, as recorded in an agent result's error_type.
const (
	TypeRateLimited     = "rate_limited"            // 429
	TypeServer          = "server_error"            // 5xx, 408, 409
	TypeTimeout         = "timeout"                 // an attempt or the whole call ran out of time
	TypeCanceled        = "canceled"                // the caller's context was canceled
	TypeTransport       = "transport"               // no HTTP answer: connection refused, reset, DNS...
	TypeAuth            = "auth"                    // 401, 403: bad or missing API key
	TypeNotFound        = "not_found"               // 404: unknown model or wrong base URL
	TypeContextLength   = "context_length_exceeded" // the prompt is longer than the model's context
	TypeBadRequest      = "bad_request"             // any other 4xx
	TypeInvalidResponse = "invalid_response"        // 2xx whose body is not a chat completion
	TypeInvalidRequest  = "invalid_request"         // rejected by the client library before sending
)

// maxMessageBytes bounds the part of a server's error body kept in an Error.
const maxMessageBytes = 300

// Error is a failed chat completion. Callers record Type as the agent's
// error_type; errors.Is(err, context.Canceled) and
// errors.Is(err, context.DeadlineExceeded) work through Unwrap.
type Error struct {
	// Status is the HTTP status of the last attempt, 0 when there was none.
	Status int
	// Type is one of the Type* constants.
	Type string
	// Code is the server's error code, such as "rate_limit_exceeded", when
	// the server sent one.
	Code string
	// Message is the server's error message, or the transport error's text.
	Message string
	// Retryable reports whether the failure was of a kind worth retrying;
	// it may still be returned when the retries ran out.
	Retryable bool
	// Attempts is how many requests were sent.
	Attempts int
	// Err is the underlying error: *openai.APIError, *openai.RequestError,
	// a transport error or the context's error.
	Err error
}

// Error describes the failure in one line.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("chat completion: ")
	if e.Status != 0 {
		fmt.Fprintf(&b, "status %d ", e.Status)
	}
	b.WriteString(e.Type)
	if e.Code != "" {
		fmt.Fprintf(&b, " (%s)", e.Code)
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	if e.Attempts > 1 {
		fmt.Fprintf(&b, " (after %d attempts)", e.Attempts)
	}
	return b.String()
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// classify turns an error of go-openai or of the transport into an *Error.
// parent is the caller's context: when it is done, nothing is retryable.
func classify(parent context.Context, err error) *Error {
	if perr := parent.Err(); perr != nil {
		e := &Error{Type: TypeCanceled, Message: err.Error(), Err: err}
		if errors.Is(perr, context.DeadlineExceeded) {
			e.Type = TypeTimeout
		}
		if !errors.Is(err, perr) {
			e.Err = fmt.Errorf("%w (last error: %w)", perr, err)
		}
		return e
	}

	var reqErr *openai.RequestError
	var apiErr *openai.APIError
	switch {
	case errors.As(err, &reqErr):
		e := &Error{Status: reqErr.HTTPStatusCode, Message: bodyText(reqErr.Body), Err: err}
		if errors.As(reqErr.Err, &apiErr) {
			e.Code, e.Message = codeText(apiErr.Code), apiErr.Message
		}
		return byStatus(e)
	case errors.As(err, &apiErr):
		return byStatus(&Error{
			Status:  apiErr.HTTPStatusCode,
			Code:    codeText(apiErr.Code),
			Message: apiErr.Message,
			Err:     err,
		})
	case errors.Is(err, context.DeadlineExceeded):
		// The attempt's own timeout: the caller still has time.
		return &Error{Type: TypeTimeout, Message: "attempt timed out", Retryable: true, Err: err}
	}

	var urlErr *url.Error
	var netErr net.Error
	var syntaxErr *json.SyntaxError
	var typeErr *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntaxErr), errors.As(err, &typeErr):
		return &Error{Type: TypeInvalidResponse, Message: "response is not a chat completion: " + err.Error(), Err: err}
	case errors.As(err, &urlErr), errors.As(err, &netErr),
		errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return &Error{Type: TypeTransport, Message: err.Error(), Retryable: true, Err: err}
	}
	return &Error{Type: TypeInvalidRequest, Message: err.Error(), Err: err}
}

// byStatus sets Type and Retryable from the HTTP status and error code.
func byStatus(e *Error) *Error {
	switch s := e.Status; {
	case s == http.StatusTooManyRequests:
		e.Type, e.Retryable = TypeRateLimited, true
	case s >= 500, s == http.StatusRequestTimeout, s == http.StatusConflict:
		e.Type, e.Retryable = TypeServer, true
	case s == http.StatusUnauthorized, s == http.StatusForbidden:
		e.Type = TypeAuth
	case s == http.StatusNotFound:
		e.Type = TypeNotFound
	case e.Code == "context_length_exceeded", strings.Contains(e.Message, "maximum context length"):
		e.Type = TypeContextLength
	default:
		e.Type = TypeBadRequest
	}
	return e
}

// codeText renders the API's code, which is a string, a number or null.
// go-openai decodes a null code as the number 0.
func codeText(code any) string {
	if code == nil || code == 0 {
		return ""
	}
	if s, ok := code.(string); ok {
		return s
	}
	return fmt.Sprint(code)
}

// bodyText is a short single-line excerpt of an error body.
func bodyText(body []byte) string {
	s := strings.Join(strings.Fields(string(body)), " ")
	if len(s) > maxMessageBytes {
		s = text.PrefixBytes(s, maxMessageBytes) + "..."
	}
	return s
}
