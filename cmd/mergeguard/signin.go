package main

import (
	"cmp"
	"context"
	"fmt"
	"strings"

	"github.com/rs/zerolog"

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/github"
	"github.com/mergeguard/mergeguard/server/access"
	"github.com/mergeguard/mergeguard/server/store"
	"github.com/mergeguard/mergeguard/server/web"
)

// newPolicy returns who may use the API and the web UI: the API token,
// and the sign-in sessions keyed by database.secret_key (the API token when
// that is empty), which every replica derives alike.
func newPolicy(cfg config.Config, log *zerolog.Logger) (access.Policy, error) {
	policy, err := access.NewPolicy(cfg.API.Token.Value(), cfg.Server.PublicURL)
	if err != nil {
		return access.Policy{}, fmt.Errorf("access policy: %w", err)
	}
	if policy.Token == "" {
		log.Warn().Msg("MERGEGUARD_API_TOKEN is not set: the review API and web UI answer requests from this machine to localhost only")
	}
	sessions := access.NewSessions(cmp.Or(cfg.Database.SecretKey.Value(), cfg.API.Token.Value()), cfg.API.Token.Value())
	if sessions == nil {
		log.Info().Msg("neither MERGEGUARD_SECRET_KEY nor MERGEGUARD_API_TOKEN is set: nobody can sign in to the web UI")
	}
	return policy.WithSessions(sessions), nil
}

// signInWithGitHub returns what the web UI's "Sign in with GitHub" needs:
// GitHub's OAuth flow and the App's OAuth client: from configuration, else
// the App /setup stored. It logs whether sign-in with GitHub is on.
func signInWithGitHub(cfg config.Config, policy access.Policy, st *store.Store, version string, log *zerolog.Logger) (web.GitHub, web.OAuthApp) {
	oauth := github.NewOAuth(cfg.GitHub.WebURL, cfg.GitHub.V3APIURL, github.ClientOptions{Version: version, Timeout: cfg.GitHub.Timeout})
	app := oauthApp{static: web.StaticOAuthApp{ClientID: cfg.GitHub.OAuth.ClientID, ClientSecret: cfg.GitHub.OAuth.ClientSecret.Value()}, store: st}
	switch {
	case !cfg.GitHub.OAuth.Configured() && !st.HasSecretKey():
		log.Info().Msg("sign-in with GitHub is off: set GITHUB_OAUTH_CLIENT_ID and GITHUB_OAUTH_CLIENT_SECRET, or create the App at /setup, to offer it")
	case cfg.Server.PublicURL == "":
		log.Warn().Msg("sign-in with GitHub is off: it needs MERGEGUARD_PUBLIC_URL (its callback is PUBLIC_URL/signin/github/callback)")
	case policy.Sessions() == nil:
		log.Warn().Msg("sign-in with GitHub is off: it needs MERGEGUARD_SECRET_KEY or MERGEGUARD_API_TOKEN to key its sessions")
	default:
		log.Info().Str("callback", strings.TrimRight(cfg.Server.PublicURL, "/")+"/signin/github/callback").Msg("sign-in with GitHub is on")
	}
	return oauth, app
}

// oauthApp is the App's OAuth client: configuration wins; otherwise the
// App /setup stored, read (and decrypted) on each sign-in so that an App
// created after start is used at once.
type oauthApp struct {
	static web.StaticOAuthApp
	store  *store.Store
}

func (a oauthApp) OAuthApp(ctx context.Context) (string, string, bool, error) {
	if id, secret, ok, _ := a.static.OAuthApp(ctx); ok {
		return id, secret, true, nil
	}
	if !a.store.HasSecretKey() {
		return "", "", false, nil
	}
	creds, ok, err := a.store.AppCredentials(ctx)
	if err != nil || !ok {
		return "", "", false, err
	}
	return creds.ClientID, creds.ClientSecret.Value(), creds.ClientID != "", nil
}
