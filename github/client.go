package github

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/palantir/go-githubapp/githubapp"
)

// Default GitHub API addresses (github.com). GitHub Enterprise Server uses
// https://HOST/api/v3/ and https://HOST/api/graphql.
const (
	DefaultWebURL   = "https://github.com/"
	DefaultV3APIURL = "https://api.github.com/"
	DefaultV4APIURL = "https://api.github.com/graphql"
)

// ClientOptions configures the clients NewClientCreator makes.
type ClientOptions struct {
	// Version is MergeGuard's version; the user agent is
	// "mergeguard/<Version>" (go-githubapp adds the installation id).
	Version string
	// Timeout bounds each attempt of a request, reading the response
	// included; 0 means no timeout.
	Timeout time.Duration
	// CacheCapacity is how many installation clients are kept (each keeps
	// its installation token); 0 means go-githubapp's default, 64.
	CacheCapacity int
	// Retry is the rate-limit and retry policy; the zero value retries
	// nothing and does not space writes.
	Retry RetryPolicy
	// Middleware is extra client middleware such as githubapp.ClientMetrics
	// or githubapp.ClientLogging. It runs inside the rate-limit transport,
	// so it sees every attempt.
	Middleware []githubapp.ClientMiddleware
	// Transport is the base transport; nil means http.DefaultTransport.
	Transport http.RoundTripper
}

// NewClientCreator returns go-githubapp's caching client creator for the
// App described by app (integration id, private key, and the v3/v4 API URLs,
// which may point at GitHub Enterprise; empty URLs mean github.com). Every
// client it makes sends the MergeGuard user agent and goes through the
// rate-limit transport described at RetryPolicy, which also serialises the
// content-creating requests of each installation.
func NewClientCreator(app githubapp.Config, opts ClientOptions) (githubapp.ClientCreator, error) {
	if app.App.IntegrationID <= 0 {
		return nil, errors.New("new github client creator: integration id is required")
	}
	if app.App.PrivateKey == "" {
		return nil, errors.New("new github client creator: private key is required")
	}
	v3, v4 := app.V3APIURL, app.V4APIURL
	if v3 == "" {
		v3 = DefaultV3APIURL
	}
	if v4 == "" {
		v4 = DefaultV4APIURL
	}
	limiter := newRateLimiter(opts.Retry, opts.Timeout)
	version := opts.Version
	if version == "" {
		version = "dev"
	}
	ccOpts := []githubapp.ClientOption{
		githubapp.WithClientUserAgent("mergeguard/" + version),
		// WithClientMiddleware replaces earlier middleware: pass all at once.
		githubapp.WithClientMiddleware(append([]githubapp.ClientMiddleware{limiter.middleware}, slices.Clone(opts.Middleware)...)...),
	}
	if opts.Transport != nil {
		ccOpts = append(ccOpts, githubapp.WithTransport(opts.Transport))
	}
	cc := githubapp.NewClientCreator(v3, v4, app.App.IntegrationID, []byte(app.App.PrivateKey), ccOpts...)
	// Building an App client parses the private key and makes no request.
	if _, err := cc.NewAppClient(); err != nil {
		return nil, fmt.Errorf("new github client creator: %w", err)
	}
	capacity := opts.CacheCapacity
	if capacity <= 0 {
		capacity = githubapp.DefaultCachingClientCapacity
	}
	caching, err := githubapp.NewCachingClientCreator(cc, capacity)
	if err != nil {
		return nil, fmt.Errorf("new github client creator: %w", err)
	}
	return caching, nil
}
