package storetest

import (
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// TestOpenKeepsTheDatabase: the database a test wrote to (and left a
// session of its own on) is emptied and handed to the binary's next test
// with the kept pool's session still open; one whose schema the test
// changed is dropped. The tests of this package run one at a time, so the
// next test takes the database the last one kept.
func TestOpenKeepsTheDatabase(t *testing.T) {
	var name string
	var pid, leftPID uint32
	var left *pgx.Conn // a session the first test forgot
	defer func() {
		if left != nil {
			_ = left.Close(t.Context())
		}
	}()
	t.Run("writes", func(t *testing.T) {
		_, pool := Open(t)
		name, pid = session(t, pool)
		if !strings.HasPrefix(name, keptPrefix) {
			t.Errorf("database %s, want a kept one", name)
		}
		if _, err := pool.Exec(t.Context(), `INSERT INTO installations (id, account_login) VALUES (7, 'acme');
			INSERT INTO webhook_deliveries (delivery_id, event) VALUES ('d-1', 'ping')`); err != nil {
			t.Fatal(err)
		}
		var err error
		if left, err = pgx.Connect(t.Context(), pool.Config().ConnString()); err != nil {
			t.Fatal(err)
		}
		leftPID = left.PgConn().PID()
	})
	t.Run("next", func(t *testing.T) {
		_, pool := Open(t)
		if got, _ := session(t, pool); got != name {
			t.Errorf("the next test got database %s, want the kept %s", got, name)
		}
		var pids []uint32
		rows, err := pool.Query(t.Context(), "SELECT pid FROM pg_stat_activity WHERE datname = current_database()")
		if err == nil {
			pids, err = pgx.CollectRows(rows, pgx.RowTo[uint32])
		}
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(pids, pid) {
			t.Errorf("sessions %v on the kept database, want the first test's %d among them", pids, pid)
		}
		// The kept pool may hold more than one session (it opens one
		// in the background to keep its minimum); the forgotten one must
		// be gone.
		if slices.Contains(pids, leftPID) {
			t.Errorf("sessions %v on the kept database, want the forgotten one (%d) ended", pids, leftPID)
		}
		if rows := texts(t, pool.Config().ConnString(), "SELECT account_login FROM installations UNION ALL SELECT delivery_id FROM webhook_deliveries"); len(rows) != 0 {
			t.Errorf("the kept database holds rows %v", rows)
		}
		if _, err := pool.Exec(t.Context(), "CREATE TABLE only_here (x int)"); err != nil {
			t.Fatal(err)
		}
	})
	if dbs := texts(t, serverURL(t, os.Getenv).String(), "SELECT datname FROM pg_database WHERE datname = $1", name); len(dbs) != 0 {
		t.Errorf("database %s, whose schema a test changed, was kept", name)
	}
}

// TestOpenDropsADatabaseStillInUse: a database whose pool a test's work
// still uses when the test ends is dropped, not kept for the next test.
func TestOpenDropsADatabaseStillInUse(t *testing.T) {
	var name string
	var held *pgxpool.Conn
	t.Run("leaves work running", func(t *testing.T) {
		_, pool := Open(t)
		name, _ = session(t, pool)
		var err error
		if held, err = pool.Acquire(t.Context()); err != nil {
			t.Fatal(err)
		}
	})
	held.Release()
	if dbs := texts(t, serverURL(t, os.Getenv).String(), "SELECT datname FROM pg_database WHERE datname = $1", name); len(dbs) != 0 {
		t.Errorf("database %s, whose pool was in use after its test, was kept", name)
	}
}

// TestClaimOrphan: a kept database whose binary ended (no session on it)
// is claimed by renaming and emptied before use; one with a session on it
// is not. The databases are named under a template of this test's own, so
// that no binary running beside it claims them.
func TestClaimOrphan(t *testing.T) {
	server := serverURL(t, os.Getenv)
	own := templatePrefix + "kepttest"
	u := URL(t)
	execSQL(t, u, "INSERT INTO installations (id, account_login) VALUES (7, 'acme')")
	orphan := keptPrefix + "kepttest_orphan"
	admin, err := pgx.Connect(t.Context(), server.String())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = admin.Close(t.Context()) }()
	if _, err := admin.Exec(t.Context(), "ALTER DATABASE "+dbName(t, u)+" RENAME TO "+orphan); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { drop(t, server.String(), orphan) })
	held, err := connectKept(t.Context(), databaseURL(server, orphan)) // a binary holds it
	if err != nil {
		t.Fatal(err)
	}
	if claimed, err := claimOrphan(t.Context(), admin, own, keptPrefix+"kepttest_thief"); claimed || err != nil {
		t.Errorf("claimOrphan = %v, %v on a held database; want nothing claimed", claimed, err)
	}
	held.Close() // its binary ended: its session goes
	for i := 0; len(texts(t, server.String(), "SELECT pid::text FROM pg_stat_activity WHERE datname = $1", orphan)) > 0; i++ {
		if i == 100 {
			t.Fatal("the closed pool's session stays")
		}
		time.Sleep(20 * time.Millisecond)
	}
	name := keptPrefix + "kepttest_next"
	if claimed, err := claimOrphan(t.Context(), admin, own, name); !claimed || err != nil {
		t.Fatalf("claimOrphan = %v, %v; want the orphan claimed", claimed, err)
	}
	t.Cleanup(func() { drop(t, server.String(), name) })
	pool, err := connectKept(t.Context(), databaseURL(server, name))
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	k := kept{name: name, pool: pool}
	if err := k.empty(t.Context(), server.String()+" "+own); err != nil {
		t.Fatal(err)
	}
	if rows := texts(t, databaseURL(server, name), "SELECT account_login FROM installations"); len(rows) != 0 {
		t.Errorf("the claimed database holds rows %v", rows)
	}
}

// session is the database of pool and the process id of the session that
// answered.
func session(t *testing.T, pool *pgxpool.Pool) (string, uint32) {
	t.Helper()
	var name string
	var pid uint32
	if err := pool.QueryRow(t.Context(), "SELECT current_database(), pg_backend_pid()").Scan(&name, &pid); err != nil {
		t.Fatal(err)
	}
	return name, pid
}
