package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/golang-migrate/migrate/v4"
	_ "github.com/golang-migrate/migrate/v4/database/pgx/v5" // registers the pgx5:// scheme
	"github.com/golang-migrate/migrate/v4/source/iofs"

	"github.com/mergeguard/mergeguard/migrations"
)

// defaultLockTimeout bounds the wait for another replica's migration when
// ctx has no deadline.
const defaultLockTimeout = time.Minute

// MigrateUp applies every pending migration to the database at dbURL.
// Migrations run under golang-migrate's advisory lock, so replicas starting
// together are safe: one migrates, the others wait and find nothing to do.
// Cancelling ctx stops between migrations; it cannot interrupt the wait for
// the lock while the migration tool is being set up.
func MigrateUp(ctx context.Context, dbURL string) error {
	err := withMigrate(ctx, dbURL, func(m *migrate.Migrate) error { return m.Up() })
	if err != nil && !errors.Is(err, migrate.ErrNoChange) {
		return fmt.Errorf("migrate up: %w", err)
	}
	return nil
}

// MigrateDown undoes the last n applied migrations, or all of them when fewer
// than n are applied. n must be positive.
func MigrateDown(ctx context.Context, dbURL string, n int) error {
	if n <= 0 {
		return fmt.Errorf("migrate down: step count must be positive, got %d", n)
	}
	err := withMigrate(ctx, dbURL, func(m *migrate.Migrate) error {
		if _, _, err := m.Version(); errors.Is(err, migrate.ErrNilVersion) {
			return migrate.ErrNoChange // Steps fails on a database without migrations
		}
		return m.Steps(-n)
	})
	var short migrate.ErrShortLimit
	if err != nil && !errors.Is(err, migrate.ErrNoChange) && !errors.As(err, &short) {
		return fmt.Errorf("migrate down %d: %w", n, err)
	}
	return nil
}

// MigrateVersion reports the schema version of the database at dbURL and
// whether a failed migration left it dirty. Version 0 means no migration is
// applied.
func MigrateVersion(ctx context.Context, dbURL string) (version uint, dirty bool, err error) {
	err = withMigrate(ctx, dbURL, func(m *migrate.Migrate) error {
		version, dirty, err = m.Version()
		return err
	})
	if errors.Is(err, migrate.ErrNilVersion) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("migration version: %w", err)
	}
	return version, dirty, nil
}

// withMigrate runs fn on a migrate instance over its own connection (never
// the application pool: the driver holds a session advisory lock). The URL
// form is used everywhere so every caller computes the same lock id.
func withMigrate(ctx context.Context, dbURL string, fn func(*migrate.Migrate) error) (err error) {
	murl, err := migrateURL(dbURL)
	if err != nil {
		return err
	}
	src, err := iofs.New(migrations.FS, ".")
	if err != nil {
		return fmt.Errorf("read embedded migrations: %w", err)
	}
	m, err := migrate.NewWithSourceInstance("iofs", src, murl)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer func() {
		srcErr, dbErr := m.Close()
		err = errors.Join(err, srcErr, dbErr)
	}()
	m.LockTimeout = defaultLockTimeout
	if deadline, ok := ctx.Deadline(); ok {
		m.LockTimeout = time.Until(deadline)
	}

	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		select {
		case <-ctx.Done():
			m.GracefulStop <- true
		case <-done:
		}
	}()
	err = fn(m)
	close(done)
	<-stopped
	if err == nil && ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// migrateURL turns a postgres:// URL into golang-migrate's pgx5:// form and
// drops the pgxpool-only parameters, which the server would reject.
func migrateURL(dbURL string) (string, error) {
	u, err := url.Parse(dbURL)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return "", errors.New("database url must have the form postgres://user@host:port/dbname")
	}
	u.Scheme = "pgx5"
	q := u.Query()
	for k := range q {
		if strings.HasPrefix(k, "pool_") {
			q.Del(k)
		}
	}
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// LatestVersion is the version of the newest migration the binary carries:
// the schema version MigrateUp leads to.
func LatestVersion() (uint, error) {
	entries, err := fs.ReadDir(migrations.FS, ".")
	if err != nil {
		return 0, fmt.Errorf("read migrations: %w", err)
	}
	var latest uint
	for _, e := range entries {
		num, _, ok := strings.Cut(e.Name(), "_")
		if !ok {
			continue
		}
		v, err := strconv.ParseUint(num, 10, 32)
		if err != nil {
			return 0, fmt.Errorf("migration %s: %w", e.Name(), err)
		}
		latest = max(latest, uint(v))
	}
	return latest, nil
}
