package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/mergeguard/mergeguard/server/store"
)

// Server is a PostgreSQL server of the test's own, for tests that restart
// or stop the database under a running application: the shared test server
// must not be touched, other packages' tests run against it in parallel.
type Server struct {
	bin  string // directory of initdb, pg_ctl and postgres
	dir  string // data directory, socket and log
	port int
}

// StartServer creates and starts a throwaway PostgreSQL cluster on a free
// port of 127.0.0.1 (trust authentication, no fsync), with MergeGuard's
// schema migrated into its postgres database; it is stopped and removed
// when the test ends. It finds the server binaries as
// scripts/with-postgres.sh does (initdb in PATH, else the newest
// /usr/lib/postgresql/*/bin) and runs them as the postgres user when the
// test runs as root. The test is skipped when there are none, and by
// -short (make test-short).
func StartServer(t testing.TB) *Server {
	t.Helper()
	if testing.Short() {
		t.Skip("slow: starts a PostgreSQL server of its own, seconds of CPU; skipped by -short, make test runs it")
	}
	bin, err := serverBinaries()
	if err != nil {
		t.Skipf("storetest: a PostgreSQL server of the test's own needs the server binaries: %v", err)
	}
	// Not t.TempDir: its parent is private to the test's user, and the
	// postgres user must reach the cluster's directory.
	dir, err := os.MkdirTemp("", "mergeguard-pg-") //nolint:usetesting // see above
	if err != nil {
		t.Fatalf("storetest: %v", err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	s := &Server{bin: bin, dir: dir}
	if err := s.ownDir(); err != nil {
		t.Fatalf("storetest: %v", err)
	}
	if out, err := s.command(t.Context(), "initdb", "-D", s.data(), "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-locale", "--no-sync").CombinedOutput(); err != nil {
		t.Fatalf("storetest: initdb: %v\n%s", err, out)
	}
	if err := s.startOnFreePort(); err != nil {
		t.Fatalf("storetest: %v", err)
	}
	t.Cleanup(func() {
		if _, err := os.Stat(filepath.Join(s.data(), "postmaster.pid")); err != nil {
			return // stopped by the test
		}
		ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
		defer cancel()
		if out, err := s.command(ctx, "pg_ctl", "-D", s.data(), "-m", "immediate", "-w", "stop").CombinedOutput(); err != nil {
			t.Errorf("storetest: stop the test's PostgreSQL: %v\n%s", err, out)
		}
	})
	if err := store.MigrateUp(t.Context(), s.URL()); err != nil {
		t.Fatalf("storetest: %v", err)
	}
	return s
}

// URL is the postgres:// URL of the server's migrated postgres database.
func (s *Server) URL() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", s.port)
}

// Restart restarts the server as an operator would (pg_ctl restart -m
// fast): every connection is closed, and the server is back when Restart
// returns. Like Stop and Start, it may be called from any goroutine.
func (s *Server) Restart() error {
	// pg_ctl forgets the log file over a restart: without -l the new
	// server would keep pg_ctl's output open.
	return s.pgCtl("restart", "-l", s.logFile(), "-m", "fast")
}

// Stop stops the server (pg_ctl stop -m fast): connections are closed and
// new ones refused until Start.
func (s *Server) Stop() error { return s.pgCtl("stop", "-m", "fast") }

// Start starts the stopped server again, on its port.
func (s *Server) Start() error {
	return s.pgCtl("start", "-l", s.logFile(), "-o", s.options())
}

// commandTimeout bounds one pg_ctl command (it waits up to 60s itself).
const commandTimeout = 90 * time.Second

func (s *Server) pgCtl(action string, args ...string) error {
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	args = append([]string{"-D", s.data(), "-w", "-t", "60"}, args...)
	if out, err := s.command(ctx, "pg_ctl", append(args, action)...).CombinedOutput(); err != nil {
		return fmt.Errorf("storetest: %s PostgreSQL: %w\n%s\n%s", action, err, out, s.serverLog())
	}
	return nil
}

func (s *Server) data() string { return filepath.Join(s.dir, "data") }

// options are the server's options: its port and socket, and no fsync.
func (s *Server) options() string {
	return fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off", s.port, s.dir)
}

// startOnFreePort starts the server on a free port; a port taken between
// the probe and the start is tried again with another.
func (s *Server) startOnFreePort() error {
	var err error
	for range 5 {
		if s.port, err = freePort(); err != nil {
			return err
		}
		if err = s.Start(); err == nil || !bytes.Contains(s.serverLog(), []byte("could not bind")) {
			return err
		}
	}
	return err
}

func (s *Server) logFile() string { return filepath.Join(s.dir, "postgres.log") }

func (s *Server) serverLog() []byte {
	b, _ := os.ReadFile(s.logFile())
	return b
}

// command runs one of the server binaries, as the postgres user when the
// test runs as root (PostgreSQL refuses to run as root). Its output is not
// waited for past its exit: a server it starts must not hold it open.
func (s *Server) command(ctx context.Context, name string, args ...string) *exec.Cmd {
	path := filepath.Join(s.bin, name)
	var cmd *exec.Cmd
	if os.Geteuid() == 0 {
		cmd = exec.CommandContext(ctx, "runuser", append([]string{"-u", "postgres", "--", path}, args...)...)
	} else {
		cmd = exec.CommandContext(ctx, path, args...)
	}
	cmd.WaitDelay = time.Second
	return cmd
}

// ownDir gives the directory to the postgres user when the test runs as
// root.
func (s *Server) ownDir() error {
	if os.Geteuid() != 0 {
		return nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return fmt.Errorf("running as root needs a postgres user to own the cluster: %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return os.Chown(s.dir, uid, gid)
}

// serverBinaries returns the directory holding initdb, pg_ctl and postgres:
// initdb's in PATH first, then the newest /usr/lib/postgresql/*/bin.
func serverBinaries() (string, error) {
	complete := func(dir string) bool {
		for _, name := range []string{"initdb", "pg_ctl", "postgres"} {
			if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
				return false
			}
		}
		return true
	}
	if initdb, err := exec.LookPath("initdb"); err == nil {
		if real, err := filepath.EvalSymlinks(initdb); err == nil && complete(filepath.Dir(real)) {
			return filepath.Dir(real), nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(dirs, func(a, b string) int { return versionOf(b) - versionOf(a) })
	for _, dir := range dirs {
		if complete(dir) {
			return dir, nil
		}
	}
	return "", errors.New("no initdb in PATH nor in /usr/lib/postgresql/*/bin (install postgresql)")
}

// versionOf is the major version of /usr/lib/postgresql/<version>/bin.
func versionOf(dir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
	return v
}

// freePort returns a TCP port of 127.0.0.1 nobody listens on, drawn at
// random below the kernel's ephemeral range: a port the kernel picked
// (":0") is one the outgoing connections of the tests running beside it
// take from the same range before the server binds it.
func freePort() (int, error) {
	var lc net.ListenConfig
	for range 100 {
		port := 20000 + rand.IntN(12000)
		l, err := lc.Listen(context.Background(), "tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			continue // taken
		}
		return port, l.Close()
	}
	return 0, errors.New("find a free port: none free between 20000 and 32000")
}
