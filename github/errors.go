package github

import (
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"syscall"
	"time"

	"github.com/bradleyfalzon/ghinstallation/v2"
	gh "github.com/google/go-github/v60/github"
	"github.com/palantir/go-githubapp/githubapp"

	"github.com/mergeguard/mergeguard/internal/retry"
)

// Log keys, go-githubapp's, so that every line about a repository or a
// delivery reads alike whichever package writes it.
const (
	LogKeyEventType       = githubapp.LogKeyEventType
	LogKeyDeliveryID      = githubapp.LogKeyDeliveryID
	LogKeyInstallationID  = githubapp.LogKeyInstallationID
	LogKeyRepositoryOwner = githubapp.LogKeyRepositoryOwner
	LogKeyRepositoryName  = githubapp.LogKeyRepositoryName
	LogKeyPRNum           = githubapp.LogKeyPRNum
)

// Transient reports whether err, from a call through this package, is worth
// trying again later — a rate limit, a server error, an installation token
// GitHub could not mint for such a reason, or a network failure — and how
// long GitHub asked to wait (0 when it did not say).
func Transient(err error) (asked time.Duration, ok bool) {
	var rate *gh.RateLimitError
	if errors.As(err, &rate) {
		return max(time.Until(rate.Rate.Reset.Time), 0), true
	}
	var abuse *gh.AbuseRateLimitError
	if errors.As(err, &abuse) {
		return abuse.GetRetryAfter(), true
	}
	var ghErr *gh.ErrorResponse
	if errors.As(err, &ghErr) && ghErr.Response != nil {
		return retryableStatus(ghErr.Response)
	}
	var tokenErr *ghinstallation.HTTPError // minting the installation token
	if errors.As(err, &tokenErr) && tokenErr.Response != nil {
		return retryableStatus(tokenErr.Response)
	}
	return 0, networkFailure(err)
}

// networkFailure reports connection failures and timeouts; not every error
// of an HTTP client (a url.Error wraps a refused installation token too). A
// request whose connection closed before any answer fails with a url.Error
// wrapping io.EOF.
func networkFailure(err error) bool {
	var opErr *net.OpError
	var netErr net.Error
	var urlErr *url.Error
	switch {
	case errors.As(err, &opErr),
		errors.As(err, &netErr) && netErr.Timeout(),
		errors.As(err, &urlErr) && errors.Is(urlErr.Err, io.EOF),
		errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.ECONNREFUSED):
		return true
	}
	return false
}

// retryableStatus says whether an answer is worth retrying: 429 and server
// errors are, client errors are not. The wait is the answer's Retry-After.
func retryableStatus(resp *http.Response) (time.Duration, bool) {
	if resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode < 500 {
		return 0, false
	}
	d, _ := retry.After(resp.Header, time.Now())
	return d, true
}

// FailureReason names why a call to GitHub failed, for metrics:
// rate_limited, the HTTP status, network or other.
func FailureReason(err error) string {
	var rate *gh.RateLimitError
	var abuse *gh.AbuseRateLimitError
	var ghErr *gh.ErrorResponse
	switch {
	case errors.As(err, &rate), errors.As(err, &abuse):
		return "rate_limited"
	case errors.As(err, &ghErr) && ghErr.Response != nil:
		if ghErr.Response.StatusCode == http.StatusTooManyRequests {
			return "rate_limited"
		}
		return strconv.Itoa(ghErr.Response.StatusCode)
	}
	if _, ok := Transient(err); ok {
		return "network"
	}
	return "other"
}

// APIError marks GitHub's 404 as review.ErrNotFound, keeping the original:
// the seam for the packages under github/ that call the API with their own
// clients (github/oauth).
func APIError(err error) error { return apiError(err) }
