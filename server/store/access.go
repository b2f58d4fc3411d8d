package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Names of the secrets AccessSecret keeps.
const (
	// SecretAPIToken is the API token serve generates when
	// MERGEGUARD_API_TOKEN is not set.
	SecretAPIToken = "api_token"
	// SecretSetupCode is the one-time code /setup asks for while no
	// GitHub App is stored.
	SecretSetupCode = "setup_code"
)

// accessAD binds a sealed access secret to its name.
func accessAD(name string) []byte { return []byte("mergeguard access_secrets " + name) }

// AccessSecret returns the stored secret name, storing fresh first when
// none is: the first replica to call it wins and every other (and every
// restart) gets the same value. The value is sealed with the secret key
// when the store has one and kept as is otherwise; a value stored in clear
// is sealed once a key is set. It returns ErrNoSecretKey for a sealed value
// without a key and ErrWrongSecretKey when the key is not the one that
// sealed it.
func (s *Store) AccessSecret(ctx context.Context, name, fresh string) (string, error) {
	value, sealed := []byte(fresh), false
	if s.box != nil {
		var err error
		if value, err = s.box.Seal([]byte(fresh), accessAD(name)); err != nil {
			return "", fmt.Errorf("access secret %s: %w", name, err)
		}
		sealed = true
	}
	if _, err := s.pool.Exec(ctx, `INSERT INTO access_secrets (name, value, sealed) VALUES ($1, $2, $3)
		ON CONFLICT (name) DO NOTHING`, name, value, sealed); err != nil {
		return "", fmt.Errorf("access secret %s: %w", name, err)
	}
	if err := s.pool.QueryRow(ctx, `SELECT value, sealed FROM access_secrets WHERE name = $1`, name).Scan(&value, &sealed); err != nil {
		return "", fmt.Errorf("access secret %s: %w", name, err)
	}
	if !sealed {
		return string(value), s.sealAccessSecret(ctx, name, value)
	}
	if s.box == nil {
		return "", ErrNoSecretKey
	}
	plain, err := s.box.Open(value, accessAD(name))
	if err != nil {
		return "", ErrWrongSecretKey
	}
	return string(plain), nil
}

// sealAccessSecret seals a secret stored in clear, once the store has a key.
func (s *Store) sealAccessSecret(ctx context.Context, name string, plain []byte) error {
	if s.box == nil {
		return nil
	}
	sealed, err := s.box.Seal(plain, accessAD(name))
	if err != nil {
		return fmt.Errorf("access secret %s: %w", name, err)
	}
	if _, err := s.pool.Exec(ctx, `UPDATE access_secrets SET value = $2, sealed = true WHERE name = $1 AND NOT sealed AND value = $3`,
		name, sealed, plain); err != nil {
		return fmt.Errorf("access secret %s: seal: %w", name, err)
	}
	return nil
}

// AddWebSession records a sign-in session by the SHA-256 of its id, live
// until expires. It also forgets sessions that expired an hour ago.
func (s *Store) AddWebSession(ctx context.Context, idHash []byte, kind string, expires time.Time) error {
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM web_sessions WHERE expires_at < now() - interval '1 hour'`); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO web_sessions (id_hash, kind, expires_at) VALUES ($1, $2, $3)`, idHash, kind, expires)
		return err
	})
	if err != nil {
		return fmt.Errorf("add web session: %w", err)
	}
	return nil
}

// WebSessionLive reports whether the session of idHash exists and has not
// expired: one primary-key lookup.
func (s *Store) WebSessionLive(ctx context.Context, idHash []byte) (bool, error) {
	var one int
	err := s.pool.QueryRow(ctx, `SELECT 1 FROM web_sessions WHERE id_hash = $1 AND expires_at > now()`, idHash).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read web session: %w", err)
	}
	return true, nil
}

// EndWebSession deletes the session of idHash (sign-out).
func (s *Store) EndWebSession(ctx context.Context, idHash []byte) error {
	if _, err := s.pool.Exec(ctx, `DELETE FROM web_sessions WHERE id_hash = $1`, idHash); err != nil {
		return fmt.Errorf("end web session: %w", err)
	}
	return nil
}

// EndAllWebSessions deletes every session (sign everyone out) and returns
// how many were live.
func (s *Store) EndAllWebSessions(ctx context.Context) (int64, error) {
	tag, err := s.pool.Exec(ctx, `DELETE FROM web_sessions WHERE expires_at > now()`)
	if err != nil {
		return 0, fmt.Errorf("end web sessions: %w", err)
	}
	if _, err := s.pool.Exec(ctx, `DELETE FROM web_sessions`); err != nil {
		return 0, fmt.Errorf("end web sessions: %w", err)
	}
	return tag.RowsAffected(), nil
}
