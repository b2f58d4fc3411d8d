package storetest

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mergeguard/mergeguard/server/store"
)

// A test's database is recycled when the test ends: emptied (the rows of
// every table but golang-migrate's deleted, sequences restarted) and
// renamed free, for the next test of any test binary on the server to
// claim instead of copying the template again. A copy costs PostgreSQL a
// tenth of a second to half a second under load (every page of the
// template goes through the WAL), recycling a few tens of milliseconds. A
// database whose schema is no longer its template's (a test migrated it
// down, or added a table: intactSchema) is dropped instead. A free
// database is claimed by renaming it: of several sessions renaming one,
// exactly one succeeds.

// freePrefix starts the name of every free database.
const freePrefix = "mergeguard_free_"

// releaseTimeout bounds recycling one database.
const releaseTimeout = 30 * time.Second

// intactSchema reads whether a database's schema is still its template's:
// no DDL ran since the template was built (ddlSetup's event trigger notes
// any) and golang-migrate's version is still the latest migration ($1),
// clean. Reading it costs a fraction of a millisecond; the catalog digest
// it replaced took 11 ms, run at the end of every test (5 s of a short
// run's PostgreSQL time). A database without the trigger (a server on
// which storetest may not create one) fails the query and is dropped,
// never kept.
const intactSchema = `
SELECT NOT d.changed AND m.version = $1 AND NOT m.dirty
  FROM mergeguard_storetest.ddl d, schema_migrations m`

// emptying is the statements that empty a database: every table's rows
// deleted but golang-migrate's (foreign keys and triggers off for the
// session, so the order does not matter and no trigger writes), every
// sequence restarted. A DELETE of a test's few rows costs a fraction of a
// millisecond; TRUNCATE makes new files for every table and index, a
// quarter of a second for the schema.
const emptying = `
SELECT coalesce(string_agg(s, ' '), '') FROM (
  SELECT format('DELETE FROM %I;', tablename) AS s FROM pg_tables
   WHERE schemaname = 'public' AND tablename <> 'schema_migrations'
  UNION ALL
  SELECT format('SELECT setval(%L, 1, false);', c.oid::regclass) FROM pg_class c
   WHERE c.relkind = 'S' AND c.relnamespace = 'public'::regnamespace
) x`

// freePattern is the LIKE pattern of the free databases of template tmpl.
func freePattern(tmpl string) string {
	return freePrefix + strings.TrimPrefix(tmpl, templatePrefix) + `\_%`
}

// freeName names a free database of template tmpl.
func freeName(tmpl string) string {
	return freePrefix + strings.TrimPrefix(tmpl, templatePrefix) + "_" + strings.ToLower(rand.Text())[:12]
}

// claimFree renames a free database of template tmpl to name; claimed is
// false when there was none to take.
func claimFree(ctx context.Context, admin *pgx.Conn, tmpl, name string) (claimed bool, err error) {
	return claimListed(ctx, admin, "SELECT datname FROM pg_database WHERE datname LIKE $1 ORDER BY random() LIMIT 8", freePattern(tmpl), name)
}

// claimListed renames one of the databases that list (a query of one
// argument, pattern) names to name; claimed is false when none was left
// to take. Of several sessions renaming one database, exactly one
// succeeds.
func claimListed(ctx context.Context, admin *pgx.Conn, list, pattern, name string) (claimed bool, err error) {
	rows, err := admin.Query(ctx, list, pattern)
	if err != nil {
		return false, fmt.Errorf("list databases %s: %w", pattern, err)
	}
	dbs, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return false, fmt.Errorf("list databases %s: %w", pattern, err)
	}
	for _, db := range dbs {
		_, err := admin.Exec(ctx, "ALTER DATABASE "+db+" RENAME TO "+name)
		switch pgCode(err) {
		case "":
			if err != nil {
				return false, fmt.Errorf("claim %s: %w", db, err)
			}
			return true, nil
		case codeUndefinedDatabase, codeObjectInUse: // another session claimed it, or is on it
		default:
			return false, fmt.Errorf("claim %s: %w", db, err)
		}
	}
	return false, nil
}

// release recycles database name of template tmpl when its schema is still
// the template's: its sessions ended, emptied, renamed free. The caller
// drops a database it did not recycle.
func release(server *url.URL, tmpl, name string) error {
	ctx, cancel := context.WithTimeout(context.Background(), releaseTimeout)
	defer cancel()
	conn, err := admin(ctx, server.String())
	if err != nil {
		return err
	}
	defer conn.Release()
	admin := conn.Conn()
	if err := endSessions(ctx, admin, name); err != nil {
		return err
	}
	if err := empty(ctx, databaseURL(server, name), templateKey(server, tmpl)); err != nil {
		return err
	}
	for {
		if err := endSessions(ctx, admin, name); err != nil {
			return err
		}
		_, err := admin.Exec(ctx, "ALTER DATABASE "+name+" RENAME TO "+freeName(tmpl))
		if pgCode(err) != codeObjectInUse {
			return err
		}
		if err := pause(ctx); err != nil {
			return fmt.Errorf("rename %s: still in use: %w", name, err)
		}
	}
}

// endSessions ends every other session on database name.
func endSessions(ctx context.Context, admin *pgx.Conn, name string) error {
	_, err := admin.Exec(ctx, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()", name)
	if err != nil {
		return fmt.Errorf("end the sessions on %s: %w", name, err)
	}
	return nil
}

// errSchemaChanged is a database whose schema its test changed.
var errSchemaChanged = errors.New("the test changed the schema")

// empty deletes the rows of every table of the database at dbURL but
// golang-migrate's and restarts its sequences, when its schema is still
// its template's (emptyOn).
func empty(ctx context.Context, dbURL, key string) error {
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close(context.WithoutCancel(ctx)) }()
	return emptyOn(ctx, conn, key)
}

// emptyOn empties conn's database, a database of the template of key,
// when its schema is still the template's (intactSchema): the rows of
// every table but golang-migrate's deleted, the sequences restarted.
func emptyOn(ctx context.Context, conn *pgx.Conn, key string) error {
	latest, err := store.LatestVersion()
	if err != nil {
		return err
	}
	var intact bool
	if err := conn.QueryRow(ctx, intactSchema, latest).Scan(&intact); err != nil || !intact {
		return errors.Join(errSchemaChanged, err)
	}
	statements, err := emptyingOf(ctx, conn, key)
	if err != nil {
		return err
	}
	// SET LOCAL: a pooled session keeps no setting of ours.
	_, err = conn.Exec(ctx, "BEGIN; SET LOCAL session_replication_role = replica; "+statements+" COMMIT")
	return err
}

// emptyings are the statements that empty a database of a template
// (emptying's result), by templateKey.
var emptyings sync.Map

// emptyingOf is the emptying statements of the template of key, read
// through conn the first time.
func emptyingOf(ctx context.Context, conn *pgx.Conn, key string) (string, error) {
	if s, ok := emptyings.Load(key); ok {
		return s.(string), nil
	}
	var s string
	if err := conn.QueryRow(ctx, emptying).Scan(&s); err != nil {
		return "", fmt.Errorf("list the tables to empty: %w", err)
	}
	emptyings.Store(key, s)
	return s, nil
}

// templateKey keys what is read once per template of a server.
func templateKey(server *url.URL, tmpl string) string { return server.String() + " " + tmpl }
