package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/internal/secretbox"
)

// ChannelApp is notified (empty payload) when the stored GitHub App
// changes; replicas then load it (AppCredentials).
const ChannelApp = "mergeguard_app"

// ErrNoSecretKey is returned by the methods that seal or open stored
// secrets when the store has no key (MERGEGUARD_SECRET_KEY is not set).
var ErrNoSecretKey = errors.New("no secret key to encrypt stored credentials: set MERGEGUARD_SECRET_KEY (32 bytes, e.g. `openssl rand -base64 32`)")

// ErrWrongSecretKey says the stored GitHub App does not decrypt with the
// configured key: MERGEGUARD_SECRET_KEY changed since it was stored.
var ErrWrongSecretKey = errors.New("the stored GitHub App credentials do not decrypt with MERGEGUARD_SECRET_KEY: the key differs from the one they were stored with")

// SetSecretKey sets the key that seals the secrets the store keeps
// (database.secret_key, 32 bytes). Call it once, before the store is used.
func (s *Store) SetSecretKey(key []byte) error {
	box, err := secretbox.New(key)
	if err != nil {
		return fmt.Errorf("set secret key: %w", err)
	}
	s.box = box
	return nil
}

// HasSecretKey reports whether SetSecretKey was called.
func (s *Store) HasSecretKey() bool { return s.box != nil }

// AppCredentials is the GitHub App created through /setup: what MergeGuard
// needs to act as the App, take its webhooks and sign people in with it.
type AppCredentials struct {
	// AppID is the App's id (GITHUB_APP_INTEGRATION_ID); Slug its URL name;
	// HTMLURL its page on GitHub; ClientID its OAuth client id.
	AppID    int64
	Slug     string
	HTMLURL  string
	ClientID string
	// PrivateKey (PEM), WebhookSecret and ClientSecret are stored sealed
	// with AES-256-GCM.
	PrivateKey    config.Secret
	WebhookSecret config.Secret
	ClientSecret  config.Secret
	// Version grows with every SaveAppCredentials; UpdatedAt is the last.
	Version   int64
	UpdatedAt time.Time
}

// sealedApp is the plaintext of github_app.secrets (plain strings:
// config.Secret marshals as "[REDACTED]").
type sealedApp struct {
	PrivateKey    string `json:"private_key"`
	WebhookSecret string `json:"webhook_secret"`
	ClientSecret  string `json:"client_secret"`
}

// appAD binds the sealed secrets to the App's row and id: secrets copied
// from another App's row do not open.
func appAD(appID int64) []byte {
	return []byte("mergeguard github_app " + strconv.FormatInt(appID, 10))
}

// SaveAppCredentials stores c as the GitHub App, replacing any stored
// before, with its secrets sealed, and notifies ChannelApp. It returns
// ErrNoSecretKey without a key.
func (s *Store) SaveAppCredentials(ctx context.Context, c AppCredentials) error {
	if s.box == nil {
		return ErrNoSecretKey
	}
	//nolint:gosec // the secrets are marshalled to be sealed right below, never stored or logged in clear
	plain, err := json.Marshal(sealedApp{c.PrivateKey.Value(), c.WebhookSecret.Value(), c.ClientSecret.Value()})
	if err != nil {
		return fmt.Errorf("save GitHub App: %w", err)
	}
	sealed, err := s.box.Seal(plain, appAD(c.AppID))
	if err != nil {
		return fmt.Errorf("save GitHub App: %w", err)
	}
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO github_app (app_id, slug, html_url, client_id, secrets)
			VALUES ($1, $2, $3, $4, $5)
			ON CONFLICT (singleton) DO UPDATE SET app_id = $1, slug = $2, html_url = $3, client_id = $4,
			    secrets = $5, version = github_app.version + 1, updated_at = now()`,
			c.AppID, c.Slug, c.HTMLURL, c.ClientID, sealed); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `SELECT pg_notify($1, '')`, ChannelApp)
		return err
	})
	if err != nil {
		return fmt.Errorf("save GitHub App %d: %w", c.AppID, err)
	}
	return nil
}

// AppCredentials returns the stored GitHub App with its secrets decrypted;
// ok is false when none is stored. It returns ErrNoSecretKey without a
// key and ErrWrongSecretKey when the key is not the one that sealed them.
func (s *Store) AppCredentials(ctx context.Context) (c AppCredentials, ok bool, err error) {
	var sealed []byte
	err = s.pool.QueryRow(ctx, `SELECT app_id, slug, html_url, client_id, secrets, version, updated_at FROM github_app`).
		Scan(&c.AppID, &c.Slug, &c.HTMLURL, &c.ClientID, &sealed, &c.Version, &c.UpdatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return AppCredentials{}, false, nil
	}
	if err != nil {
		return AppCredentials{}, false, fmt.Errorf("read GitHub App: %w", err)
	}
	if s.box == nil {
		return AppCredentials{}, false, ErrNoSecretKey
	}
	plain, err := s.box.Open(sealed, appAD(c.AppID))
	if err != nil {
		return AppCredentials{}, false, ErrWrongSecretKey
	}
	var p sealedApp
	if err := json.Unmarshal(plain, &p); err != nil {
		return AppCredentials{}, false, fmt.Errorf("read GitHub App: the decrypted secrets are not JSON")
	}
	c.PrivateKey, c.WebhookSecret, c.ClientSecret = config.Secret(p.PrivateKey), config.Secret(p.WebhookSecret), config.Secret(p.ClientSecret)
	return c, true, nil
}

// AppCredentialsVersion returns the stored GitHub App's version, 0 when
// none is stored: a cheap query for replicas that watch for a change.
func (s *Store) AppCredentialsVersion(ctx context.Context) (int64, error) {
	var v int64
	err := s.pool.QueryRow(ctx, `SELECT COALESCE(max(version), 0) FROM github_app`).Scan(&v)
	if err != nil {
		return 0, fmt.Errorf("read GitHub App version: %w", err)
	}
	return v, nil
}
