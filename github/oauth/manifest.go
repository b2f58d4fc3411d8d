package oauth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	gh "github.com/google/go-github/v60/github"

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/github"
)

// ManifestApp is a GitHub App that GitHub created from a manifest (the
// manifest flow), with the credentials it hands out once.
type ManifestApp struct {
	// ID is the App's id; Slug its URL name; HTMLURL its page on GitHub.
	ID      int64
	Slug    string
	HTMLURL string
	// ClientID and ClientSecret are the App's OAuth client.
	ClientID     string
	ClientSecret config.Secret
	// WebhookSecret signs the App's webhook deliveries.
	WebhookSecret config.Secret
	// PrivateKey is the App's private key, PEM.
	PrivateKey config.Secret
}

// ErrManifestCode says GitHub did not know the manifest code: it is wrong,
// was already used, or expired (codes last an hour).
var ErrManifestCode = errors.New("GitHub does not know this code: it was already used, expired (after one hour), or is wrong")

// validCode is what a manifest code may look like; anything else is
// refused before it reaches a URL path.
var validCode = regexp.MustCompile(`^[A-Za-z0-9_-]{1,200}$`)

// ManifestOptions configures ConvertManifest.
type ManifestOptions struct {
	// APIURL is the REST API address; empty means github.com's.
	APIURL string
	// Version is MergeGuard's version, for the user agent.
	Version string
	// Timeout bounds the request; 0 means 30s.
	Timeout time.Duration
	// Transport is the base transport; nil means http.DefaultTransport.
	Transport http.RoundTripper
}

// ConvertManifest exchanges the code GitHub's manifest flow redirected
// with for the new App's credentials (POST /app-manifests/{code}/conversions,
// unauthenticated). A code works once. Errors never contain the code or
// any credential.
func ConvertManifest(ctx context.Context, code string, opts ManifestOptions) (ManifestApp, error) {
	if !validCode.MatchString(code) {
		return ManifestApp{}, ErrManifestCode
	}
	client, err := manifestClient(opts)
	if err != nil {
		return ManifestApp{}, err
	}
	cfg, _, err := client.Apps.CompleteAppManifest(ctx, code)
	if err != nil {
		var er *gh.ErrorResponse
		if errors.As(err, &er) && er.Response != nil {
			if er.Response.StatusCode == http.StatusNotFound || er.Response.StatusCode == http.StatusUnprocessableEntity {
				return ManifestApp{}, ErrManifestCode
			}
			return ManifestApp{}, fmt.Errorf("convert the App manifest: GitHub answered %s: %s", er.Response.Status, er.Message)
		}
		if ctx.Err() != nil {
			return ManifestApp{}, fmt.Errorf("convert the App manifest: %w", ctx.Err())
		}
		return ManifestApp{}, errors.New("convert the App manifest: GitHub could not be reached")
	}
	app := ManifestApp{
		ID: cfg.GetID(), Slug: cfg.GetSlug(), HTMLURL: cfg.GetHTMLURL(),
		ClientID: cfg.GetClientID(), ClientSecret: config.Secret(cfg.GetClientSecret()),
		WebhookSecret: config.Secret(cfg.GetWebhookSecret()), PrivateKey: config.Secret(cfg.GetPEM()),
	}
	if app.ID <= 0 || !app.PrivateKey.IsSet() || !app.WebhookSecret.IsSet() || app.HTMLURL == "" {
		return ManifestApp{}, errors.New("convert the App manifest: GitHub's answer lacks the App's id, page, private key or webhook secret")
	}
	return app, nil
}

func manifestClient(opts ManifestOptions) (*gh.Client, error) {
	base := opts.APIURL
	if base == "" {
		base = github.DefaultV3APIURL
	}
	u, err := url.Parse(base)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return nil, fmt.Errorf("convert the App manifest: API URL %q is not an absolute URL", base)
	}
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
	}
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	hc := &http.Client{Timeout: timeout, Transport: opts.Transport}
	client := gh.NewClient(hc)
	client.BaseURL = u
	version := opts.Version
	if version == "" {
		version = "dev"
	}
	client.UserAgent = "mergeguard/" + version
	return client, nil
}
