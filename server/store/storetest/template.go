package storetest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/mergeguard/mergeguard/server/store"
)

// templatePrefix starts the name of every template database.
const templatePrefix = "mergeguard_tmpl_"

// cloneTimeout bounds getting one database from the template, creating
// the template included.
const cloneTimeout = 2 * time.Minute

// inUseRetry is the pause before trying again a statement that failed
// because another session was on its database.
const inUseRetry = 50 * time.Millisecond

// PostgreSQL error codes the template handling expects.
const (
	codeUndefinedDatabase = "3D000" // the template does not exist yet
	codeObjectInUse       = "55006" // another session is on the database
)

// templateFormat versions what storetest adds to a template beside the
// migrations (ddlSetup): a template of an older storetest on a shared
// server is not used.
const templateFormat = "watch-ddl-1"

// templateName names the template database of the migration files in
// fsys after a hash of every file's name and content, so adding, removing
// or changing a migration names another template.
func templateName(fsys fs.FS) (string, error) {
	h := sha256.New()
	_, _ = fmt.Fprintf(h, "%s\x00", templateFormat)
	err := fs.WalkDir(fsys, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(fsys, path)
		if err != nil {
			return err
		}
		_, _ = fmt.Fprintf(h, "%s\x00%d\x00", path, len(b))
		_, _ = h.Write(b)
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("hash the migrations: %w", err)
	}
	return templatePrefix + hex.EncodeToString(h.Sum(nil))[:16], nil
}

// cloneTemplate creates database name as a copy of the template tmpl,
// creating the template first when the server has none.
func cloneTemplate(ctx context.Context, server *url.URL, tmpl, name string) error {
	ctx, cancel := context.WithTimeout(ctx, cloneTimeout)
	defer cancel()
	conn, err := admin(ctx, server.String())
	if err != nil {
		return err
	}
	defer conn.Release()
	if claimed, err := claimFree(ctx, conn.Conn(), tmpl, name); claimed || err != nil {
		return err
	}
	for {
		_, err := conn.Exec(ctx, "CREATE DATABASE "+name+" TEMPLATE "+tmpl)
		switch pgCode(err) {
		case "":
			if err != nil {
				return fmt.Errorf("create database %s from %s: %w", name, tmpl, err)
			}
			return nil
		case codeUndefinedDatabase:
			if err := createTemplate(ctx, server, tmpl); err != nil {
				return err
			}
		case codeObjectInUse:
			if err := pause(ctx); err != nil {
				return fmt.Errorf("create database %s: template %s stays in use: %w", name, tmpl, err)
			}
		default:
			return fmt.Errorf("create database %s from %s: %w", name, tmpl, err)
		}
	}
}

// createTemplate creates and migrates the template tmpl unless another
// session (of this test binary or another) did. Under an advisory lock
// keyed on tmpl it migrates a database of its own, forbids connections to
// it and renames it tmpl: the template is never seen half migrated, a
// crash leaves no broken template behind, and no session stays on it to
// make copying it fail.
func createTemplate(ctx context.Context, server *url.URL, tmpl string) error {
	lock, err := lockServer(ctx, server, tmpl)
	if err != nil {
		return err
	}
	defer lock.release()
	admin := lock.conn
	var exists bool
	if err := admin.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", tmpl).Scan(&exists); err != nil {
		return fmt.Errorf("look for template %s: %w", tmpl, err)
	}
	if exists {
		return nil // made by another session while this one waited
	}
	build := tmpl + "_build_" + strings.ToLower(rand.Text())[:8]
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+build); err != nil {
		return fmt.Errorf("create template %s: %w", tmpl, err)
	}
	if err := buildTemplate(ctx, admin, server, build, tmpl); err != nil {
		_, _ = admin.Exec(context.WithoutCancel(ctx), "DROP DATABASE IF EXISTS "+build+" WITH (FORCE)")
		return fmt.Errorf("create template %s: %w", tmpl, err)
	}
	return nil
}

// buildTemplate migrates database build and turns it into the template
// tmpl.
func buildTemplate(ctx context.Context, admin *pgx.Conn, server *url.URL, build, tmpl string) error {
	if err := store.MigrateUp(ctx, databaseURL(server, build)); err != nil {
		return err
	}
	if err := watchDDL(ctx, databaseURL(server, build)); err != nil {
		return err
	}
	if _, err := admin.Exec(ctx, "ALTER DATABASE "+build+" ALLOW_CONNECTIONS false"); err != nil {
		return fmt.Errorf("close %s to connections: %w", build, err)
	}
	for {
		// The migration's session may still be ending on the server.
		_, err := admin.Exec(ctx, "ALTER DATABASE "+build+" RENAME TO "+tmpl)
		if pgCode(err) != codeObjectInUse {
			if err != nil {
				return fmt.Errorf("rename %s: %w", build, err)
			}
			return nil
		}
		if err := pause(ctx); err != nil {
			return fmt.Errorf("rename %s: still in use: %w", build, err)
		}
	}
}

// ddlSetup makes a database note any DDL run on it: an event trigger
// (firing in every session_replication_role) sets mergeguard_storetest.ddl's
// flag, which intactSchema reads. Created in the template after the
// migrations, it is in every copy, unchanged.
const ddlSetup = `
CREATE SCHEMA mergeguard_storetest;
CREATE TABLE mergeguard_storetest.ddl (changed boolean NOT NULL);
INSERT INTO mergeguard_storetest.ddl VALUES (false);
CREATE FUNCTION mergeguard_storetest.note_ddl() RETURNS event_trigger LANGUAGE plpgsql AS
  $$ BEGIN UPDATE mergeguard_storetest.ddl SET changed = true; END $$;
CREATE EVENT TRIGGER mergeguard_storetest_ddl ON ddl_command_end EXECUTE FUNCTION mergeguard_storetest.note_ddl();
ALTER EVENT TRIGGER mergeguard_storetest_ddl ENABLE ALWAYS;`

// codeInsufficientPrivilege is PostgreSQL's error for a statement the
// role may not run (an event trigger needs a superuser).
const codeInsufficientPrivilege = "42501"

// watchDDL runs ddlSetup on the database at dbURL, in one transaction: on
// a server where the role may not create event triggers nothing is
// created, and its databases are dropped after their tests rather than
// kept (intactSchema).
func watchDDL(ctx context.Context, dbURL string) error {
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return fmt.Errorf("connect to the template: %w", err)
	}
	defer func() { _ = conn.Close(context.WithoutCancel(ctx)) }()
	// Several statements in one simple-protocol query: one transaction.
	_, err = conn.Exec(ctx, ddlSetup)
	if err != nil && pgCode(err) != codeInsufficientPrivilege {
		return fmt.Errorf("watch the template's DDL: %w", err)
	}
	return nil
}

// lockKey is the advisory lock key of name (a template's, or a lock's of
// storetest).
func lockKey(name string) int64 {
	sum := sha256.Sum256([]byte("mergeguard storetest " + name))
	return int64(binary.BigEndian.Uint64(sum[:8])) //nolint:gosec // any 64 bits make a key
}

// serverLock is a session-level advisory lock of the test server, held on
// a connection of its own: closing the connection releases the lock, so no
// pooled session keeps it should an unlock fail.
type serverLock struct {
	conn *pgx.Conn
}

// lockServer connects to the test server and takes the lock of name,
// waiting for it.
func lockServer(ctx context.Context, server *url.URL, name string) (*serverLock, error) {
	conn, err := pgx.Connect(ctx, server.String())
	if err != nil {
		return nil, fmt.Errorf("connect to the test server: %w", err)
	}
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", lockKey(name)); err != nil {
		_ = conn.Close(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("lock %s: %w", name, err)
	}
	return &serverLock{conn: conn}, nil
}

// release closes the lock's connection, which releases the lock; a second
// call does nothing.
func (l *serverLock) release() {
	ctx, cancel := context.WithTimeout(context.Background(), releaseTimeout)
	defer cancel()
	_ = l.conn.Close(ctx)
}

// pgCode is the SQLSTATE of a PostgreSQL error, "" for other errors and
// nil.
func pgCode(err error) string {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code
	}
	return ""
}

// pause waits inUseRetry, or until ctx ends.
func pause(ctx context.Context) error {
	timer := time.NewTimer(inUseRetry)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}
