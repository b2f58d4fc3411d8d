package storetest

import (
	"crypto/rand"
	"io/fs"
	"maps"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"github.com/mergeguard/mergeguard/migrations"
	"github.com/mergeguard/mergeguard/server/store"
)

// schemaQuery describes the public schema of a database, one text row per
// column, index and constraint.
const schemaQuery = `
SELECT format('column %s.%s %s null=%s default=%s', table_name, column_name, data_type, is_nullable, column_default)
  FROM information_schema.columns WHERE table_schema = 'public'
UNION ALL
SELECT format('index %s.%s %s', tablename, indexname, indexdef) FROM pg_indexes WHERE schemaname = 'public'
UNION ALL
SELECT format('constraint %s.%s %s', conrelid::regclass, conname, pg_get_constraintdef(oid))
  FROM pg_constraint WHERE connamespace = 'public'::regnamespace
ORDER BY 1`

// texts runs a query returning one text column on the database at url.
func texts(t *testing.T, url, sql string, args ...any) []string {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close(t.Context()) }()
	rows, err := conn.Query(t.Context(), sql, args...)
	if err != nil {
		t.Fatal(err)
	}
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return lines
}

// latestMigration is the highest version among the embedded migrations.
func latestMigration(t *testing.T) uint {
	t.Helper()
	names, err := fs.Glob(migrations.FS, "*.up.sql")
	if err != nil || len(names) == 0 {
		t.Fatalf("no embedded migrations: %v", err)
	}
	var latest uint
	for _, name := range names {
		v, err := strconv.ParseUint(strings.SplitN(name, "_", 2)[0], 10, 64)
		if err != nil {
			t.Fatalf("migration %s: %v", name, err)
		}
		latest = max(latest, uint(v))
	}
	return latest
}

// Copies of the template are fully migrated (the latest version, the schema
// a fresh migration gives) and independent of each other and of the
// template: a stale or shared template fails this.
func TestURLCopiesAreFullyMigratedAndIndependent(t *testing.T) {
	fresh := Empty(t)
	if err := store.MigrateUp(t.Context(), fresh); err != nil {
		t.Fatal(err)
	}
	want := texts(t, fresh, schemaQuery)
	a, b := URL(t), URL(t)
	if a == b {
		t.Fatalf("two calls gave the same database %s", a)
	}
	for _, u := range []string{a, b} {
		version, dirty, err := store.MigrateVersion(t.Context(), u)
		if err != nil || version != latestMigration(t) || dirty {
			t.Errorf("MigrateVersion = %d, %t, %v; want %d, false", version, dirty, err, latestMigration(t))
		}
		if diff := cmp.Diff(want, texts(t, u, schemaQuery)); diff != "" {
			t.Errorf("schema of a copy differs from a freshly migrated one (-want +got):\n%s", diff)
		}
	}

	conn, err := pgx.Connect(t.Context(), a)
	if err != nil {
		t.Fatal(err)
	}
	_, err = conn.Exec(t.Context(), "CREATE TABLE only_in_a (x int)")
	_ = conn.Close(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	later := URL(t)
	for _, u := range []string{b, later} {
		if diff := cmp.Diff(want, texts(t, u, schemaQuery)); diff != "" {
			t.Errorf("a change to one copy shows in another (-want +got):\n%s", diff)
		}
	}
}

func TestTemplateNameFollowsTheMigrations(t *testing.T) {
	real, err := templateName(migrations.FS)
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^mergeguard_tmpl_[0-9a-f]{16}$`).MatchString(real) {
		t.Errorf("templateName = %q, want mergeguard_tmpl_ and 16 hex digits", real)
	}
	base := fstest.MapFS{}
	err = fs.WalkDir(migrations.FS, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(migrations.FS, path)
		base[path] = &fstest.MapFile{Data: b}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	up := "000001_init.up.sql"
	tests := []struct {
		name     string
		change   func(fstest.MapFS)
		wantSame bool
	}{
		{"same files", func(fstest.MapFS) {}, true},
		{"a migration changed", func(m fstest.MapFS) {
			m[up] = &fstest.MapFile{Data: append(slices.Clone(m[up].Data), "\n-- changed\n"...)}
		}, false},
		{"a migration added", func(m fstest.MapFS) {
			m["000099_more.up.sql"] = &fstest.MapFile{Data: []byte("SELECT 1;")}
		}, false},
		{"a migration renamed", func(m fstest.MapFS) {
			m["000002_init.up.sql"] = m[up]
			delete(m, up)
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsys := maps.Clone(base)
			tt.change(fsys)
			got, err := templateName(fsys)
			if err != nil {
				t.Fatal(err)
			}
			if (got == real) != tt.wantSame {
				t.Errorf("templateName = %q, real migrations' %q; want same: %t", got, real, tt.wantSame)
			}
		})
	}
}

// Test binaries starting together (here goroutines, each on its own
// connection as a process would be) create the template once and each get
// a migrated copy; no half-built database is left behind.
func TestTemplateCreatedOnceByConcurrentCallers(t *testing.T) {
	server := serverURL(t, os.Getenv)
	tmpl := templatePrefix + "test_" + strings.ToLower(rand.Text()[:12])
	t.Cleanup(func() { drop(t, server.String(), tmpl) })
	const callers = 4
	names := make([]string, callers)
	errs := make([]error, callers)
	var wg sync.WaitGroup
	for i := range callers {
		names[i] = "mergeguard_test_" + strings.ToLower(rand.Text())
		t.Cleanup(func() { drop(t, server.String(), names[i]) })
		wg.Go(func() { errs[i] = cloneTemplate(t.Context(), server, tmpl, names[i]) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("caller %d: %v", i, err)
		}
	}
	for _, name := range names {
		u := databaseURL(server, name)
		version, dirty, err := store.MigrateVersion(t.Context(), u)
		if err != nil || version != latestMigration(t) || dirty {
			t.Errorf("MigrateVersion(%s) = %d, %t, %v; want %d, false", u, version, dirty, err, latestMigration(t))
		}
	}
	got := texts(t, server.String(), "SELECT datname::text || ' connections=' || datallowconn FROM pg_database WHERE datname LIKE $1 ORDER BY 1",
		tmpl+"%")
	if diff := cmp.Diff([]string{tmpl + " connections=false"}, got); diff != "" {
		t.Errorf("databases named after the template (-want +got):\n%s", diff)
	}
}
