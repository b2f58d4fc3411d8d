// Package storetest gives tests a fresh, migrated, throwaway Postgres
// database on the server named by MERGEGUARD_TEST_DATABASE_URL (or
// DATABASE_URL). `make test` and scripts/with-postgres.sh provide one.
//
// Migrated databases are copies of a template database that is migrated
// once per test server and set of migrations: its name carries a hash of
// the embedded migration files, so a changed migration makes a new
// template. Test binaries running in parallel against one server share it.
// A test's database is not copied for every test: Open's are emptied and
// kept, sessions open, for the binary's next test (kept.go), URL's are
// emptied and renamed free for any binary's (pool.go).
package storetest

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mergeguard/mergeguard/migrations"
	"github.com/mergeguard/mergeguard/server/store"
)

// New returns an open Store on a fresh migrated database, emptied and kept
// for the test binary's next test when the test ends (Open).
func New(t testing.TB) *store.Store {
	t.Helper()
	st, _ := Open(t)
	return st
}

// URL creates a fresh migrated database and returns its URL (for tests
// that hand the database to a server binary). It is a copy of the test
// server's template (see the package comment), created on first use. The
// database is dropped when the test ends.
func URL(t testing.TB) string {
	t.Helper()
	server := serverURL(t, os.Getenv)
	tmpl, err := templateName(migrations.FS)
	if err != nil {
		t.Fatalf("storetest: %v", err)
	}
	return fromTemplate(t, server, tmpl)
}

// fromTemplate gives the test a fresh database of the template tmpl (a
// free one recycled from an earlier test, else a copy; the template is
// created and migrated first when the server has none) and returns its
// URL; when the test ends the database is recycled, or dropped when the
// test changed its schema.
func fromTemplate(t testing.TB, server *url.URL, tmpl string) string {
	t.Helper()
	name := "mergeguard_test_" + strings.ToLower(rand.Text())
	if err := cloneTemplate(t.Context(), server, tmpl, name); err != nil {
		t.Fatalf("storetest: %v", err)
	}
	t.Cleanup(func() {
		if release(server, tmpl, name) != nil {
			drop(t, server.String(), name)
		}
	})
	return databaseURL(server, name)
}

// Empty creates a fresh database without migrating it and returns its URL;
// it is dropped when the test ends.
func Empty(t testing.TB) string {
	t.Helper()
	server := serverURL(t, os.Getenv)
	name := "mergeguard_test_" + strings.ToLower(rand.Text())
	conn, err := admin(t.Context(), server.String())
	if err != nil {
		t.Fatalf("storetest: %v", err)
	}
	defer conn.Release()
	if _, err := conn.Exec(t.Context(), "CREATE DATABASE "+name); err != nil {
		t.Fatalf("storetest: create database %s: %v", name, err)
	}
	t.Cleanup(func() { drop(t, server.String(), name) })
	return databaseURL(server, name)
}

// databaseURL is the URL of database name on the server.
func databaseURL(server *url.URL, name string) string {
	db := *server
	db.Path = "/" + name
	return db.String()
}

// drop removes a test database, disconnecting whoever is still on it.
func drop(t testing.TB, server, name string) {
	// t.Context is already cancelled when cleanups run.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := dropDatabase(ctx, server, name); err != nil {
		t.Errorf("storetest: %v", err)
	}
}

// dropDatabase removes database name, disconnecting whoever is on it.
func dropDatabase(ctx context.Context, server, name string) error {
	conn, err := admin(ctx, server)
	if err != nil {
		return fmt.Errorf("drop database %s: %w", name, err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
		return fmt.Errorf("drop database %s: %w", name, err)
	}
	return nil
}

// serverURL is the URL of the test server, from the environment.
func serverURL(t testing.TB, getenv func(string) string) *url.URL {
	t.Helper()
	raw := getenv("MERGEGUARD_TEST_DATABASE_URL")
	if raw == "" {
		raw = getenv("DATABASE_URL")
	}
	if raw == "" {
		t.Fatal("storetest: no test database: run `make test`, or set MERGEGUARD_TEST_DATABASE_URL " +
			"(e.g. `bash scripts/with-postgres.sh go test ./...` starts a throwaway server)")
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		t.Fatal("storetest: MERGEGUARD_TEST_DATABASE_URL must be a postgres:// URL")
	}
	return u
}
