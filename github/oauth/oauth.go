// Package oauth is the GitHub App's two browser flows: the OAuth web flow
// of "Sign in with GitHub" (Flow) and the manifest flow that creates the
// App at /setup (ConvertManifest). It reaches GitHub's API through
// go-github and package github's error mapping (github.APIError).
package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	gh "github.com/google/go-github/v60/github"

	"github.com/mergeguard/mergeguard/github"
)

// Flow is GitHub's web application flow for the App's OAuth client
// ("Sign in with GitHub"), and what GitHub says about a signed-in person
// when asked with their user token.
//
// GitHub docs: https://docs.github.com/apps/creating-github-apps/authenticating-with-a-github-app/generating-a-user-access-token-for-a-github-app
type Flow struct {
	webURL, v3 string
	opts       github.ClientOptions
	hc         *http.Client
}

// New returns the flow against GitHub at webURL (github.web_url) and
// v3 (github.v3_api_url); empty means github.com. The token exchange
// uses opts.Transport and opts.Timeout; the API calls go through
// github.NewTokenClients with opts.
func New(webURL, v3 string, opts github.ClientOptions) *Flow {
	if webURL == "" {
		webURL = github.DefaultWebURL
	}
	if v3 == "" {
		v3 = github.DefaultV3APIURL
	}
	next := opts.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	return &Flow{webURL: strings.TrimRight(webURL, "/") + "/", v3: v3, opts: opts,
		hc: &http.Client{Transport: next, Timeout: opts.Timeout}}
}

// AuthorizeURL is where a browser is sent to sign in: GitHub asks the
// person to authorize the App, then sends them to redirectURI with a code
// and state.
func (o *Flow) AuthorizeURL(clientID, redirectURI, state string) string {
	q := url.Values{"client_id": {clientID}, "redirect_uri": {redirectURI}, "state": {state}, "allow_signup": {"false"}}
	return o.webURL + "login/oauth/authorize?" + q.Encode()
}

// Error is an error GitHub answered to a token exchange
// ("bad_verification_code", "incorrect_client_credentials",
// "redirect_uri_mismatch", ...), which GitHub sends with status 200.
type Error struct {
	Code, Description string
}

func (e *Error) Error() string {
	return fmt.Sprintf("github oauth: %s: %s", e.Code, e.Description)
}

// Exchange trades the code of a sign-in for the person's user token
// (POST {web}/login/oauth/access_token). An error GitHub answers is an
// *Error.
func (o *Flow) Exchange(ctx context.Context, clientID, clientSecret, code, redirectURI string) (string, error) {
	form := url.Values{"client_id": {clientID}, "client_secret": {clientSecret}, "code": {code}, "redirect_uri": {redirectURI}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, o.webURL+"login/oauth/access_token", strings.NewReader(form.Encode()))
	if err != nil {
		return "", fmt.Errorf("github oauth: exchange the code: %w", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "mergeguard/"+o.version())
	resp, err := o.hc.Do(req)
	if err != nil {
		return "", fmt.Errorf("github oauth: exchange the code: %w", err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return "", fmt.Errorf("github oauth: exchange the code: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("github oauth: exchange the code: GitHub answered %s", resp.Status)
	}
	var out struct {
		AccessToken string `json:"access_token"`
		Error       string `json:"error"`
		Description string `json:"error_description"`
	}
	if err := json.Unmarshal(body, &out); err != nil {
		return "", fmt.Errorf("github oauth: exchange the code: %w", err)
	}
	if out.Error != "" {
		return "", &Error{Code: out.Error, Description: out.Description}
	}
	if out.AccessToken == "" {
		return "", errors.New("github oauth: exchange the code: GitHub answered no token")
	}
	return out.AccessToken, nil
}

func (o *Flow) version() string {
	if o.opts.Version == "" {
		return "dev"
	}
	return o.opts.Version
}

func (o *Flow) client(token string) (*gh.Client, error) {
	c, _, err := github.NewTokenClients(token, o.v3, "", o.opts)
	return c, err
}

// User returns the login and id of the person token belongs to (GET /user).
func (o *Flow) User(ctx context.Context, token string) (string, int64, error) {
	c, err := o.client(token)
	if err != nil {
		return "", 0, err
	}
	u, _, err := c.Users.Get(ctx, "")
	if err != nil {
		return "", 0, fmt.Errorf("github oauth: GET /user: %w", github.APIError(err))
	}
	if u.GetLogin() == "" || u.GetID() <= 0 {
		return "", 0, errors.New("github oauth: GET /user answered no login")
	}
	return u.GetLogin(), u.GetID(), nil
}

// CanRead reports whether the person of token can read repository
// owner/name (GET /repos/{owner}/{repo}: 200 yes; 404 or 403 no, as
// GitHub hides private repositories from those who cannot read them).
func (o *Flow) CanRead(ctx context.Context, token, owner, name string) (bool, error) {
	c, err := o.client(token)
	if err != nil {
		return false, err
	}
	_, resp, err := c.Repositories.Get(ctx, owner, name)
	return answered(resp, err, "GET /repos/"+owner+"/"+name)
}

// CanReadID reports whether the person of token can read the repository
// of GitHub id id, whatever its name now (GET /repositories/{id}: 200
// yes; 404 or 403 no). Unlike CanRead it cannot be fooled by a name that
// passed from one repository to another (renamed, transferred, deleted).
func (o *Flow) CanReadID(ctx context.Context, token string, id int64) (bool, error) {
	if id <= 0 {
		return false, nil
	}
	c, err := o.client(token)
	if err != nil {
		return false, err
	}
	_, resp, err := c.Repositories.GetByID(ctx, id)
	return answered(resp, err, "GET /repositories/"+strconv.FormatInt(id, 10))
}

// CanWriteID reports whether the person of token may push to the
// repository of GitHub id id (GET /repositories/{id}: its
// permissions.push for the person); a repository they cannot read is no.
func (o *Flow) CanWriteID(ctx context.Context, token string, id int64) (bool, error) {
	if id <= 0 {
		return false, nil
	}
	c, err := o.client(token)
	if err != nil {
		return false, err
	}
	r, resp, err := c.Repositories.GetByID(ctx, id)
	if ok, err := answered(resp, err, "GET /repositories/"+strconv.FormatInt(id, 10)); !ok || err != nil {
		return false, err
	}
	return r.GetPermissions()["push"], nil
}

// OrgAdmin reports whether the person of token is an owner of organisation
// org (GET /user/memberships/orgs/{org}: an active membership with role
// admin). Not a member (404) or not allowed to ask (403: the App lacks the
// organisation's members permission) is false.
func (o *Flow) OrgAdmin(ctx context.Context, token, org string) (bool, error) {
	c, err := o.client(token)
	if err != nil {
		return false, err
	}
	m, resp, err := c.Organizations.GetOrgMembership(ctx, "", org)
	ok, err := answered(resp, err, "GET /user/memberships/orgs/"+org)
	if !ok || err != nil {
		return false, err
	}
	return m.GetRole() == "admin" && m.GetState() == "active", nil
}

// ErrUserTokenRefused says GitHub refused a user token (401): it expired
// or was revoked, and its person must sign in again.
var ErrUserTokenRefused = errors.New("github oauth: GitHub refused the user token (expired or revoked)")

// answered turns a GitHub answer into yes (2xx), no (403, 404) or an
// error (ErrUserTokenRefused for 401).
func answered(resp *gh.Response, err error, what string) (bool, error) {
	if err == nil {
		return true, nil
	}
	if resp != nil && resp.StatusCode == http.StatusUnauthorized {
		return false, fmt.Errorf("%s: %w", what, ErrUserTokenRefused)
	}
	if resp != nil && (resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusForbidden) {
		return false, nil
	}
	return false, fmt.Errorf("github oauth: %s: %w", what, github.APIError(err))
}
