package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"github.com/mergeguard/mergeguard/migrations"
	"github.com/mergeguard/mergeguard/server/store"
	"github.com/mergeguard/mergeguard/server/store/storetest"
)

// env returns a getenv over m.
func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// usageErrorCase is a command line the program refuses: the error it
// prints and its exit status.
type usageErrorCase struct {
	name string
	args []string
	want string
	code int
}

// checkUsageErrors runs each case without configuration and checks its
// error and exit status.
func checkUsageErrors(t *testing.T, cases []usageErrorCase) {
	t.Helper()
	for _, tt := range cases {
		_, _, err := runCmd(t, env(nil), tt.args...)
		if err == nil || err.Error() != tt.want || exitCode(err) != tt.code {
			t.Errorf("%s: %v (exit %d), want %q (exit %d)", tt.name, err, exitCode(err), tt.want, tt.code)
		}
	}
}

// testProcess is what the commands the tests run share, as the commands of
// one process do: each vocabulary is loaded and the standard library listed
// once per test binary instead of once per command (about 1.2 s under the
// race detector).
var testProcess = newProcess()

// runCmd runs the program with args and returns its stdout, stderr and error.
func runCmd(t *testing.T, getenv func(string) string, args ...string) (string, string, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := runIn(t.Context(), testProcess, args, getenv, &stdout, &stderr)
	return stdout.String(), stderr.String(), err
}

func TestVersion(t *testing.T) {
	t.Parallel()
	stdout, _, err := runCmd(t, env(nil), "version")
	if err != nil {
		t.Fatal(err)
	}
	want := "mergeguard dev (commit unknown, " + runtime.Version() + ")\n"
	if stdout != want {
		t.Errorf("version printed %q, want %q", stdout, want)
	}
}

func TestUsageErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		args     []string
		wantErr  string
		wantCode int
	}{
		{"no command", nil, "no command given", 2},
		{"unknown command", []string{"deploy"}, `unknown command "deploy"; "mergeguard help" lists the commands`, 2},
		{"unknown flag", []string{"serve", "--verbose"}, `flag provided but not defined: -verbose; "mergeguard serve -h" lists the flags`, 2},
		{"serve argument", []string{"serve", "now"}, `serve: unexpected argument "now"`, 2},
		{"migrate without action", []string{"migrate"}, "migrate: missing action (up, down N or version)", 2},
		{"migrate unknown action", []string{"migrate", "sideways"}, `migrate: unknown action "sideways" (want up, down N or version)`, 2},
		{"migrate down without N", []string{"migrate", "down"}, "migrate down: give the number of migrations to undo, e.g. migrate down 1", 2},
		{"migrate down zero", []string{"migrate", "down", "0"}, `migrate down: N must be a positive integer, got "0"`, 2},
		{"version argument", []string{"version", "x"}, `version: unexpected argument "x"`, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := runCmd(t, env(nil), tt.args...)
			if err == nil || err.Error() != tt.wantErr {
				t.Fatalf("run(%q) error = %v, want %q", tt.args, err, tt.wantErr)
			}
			if got := exitCode(err); got != tt.wantCode {
				t.Errorf("exit code = %d, want %d", got, tt.wantCode)
			}
		})
	}
}

func TestHelp(t *testing.T) {
	t.Parallel()
	stdout, _, err := runCmd(t, env(nil), "help")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"mergeguard serve", "mergeguard migrate", "mergeguard review", "DATABASE_URL", "MERGEGUARD_API_TOKEN"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("help does not mention %q:\n%s", want, stdout)
		}
	}
	_, stderr, err := runCmd(t, env(nil), "serve", "-h")
	if err != nil {
		t.Errorf("serve -h: %v", err)
	}
	if !strings.Contains(stderr, "-config file") {
		t.Errorf("serve -h does not describe --config:\n%s", stderr)
	}
}

func TestConfigErrors(t *testing.T) {
	t.Parallel()
	bad := filepath.Join(t.TempDir(), "mergeguard.yml")
	if err := os.WriteFile(bad, []byte("server:\n  adr: x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{
			name: "serve needs a database",
			args: []string{"serve"},
			want: "serve: invalid configuration:\ndatabase.url: required by this command (set DATABASE_URL)",
		},
		{
			name: "migrate needs a database",
			args: []string{"migrate", "up"},
			want: "migrate: invalid configuration:\ndatabase.url: required by this command (set DATABASE_URL)",
		},
		{
			name: "every problem at once",
			args: []string{"serve"},
			env:  map[string]string{"MERGEGUARD_WORKERS": "-1", "GITHUB_APP_INTEGRATION_ID": "9"},
			want: "serve: invalid configuration:\n" +
				"database.url: required by this command (set DATABASE_URL)\n" +
				"github.app.webhook_secret: required when the GitHub App is configured (set GITHUB_APP_WEBHOOK_SECRET)\n" +
				"github.app.private_key: required when the GitHub App is configured (set GITHUB_APP_PRIVATE_KEY or MERGEGUARD_GITHUB_PRIVATE_KEY_FILE)\n" +
				"workers.concurrency: must not be negative (0 runs no workers), got -1",
		},
		{
			name: "unknown key in --config file",
			args: []string{"serve", "--config", bad},
			want: "serve: load configuration:\n" + bad + `:2: unknown key "server.adr"`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := runCmd(t, env(tt.env), tt.args...)
			if err == nil {
				t.Fatal("run succeeded")
			}
			if diff := cmp.Diff(tt.want, err.Error()); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMigrate(t *testing.T) {
	t.Parallel()
	dbURL := storetest.Empty(t)
	getenv := env(map[string]string{"DATABASE_URL": dbURL})
	latest, err := store.LatestVersion()
	if err != nil || latest < 2 {
		t.Fatalf("LatestVersion = %d, %v", latest, err)
	}
	at := fmt.Sprintf("schema version %d\n", latest)
	steps := []struct {
		args []string
		want string
	}{
		{[]string{"migrate", "version"}, "schema version 0 (no migrations applied)\n"},
		{[]string{"migrate", "up"}, at},
		{[]string{"migrate", "up"}, at}, // nothing to do
		{[]string{"migrate", "version"}, at},
		{[]string{"migrate", "down", fmt.Sprint(latest)}, "schema version 0 (no migrations applied)\n"},
		{[]string{"migrate", "up", "--config", ""}, at}, // flags after the action
	}
	for _, s := range steps {
		stdout, stderr, err := runCmd(t, getenv, s.args...)
		if err != nil {
			t.Fatalf("%q: %v\n%s", s.args, err, stderr)
		}
		if stdout != s.want {
			t.Errorf("%q printed %q, want %q", s.args, stdout, s.want)
		}
	}
}

// logLines collects a JSON log written through a pipe and hands over the
// first line whose message is msg.
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) collect(r io.Reader, msg string, found chan<- map[string]any) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		l.mu.Lock()
		l.lines = append(l.lines, sc.Text())
		l.mu.Unlock()
		var m map[string]any
		if json.Unmarshal(sc.Bytes(), &m) == nil && m["message"] == msg {
			found <- m
		}
	}
}

func (l *logLines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// serving is a `mergeguard serve` started by a test.
type serving struct {
	base string // http://host:port
	logs *logLines
	done chan error
}

// startServe runs `mergeguard serve` with vars as its environment (the
// listen address set to a free port) until ctx is cancelled, and waits until
// it listens.
func startServe(t *testing.T, ctx context.Context, vars map[string]string) serving {
	t.Helper()
	pr, pw := io.Pipe()
	s := serving{logs: &logLines{}, done: make(chan error, 1)}
	listening := make(chan map[string]any, 1)
	go s.logs.collect(pr, "listening", listening)
	vars["MERGEGUARD_ADDR"] = "127.0.0.1:0"
	go func() {
		s.done <- runIn(ctx, testProcess, []string{"serve"}, env(vars), io.Discard, pw)
		_ = pw.Close() // a PipeWriter's Close never fails
	}()
	select {
	case m := <-listening:
		s.base = "http://" + m["addr"].(string)
	case err := <-s.done:
		t.Fatalf("serve stopped: %v\n%s", err, s.logs)
	case <-time.After(30 * time.Second):
		t.Fatalf("serve did not start listening\n%s", s.logs)
	}
	return s
}

// stop cancels serve's context and checks that it stops cleanly.
func (s serving) stop(t *testing.T, cancel context.CancelFunc) {
	t.Helper()
	cancel()
	select {
	case err := <-s.done:
		if err != nil {
			t.Errorf("serve returned %v after cancel, want nil\n%s", err, s.logs)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not stop after cancel")
	}
}

func TestServe(t *testing.T) {
	t.Parallel()
	dbURL := storetest.Empty(t) // serve migrates it
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	s := startServe(t, ctx, map[string]string{"DATABASE_URL": dbURL})
	base, logs := s.base, s.logs

	for _, path := range []string{"/healthz", "/readyz"} {
		if status, body := get(t, base+path); status != http.StatusOK || body != "ok\n" {
			t.Errorf("GET %s = %d %q, want 200 \"ok\\n\"", path, status, body)
		}
	}
	latest, _ := store.LatestVersion()
	if v, dirty, err := store.MigrateVersion(t.Context(), dbURL); err != nil || v != latest || dirty {
		t.Errorf("after serve started, schema version = %d dirty=%v err=%v; want %d, clean", v, dirty, err, latest)
	}
	if !strings.Contains(logs.String(), "GitHub App not configured") {
		t.Errorf("serve did not say that the GitHub App is not configured:\n%s", logs)
	}

	dropDatabase(t, dbURL)
	status, body := get(t, base+"/readyz")
	if status != http.StatusServiceUnavailable || body != "database unavailable\n" {
		t.Errorf("GET /readyz with the database gone = %d %q, want 503 \"database unavailable\" (no address)", status, body)
	}
	if status, _ := get(t, base+"/healthz"); status != http.StatusOK {
		t.Errorf("GET /healthz with the database gone = %d, want 200", status)
	}

	s.stop(t, cancel)
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	if err := errors.Join(err, resp.Body.Close()); err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body)
}

// dropDatabase takes the database at dbURL away from under its users.
func dropDatabase(t *testing.T, dbURL string) {
	t.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	name := strings.TrimPrefix(u.Path, "/")
	u.Path = "/postgres"
	conn, err := pgx.Connect(t.Context(), u.String())
	if err != nil {
		t.Fatal(err)
	}
	_, err = conn.Exec(t.Context(), "DROP DATABASE "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
	if err := errors.Join(err, conn.Close(t.Context())); err != nil {
		t.Fatal(err)
	}
}

// TestServeWithoutMigrations: with MERGEGUARD_MIGRATE=false serve leaves
// the schema alone, refusing a database that is behind or dirty with what
// to do, and serves one that is current.
func TestServeWithoutMigrations(t *testing.T) {
	t.Parallel()
	latest, err := store.LatestVersion()
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		prepare func(t *testing.T, dbURL string)
		want    string
	}{
		"empty": {
			prepare: func(*testing.T, string) {},
			want:    fmt.Sprintf("serve: database schema version 0 is behind this binary's %d; run `mergeguard migrate up` first", latest),
		},
		"one migration behind": {
			prepare: func(t *testing.T, dbURL string) {
				if err := store.MigrateUp(t.Context(), dbURL); err != nil {
					t.Fatal(err)
				}
				if err := store.MigrateDown(t.Context(), dbURL, 1); err != nil {
					t.Fatal(err)
				}
			},
			want: fmt.Sprintf("serve: database schema version %d is behind this binary's %d; run `mergeguard migrate up` first", previousVersion(t), latest),
		},
		"dirty": {
			prepare: func(t *testing.T, dbURL string) {
				if err := store.MigrateUp(t.Context(), dbURL); err != nil {
					t.Fatal(err)
				}
				execSQL(t, dbURL, "UPDATE schema_migrations SET dirty = true")
			},
			want: fmt.Sprintf("serve: database schema version %d is dirty: a migration failed part way", latest),
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			dbURL := storetest.Empty(t)
			tt.prepare(t, dbURL)
			before, dirtyBefore, _ := store.MigrateVersion(t.Context(), dbURL)
			// A serve that wrongly starts is stopped, and fails the test.
			ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
			defer cancel()
			err := runIn(ctx, testProcess, []string{"serve"}, env(map[string]string{"DATABASE_URL": dbURL, "MERGEGUARD_MIGRATE": "false", "MERGEGUARD_ADDR": "127.0.0.1:0"}), io.Discard, io.Discard)
			want := strings.ReplaceAll(tt.want, "{before}", strconv.FormatUint(uint64(before), 10))
			if err == nil || !strings.HasPrefix(err.Error(), want) {
				t.Fatalf("serve = %v, want an error starting %q", err, want)
			}
			if v, dirty, err := store.MigrateVersion(t.Context(), dbURL); err != nil || v != before || dirty != dirtyBefore {
				t.Errorf("after serve, schema version = %d dirty=%v err=%v; want it untouched at %d dirty=%v", v, dirty, err, before, dirtyBefore)
			}
		})
	}

	t.Run("current", func(t *testing.T) {
		dbURL := storetest.URL(t) // migrated
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		s := startServe(t, ctx, map[string]string{"DATABASE_URL": dbURL, "MERGEGUARD_MIGRATE": "false"})
		if status, _ := get(t, s.base+"/readyz"); status != http.StatusOK {
			t.Errorf("GET /readyz = %d, want 200", status)
		}
		s.stop(t, cancel)
	})
}

// execSQL runs one statement on the database at dbURL.
func execSQL(t *testing.T, dbURL, sql string) {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	_, err = conn.Exec(t.Context(), sql)
	if err := errors.Join(err, conn.Close(t.Context())); err != nil {
		t.Fatal(err)
	}
}

// signInURL is the sign-in link serve logged, "" when none.
func (l *logLines) signInURL() string { return l.field("signin_url") }

// field is the string field key of the first log line that has one.
func (l *logLines) field(key string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, line := range l.lines {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil {
			if u, ok := m[key].(string); ok {
				return u
			}
		}
	}
	return ""
}

// TestServeWithoutTokenGeneratesOne: without MERGEGUARD_API_TOKEN serve
// has no anonymous admin, even for requests from loopback to localhost: it
// generates a token, keeps it in the database (a second replica and
// `mergeguard token` get the same) and logs a sign-in link with it; the
// health, readiness and metrics endpoints stay open.
func TestServeWithoutTokenGeneratesOne(t *testing.T) {
	t.Parallel()
	dbURL := storetest.Empty(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	s := startServe(t, ctx, map[string]string{"DATABASE_URL": dbURL})
	local := strings.Replace(s.base, "127.0.0.1", "localhost", 1)
	for path, want := range map[string]int{"/api/review/00000000-0000-0000-0000-000000000000": 401, "/": 401, "/new": 401, "/setup": 401,
		"/healthz": 200, "/readyz": 200, "/metrics": 200} {
		if status, _ := get(t, local+path); status != want {
			t.Errorf("anonymous GET %s from loopback = %d, want %d", path, status, want)
		}
	}
	link := s.logs.signInURL()
	u, err := url.Parse(link)
	if err != nil || u.Query().Get("token") == "" || u.Path != "/signin" {
		t.Fatalf("serve logged no sign-in link (%q):\n%s", link, s.logs)
	}
	token := u.Query().Get("token")
	// The link is on the port serve listens on, and what it says to open.
	if port := strings.TrimPrefix(s.base, "http://127.0.0.1:"); u.Host != "localhost:"+port {
		t.Errorf("the sign-in link is on %s, want localhost:%s", u.Host, port)
	}
	if open := s.logs.field("open"); open != link {
		t.Errorf("serve said to open %q, want the sign-in link %q", open, link)
	}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, s.base+"/api/review/00000000-0000-0000-0000-000000000000", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	if res.StatusCode != http.StatusNotFound {
		t.Errorf("GET with the logged token = %d, want 404 (let in; no such run)", res.StatusCode)
	}

	ctx2, cancel2 := context.WithCancel(t.Context())
	defer cancel2()
	second := startServe(t, ctx2, map[string]string{"DATABASE_URL": dbURL})
	if link2 := second.logs.signInURL(); !strings.Contains(link2, "token="+url.QueryEscape(token)) {
		t.Errorf("a second replica logged %q, want the same token", link2)
	}
	second.stop(t, cancel2)
	stdout, _, err := runCmd(t, env(map[string]string{"DATABASE_URL": dbURL}), "token", "--bare")
	if err != nil || strings.TrimSpace(stdout) != token {
		t.Errorf("mergeguard token --bare = %q, %v; want the token", stdout, err)
	}
	s.stop(t, cancel)
}

// previousVersion is the version of the migration before the latest (the
// numbers may have gaps while branches that add migrations are merged).
func previousVersion(t *testing.T) uint {
	t.Helper()
	names, err := fs.Glob(migrations.FS, "*.up.sql")
	if err != nil || len(names) < 2 {
		t.Fatalf("migrations: %v, %d files", err, len(names))
	}
	slices.Sort(names)
	v, err := strconv.ParseUint(strings.SplitN(names[len(names)-2], "_", 2)[0], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return uint(v)
}

// TestServeSaysWhereToOpen: with MERGEGUARD_API_TOKEN set, serve says to
// open the web UI's home on the port it listens on, or on the public URL,
// and logs no sign-in link.
func TestServeSaysWhereToOpen(t *testing.T) {
	t.Parallel()
	dbURL := storetest.URL(t)
	for _, tt := range []struct {
		name, public, want string
	}{
		{"localhost", "", "http://localhost:%s/"},
		{"public URL", "https://mergeguard.example.com/", "https://mergeguard.example.com/"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			s := startServe(t, ctx, map[string]string{"DATABASE_URL": dbURL, "MERGEGUARD_API_TOKEN": "s3cret-token-of-the-operator",
				"MERGEGUARD_PUBLIC_URL": tt.public})
			want := tt.want
			if strings.Contains(want, "%s") {
				want = fmt.Sprintf(want, strings.TrimPrefix(s.base, "http://127.0.0.1:"))
			}
			if open := s.logs.field("open"); open != want {
				t.Errorf("serve said to open %q, want %q\n%s", open, want, s.logs)
			}
			if link := s.logs.signInURL(); link != "" {
				t.Errorf("serve logged a sign-in link %q with a configured token", link)
			}
			s.stop(t, cancel)
		})
	}
}
