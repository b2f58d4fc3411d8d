package storetest

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mergeguard/mergeguard/migrations"
	"github.com/mergeguard/mergeguard/server/store"
)

// A database given by Open is kept by its test binary when the test ends:
// emptied through the test's own pool and handed, connections open, to
// the binary's next test. PostgreSQL then starts no session for that test,
// and the sessions' caches of the schema stay warm: a session costs
// PostgreSQL about 10 ms of CPU to start, and a review test started seven.
//
// A kept database is named keptPrefix while its binary holds it. When the
// binary ends, its sessions end with it, and the next test of any binary
// may claim the database: renaming it succeeds only when no session is on
// it. A claimed database is emptied first, since its binary may have
// ended during a test.

// keptPrefix starts the name of every kept database.
const keptPrefix = "mergeguard_kept_"

// keptApp is the application_name of the kept pools' sessions: emptying
// a database ends every other session on it.
const keptApp = "mergeguard-storetest"

// claimAttempts bounds the databases a test claims and drops because a
// binary that ended during a test changed their schema.
const claimAttempts = 5

// kept is a database and the pool connected to it.
type kept struct {
	name string
	pool *pgxpool.Pool
}

// keptDBs are this test binary's kept databases no test is using, by
// server and template.
var keptDBs = struct {
	sync.Mutex
	free map[string][]kept
}{free: map[string][]kept{}}

// Open gives the test a Store and a pool on a fresh migrated database: the
// Store borrows the pool, so both use the same sessions. When the test
// ends the database is emptied and kept for the next test (see above), or
// dropped when the test changed its schema. Tests that hand the database
// to another process take URL instead.
func Open(t testing.TB) (*store.Store, *pgxpool.Pool) {
	t.Helper()
	server := serverURL(t, os.Getenv)
	tmpl, err := templateName(migrations.FS)
	if err != nil {
		t.Fatalf("storetest: %v", err)
	}
	k, err := take(t.Context(), server, tmpl)
	if err != nil {
		t.Fatalf("storetest: %v", err)
	}
	t.Cleanup(func() {
		if err := giveBack(server, tmpl, k); err != nil {
			drop(t, server.String(), k.name)
			// Close waits for the connections still in use (giveBack), which
			// the drop ended: whoever holds one gets an error on next use.
			go k.pool.Close()
		}
	})
	return store.Borrow(k.pool), k.pool
}

// OpenURL opens a Store and a pool of its own on the database at dbURL,
// both closed when the test ends: for a database of URL's, or of another
// server, and for tests that end the Store's sessions through the pool.
func OpenURL(t testing.TB, dbURL string) (*store.Store, *pgxpool.Pool) {
	t.Helper()
	st, err := store.Open(t.Context(), dbURL)
	if err != nil {
		t.Fatalf("storetest: %v", err)
	}
	t.Cleanup(st.Close)
	pool, err := pgxpool.New(t.Context(), dbURL)
	if err != nil {
		t.Fatalf("storetest: %v", err)
	}
	t.Cleanup(pool.Close)
	return st, pool
}

// take returns a kept database of template tmpl: one of this binary's,
// else one claimed from the server.
func take(ctx context.Context, server *url.URL, tmpl string) (kept, error) {
	key := templateKey(server, tmpl)
	for {
		k, ok := pop(key)
		if !ok {
			break
		}
		if k.ours(ctx) {
			return k, nil
		}
		k.pool.Close()
	}
	for attempt := 1; ; attempt++ {
		k, err := claim(ctx, server, tmpl)
		if err != nil {
			return kept{}, err
		}
		err = k.empty(ctx, key)
		if err == nil {
			return k, nil
		}
		k.pool.Close()
		if !errors.Is(err, errSchemaChanged) || attempt == claimAttempts {
			return kept{}, err
		}
		// A binary that ended during a test left the database changed.
		if err := dropDatabase(ctx, server.String(), k.name); err != nil {
			return kept{}, err
		}
	}
}

// pop takes one of this binary's kept databases of key.
func pop(key string) (kept, bool) {
	keptDBs.Lock()
	defer keptDBs.Unlock()
	free := keptDBs.free[key]
	if len(free) == 0 {
		return kept{}, false
	}
	k := free[len(free)-1]
	keptDBs.free[key] = free[:len(free)-1]
	return k, true
}

// push keeps k for this binary's next test of key.
func push(key string, k kept) {
	keptDBs.Lock()
	defer keptDBs.Unlock()
	keptDBs.free[key] = append(keptDBs.free[key], k)
}

// ours reports whether k's pool is still on k's database: a database whose
// sessions all ended may have been claimed and renamed by another binary.
func (k kept) ours(ctx context.Context) bool {
	var name string
	return k.pool.QueryRow(ctx, "SELECT current_database()").Scan(&name) == nil && name == k.name
}

// claim gets a kept database of template tmpl, a new name's, and connects
// to it: one that no binary holds any more, else a free one, else a new
// copy of the template. Claims hold a lock of the server's from the
// rename to the first session, so that no other claim takes the database
// in between.
func claim(ctx context.Context, server *url.URL, tmpl string) (kept, error) {
	name := keptPrefix + strings.TrimPrefix(tmpl, templatePrefix) + "_" + strings.ToLower(rand.Text())[:12]
	fresh := "mergeguard_test_" + strings.ToLower(rand.Text())
	lock, err := lockServer(ctx, server, "kept claims")
	if err != nil {
		return kept{}, err
	}
	defer lock.release()
	claimed, err := claimOrphan(ctx, lock.conn, tmpl, name)
	if err != nil {
		return kept{}, err
	}
	if !claimed {
		// Free databases and copies are claimed under a name no claim
		// lists, without the lock: a copy may take a second.
		lock.release()
		if err := cloneTemplate(ctx, server, tmpl, fresh); err != nil {
			return kept{}, err
		}
		if lock, err = lockServer(ctx, server, "kept claims"); err != nil {
			return kept{}, err
		}
		defer lock.release()
		if _, err := lock.conn.Exec(ctx, "ALTER DATABASE "+fresh+" RENAME TO "+name); err != nil {
			return kept{}, fmt.Errorf("name %s: %w", fresh, err)
		}
	}
	pool, err := connectKept(ctx, databaseURL(server, name))
	if err != nil {
		return kept{}, fmt.Errorf("connect to %s: %w", name, err)
	}
	return kept{name: name, pool: pool}, nil
}

// connectKept connects a kept pool to the database at dbURL, with one
// session open: a session on the database keeps other claims off it.
func connectKept(ctx context.Context, dbURL string) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(dbURL)
	if err != nil {
		return nil, err
	}
	cfg.MinConns = 1
	cfg.ConnConfig.RuntimeParams["application_name"] = keptApp
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	return pool, nil
}

// orphans lists the kept databases of a pattern that no session is on.
const orphans = `
SELECT datname FROM pg_database d
 WHERE datname LIKE $1
   AND NOT EXISTS (SELECT FROM pg_stat_activity a WHERE a.datname = d.datname)
 ORDER BY random() LIMIT 8`

// claimOrphan renames a kept database of template tmpl that no session is
// on to name; claimed is false when there is none.
func claimOrphan(ctx context.Context, admin *pgx.Conn, tmpl, name string) (claimed bool, err error) {
	return claimListed(ctx, admin, orphans, keptPrefix+strings.TrimPrefix(tmpl, templatePrefix)+`\_%`, name)
}

// giveBack empties k and keeps it for the binary's next test; it fails
// when the test changed the schema or still uses the pool, and the caller
// drops the database.
func giveBack(server *url.URL, tmpl string, k kept) error {
	if n := k.pool.Stat().AcquiredConns(); n > 0 {
		// Work of the ended test is still running: kept, it would write
		// into the next test's database.
		return fmt.Errorf("%d connections of %s still in use after the test", n, k.name)
	}
	ctx, cancel := context.WithTimeout(context.Background(), releaseTimeout)
	defer cancel()
	key := templateKey(server, tmpl)
	if err := k.empty(ctx, key); err != nil {
		return err
	}
	push(key, k)
	return nil
}

// empty ends every session on k's database but its pool's, then, when the
// schema is still the template's, deletes the rows of every table but
// golang-migrate's and restarts the sequences.
func (k kept) empty(ctx context.Context, key string) error {
	dropDead(ctx, k.pool)
	conn, err := k.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("empty %s: %w", k.name, err)
	}
	defer conn.Release()
	if err := endOthers(ctx, conn.Conn()); err != nil {
		return fmt.Errorf("empty %s: %w", k.name, err)
	}
	if err := emptyOn(ctx, conn.Conn(), key); err != nil {
		return fmt.Errorf("empty %s: %w", k.name, err)
	}
	return nil
}

// dropDead pings the pool's idle connections, so that the pool drops the
// ones whose sessions the test ended before the next test gets them.
func dropDead(ctx context.Context, pool *pgxpool.Pool) {
	for _, c := range pool.AcquireAllIdle(ctx) {
		if c.Ping(ctx) != nil {
			_ = c.Conn().Close(ctx) // a closed connection is destroyed on release
		}
		c.Release()
	}
}

// endOthers ends the client sessions on conn's database that are not the
// kept pools', and waits until they are gone: a session ending in the
// middle of a commit could otherwise write after the rows are deleted.
func endOthers(ctx context.Context, conn *pgx.Conn) error {
	for {
		var others int
		err := conn.QueryRow(ctx, `
SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
 WHERE datname = current_database() AND backend_type = 'client backend'
   AND application_name <> $1`, keptApp).Scan(&others)
		if err != nil {
			return fmt.Errorf("end the other sessions: %w", err)
		}
		if others == 0 {
			return nil
		}
		if err := pause(ctx); err != nil {
			return fmt.Errorf("end the other sessions: %w", err)
		}
	}
}
