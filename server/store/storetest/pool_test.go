package storetest

import (
	"errors"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"
)

// execSQL runs statements on the database at url.
func execSQL(t *testing.T, url string, sql ...string) {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close(t.Context()) }()
	for _, s := range sql {
		if _, err := conn.Exec(t.Context(), s); err != nil {
			t.Fatal(err)
		}
	}
}

// dbName is the database of a URL.
func dbName(t *testing.T, u string) string {
	t.Helper()
	p, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimPrefix(p.Path, "/")
}

// TestReleaseRecyclesFreshDatabases: a database a test wrote to (and left
// a session on) is recycled empty, its identities restarted, its schema
// and migration version intact, and claimed by the next test; one whose
// schema the test changed is not recycled. The databases are released
// under a template name of this test's own, so that no test binary
// running beside it claims them.
func TestReleaseRecyclesFreshDatabases(t *testing.T) {
	server := serverURL(t, os.Getenv)
	own := templatePrefix + "pooltest" + strings.ToLower(strings.ReplaceAll(t.Name(), "_", ""))[:8]
	u := URL(t)
	name := dbName(t, u)
	fresh := texts(t, u, schemaQuery)
	execSQL(t, u, "INSERT INTO installations (id, account_login) VALUES (7, 'acme')",
		"INSERT INTO webhook_deliveries (delivery_id, event) VALUES ('d-1', 'ping')")
	left, err := pgx.Connect(t.Context(), u) // a session the test forgot
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = left.Close(t.Context()) }()
	if err := release(server, own, name); err != nil {
		t.Fatalf("release: %v", err)
	}
	free := texts(t, server.String(), "SELECT datname FROM pg_database WHERE datname LIKE $1", freePattern(own))
	if len(free) != 1 {
		t.Fatalf("free databases %v, want the released one", free)
	}
	t.Cleanup(func() { drop(t, server.String(), free[0]) })
	r := databaseURL(server, free[0])
	if diff := cmp.Diff(fresh, texts(t, r, schemaQuery)); diff != "" {
		t.Errorf("the recycled schema differs (-want +got):\n%s", diff)
	}
	if rows := texts(t, r, "SELECT account_login FROM installations UNION ALL SELECT delivery_id FROM webhook_deliveries"); len(rows) != 0 {
		t.Errorf("the recycled database holds rows %v", rows)
	}
	if v := texts(t, r, "SELECT version::text || ' ' || dirty::text FROM schema_migrations"); len(v) != 1 || v[0] != strconv.FormatUint(uint64(latestMigration(t)), 10)+" false" {
		t.Errorf("the recycled database's migration is %v", v)
	}

	admin, err := pgx.Connect(t.Context(), server.String())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = admin.Close(t.Context()) }()
	next := "mergeguard_test_pooltest_next"
	if claimed, err := claimFree(t.Context(), admin, own, next); !claimed || err != nil {
		t.Fatalf("claimFree = %v, %v; want the free database claimed", claimed, err)
	}
	t.Cleanup(func() { drop(t, server.String(), next) })
	if again, err := claimFree(t.Context(), admin, own, "mergeguard_test_pooltest_again"); again || err != nil {
		t.Errorf("a second claim = %v, %v; want none left", again, err)
	}

	// A schema changed by DDL, or only golang-migrate's row of it (a test
	// marking the migration dirty or older), is not the template's.
	for _, change := range []string{
		"CREATE TABLE only_here (x int)",
		"UPDATE schema_migrations SET dirty = true",
		"UPDATE schema_migrations SET version = version - 1",
	} {
		changed := URL(t)
		execSQL(t, changed, change)
		if err := release(server, own, dbName(t, changed)); !errors.Is(err, errSchemaChanged) {
			t.Errorf("release after %q = %v, want errSchemaChanged", change, err)
		}
	}
}
