package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	gh "github.com/google/go-github/v60/github"
	"github.com/shurcooL/githubv4"
)

// ActionsBotLogin is the account GitHub Actions' GITHUB_TOKEN acts as.
const ActionsBotLogin = "github-actions[bot]"

// PullRef names one pull request by its web address.
type PullRef struct {
	// Host is the web host, "github.com" or a GitHub Enterprise host.
	Host        string
	Owner, Repo string
	Number      int
}

// ParsePullURL parses a pull request's web address,
// WEB/OWNER/REPO/pull/N (a trailing slash or a tab such as /files is
// allowed). webURL is the GitHub it must be on (github.web_url:
// https://github.com/ or a GitHub Enterprise address, path included): an
// address on any other host, port or path, or with a user, is refused,
// since the App would otherwise review a pull request of the named
// repository on its own host. An empty webURL accepts any http(s) host
// (the CLI's --pr, whose token and API address follow the host).
func ParsePullURL(raw, webURL string) (PullRef, error) {
	bad := func(why string) (PullRef, error) {
		return PullRef{}, fmt.Errorf("pull request address %q: %s (want https://HOST/OWNER/REPO/pull/NUMBER)", raw, why)
	}
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return bad(err.Error())
	}
	if u.Scheme != "https" && u.Scheme != "http" || u.Host == "" {
		return bad("not an http(s) address")
	}
	rest := u.Path
	if webURL != "" {
		base, err := url.Parse(webURL)
		if err != nil {
			return PullRef{}, fmt.Errorf("github web URL %q: %w", webURL, err)
		}
		var onBase bool
		rest, onBase = strings.CutPrefix(u.Path, withSlash(base.Path))
		if !strings.EqualFold(u.Host, base.Host) || !onBase || u.User != nil {
			return bad("not on this server's GitHub (" + webURL + ")")
		}
	}
	parts := strings.Split(strings.Trim(rest, "/"), "/")
	if len(parts) < 4 || parts[2] != "pull" || parts[0] == "" || parts[1] == "" {
		return bad("not a pull request's address")
	}
	n, err := strconv.Atoi(parts[3])
	if err != nil || n <= 0 {
		return bad("the pull request number is not a positive number")
	}
	return PullRef{Host: u.Host, Owner: parts[0], Repo: parts[1], Number: n}, nil
}

// withSlash is s ending in a slash.
func withSlash(s string) string {
	if strings.HasSuffix(s, "/") {
		return s
	}
	return s + "/"
}

// APIURLs returns the REST and GraphQL addresses for a web host:
// api.github.com for github.com, https://HOST/api/v3/ and
// https://HOST/api/graphql for GitHub Enterprise Server.
func APIURLs(host string) (v3, v4 string) {
	if host == "github.com" || host == "www.github.com" {
		return DefaultV3APIURL, DefaultV4APIURL
	}
	return "https://" + host + "/api/v3/", "https://" + host + "/api/graphql"
}

// GraphQLURL derives the GraphQL address from a REST address as GitHub
// lays them out: https://api.github.com → https://api.github.com/graphql,
// https://HOST/api/v3 → https://HOST/api/graphql, anything else → its
// /graphql.
func GraphQLURL(v3 string) string {
	base := strings.TrimRight(v3, "/")
	if rest, ok := strings.CutSuffix(base, "/api/v3"); ok {
		return rest + "/api/graphql"
	}
	return base + "/graphql"
}

// NewTokenClients returns REST and GraphQL clients that authenticate with a
// plain token (a personal access token or GitHub Actions' GITHUB_TOKEN)
// instead of as an App. v3 and v4 are the API addresses (empty means
// github.com). The clients send MergeGuard's user agent and go through the
// rate-limit transport of NewClientCreator (opts.Version, Timeout, Retry
// and Transport apply; CacheCapacity and Middleware do not).
func NewTokenClients(token, v3, v4 string, opts ClientOptions) (*gh.Client, *githubv4.Client, error) {
	if token == "" {
		return nil, nil, errors.New("new github token client: the token is empty")
	}
	if v3 == "" {
		v3 = DefaultV3APIURL
	}
	if v4 == "" {
		v4 = GraphQLURL(v3)
	}
	base, err := url.Parse(strings.TrimRight(v3, "/") + "/")
	if err != nil {
		return nil, nil, fmt.Errorf("new github token client: REST address: %w", err)
	}
	next := opts.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	version := opts.Version
	if version == "" {
		version = "dev"
	}
	rt := tokenTransport{token: token, userAgent: "mergeguard/" + version,
		next: newRateLimiter(opts.Retry, opts.Timeout).middleware(next)}
	hc := &http.Client{Transport: rt}
	client := gh.NewClient(hc)
	client.BaseURL, client.UploadURL = base, base
	client.UserAgent = rt.userAgent
	return client, githubv4.NewEnterpriseClient(v4, hc), nil
}

// tokenTransport adds the token and the user agent to every request.
type tokenTransport struct {
	token, userAgent string
	next             http.RoundTripper
}

func (t tokenTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	r := req.Clone(req.Context())
	r.Header.Set("Authorization", "Bearer "+t.token)
	r.Header.Set("User-Agent", t.userAgent)
	return t.next.RoundTrip(r)
}

// TokenLogin returns the login of the account a token acts as (GET /user).
// An installation token, such as GitHub Actions' GITHUB_TOKEN, is refused
// there (403): TokenLogin then answers ActionsBotLogin with actions set.
//
// GitHub API docs: https://docs.github.com/rest/users/users#get-the-authenticated-user
func TokenLogin(ctx context.Context, client *gh.Client) (login string, actions bool, err error) {
	u, resp, err := client.Users.Get(ctx, "")
	if err != nil {
		if resp != nil && resp.StatusCode == http.StatusForbidden {
			return ActionsBotLogin, true, nil
		}
		return "", false, fmt.Errorf("learn the token's login (GET /user): %w", apiError(err))
	}
	if u.GetLogin() == "" {
		return "", false, errors.New("learn the token's login (GET /user): GitHub answered no login")
	}
	return u.GetLogin(), false, nil
}

// NewTokenRepo returns the handle of repository owner/name read and written
// through plain clients (see NewTokenClients) rather than an App
// installation. webURL is GitHub's web address (empty means github.com);
// opts.BotLogin must be the token's own login (TokenLogin), or reviews are
// posted again on every run.
func NewTokenRepo(client *gh.Client, v4 *githubv4.Client, owner, name, webURL string, opts PublisherOptions) *Repo {
	if webURL == "" {
		webURL = DefaultWebURL
	}
	return &Repo{owner: owner, name: name, client: client, v4: v4, publisher: NewPublisher(opts), login: opts.BotLogin,
		webURL: strings.TrimRight(webURL, "/") + "/", sources: map[int]*Source{}}
}
