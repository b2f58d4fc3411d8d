package e2e

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Bounds of starting and stopping `mergeguard serve`.
const (
	buildTimeout = 3 * time.Minute // a cold build compiles gitleaks and pgx
	startTimeout = 30 * time.Second
	stopTimeout  = 15 * time.Second
)

// sharedBuild is the one build of cmd/mergeguard that a run of this
// package's tests shares (buildBinary): linking the binary took seconds
// per test, 15 times a run. TestMain removes it.
var sharedBuild struct {
	once      sync.Once
	dir, path string
	err       error
}

// TestMain runs the tests, then removes the shared build.
func TestMain(m *testing.M) {
	code := m.Run()
	if sharedBuild.dir != "" {
		if err := os.RemoveAll(sharedBuild.dir); err != nil {
			fmt.Fprintln(os.Stderr, "e2e: remove the shared build:", err)
		}
	}
	os.Exit(code)
}

// buildBinary builds cmd/mergeguard once per run of the package's tests
// and returns the path of the binary. Tests run it; none may change it.
func buildBinary(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("e2e builds and runs the real binary: not in the fast tier (go test -short)")
	}
	sharedBuild.once.Do(func() {
		sharedBuild.dir, sharedBuild.err = os.MkdirTemp("", "mergeguard-e2e-") //nolint:usetesting // shared by the package's tests; TestMain removes it
		if sharedBuild.err != nil {
			return
		}
		sharedBuild.path = filepath.Join(sharedBuild.dir, "mergeguard")
		ctx, cancel := context.WithTimeout(context.Background(), buildTimeout)
		defer cancel()
		build := exec.CommandContext(ctx, "go", "build", "-o", sharedBuild.path, "github.com/mergeguard/mergeguard/cmd/mergeguard")
		if out, err := build.CombinedOutput(); err != nil {
			sharedBuild.err = fmt.Errorf("go build: %w\n%s", err, out)
		}
	})
	if sharedBuild.err != nil {
		t.Fatal(sharedBuild.err)
	}
	return sharedBuild.path
}

// goCache is the Go build cache of the tests' go command.
func goCache(t testing.TB) string {
	t.Helper()
	sharedCache.once.Do(func() {
		out, err := exec.CommandContext(context.Background(), "go", "env", "GOCACHE").Output()
		sharedCache.dir, sharedCache.err = strings.TrimSpace(string(out)), err
	})
	if sharedCache.err != nil {
		t.Fatalf("go env GOCACHE: %v", sharedCache.err)
	}
	return sharedCache.dir
}

// sharedCache is the Go build cache the replicas share (goCache).
var sharedCache struct {
	once sync.Once
	dir  string
	err  error
}

// replica is a running `mergeguard serve` process.
type replica struct {
	name   string
	url    string // http://127.0.0.1:port
	log    string // path of its log
	cmd    *exec.Cmd
	cancel context.CancelFunc // stops the process: SIGTERM, SIGKILL after stopTimeout
	exited chan error         // receives the process's end once
	killed bool
}

// serveOptions configure a replica.
type serveOptions struct {
	// env is added to the process environment (PATH, HOME, DATABASE_URL
	// and MERGEGUARD_ADDR are set already).
	env map[string]string
	// config is the text of the --config file; empty passes none.
	config string
	// addr is the listen address; empty picks a free loopback port.
	addr string
	// noToken leaves MERGEGUARD_API_TOKEN unset (serve generates one);
	// otherwise it is e2eToken unless env sets it.
	noToken bool
	// writeInterval is the replica's github.min_write_interval; zero is
	// fakeWriteInterval.
	writeInterval time.Duration
}

// fakeWriteInterval is the least time between two writes of an
// installation of replicas that talk to the fake GitHub, which has no
// secondary rate limits: with GitHub's second (the default), each review
// (a check run created, the review, the check run completed, ...) waited
// about four seconds for its writes. The load and soak tests keep the
// second, to measure what a replica does against GitHub.
const fakeWriteInterval = 20 * time.Millisecond

// e2eToken is the API token of the replicas a test starts (serveOptions).
const e2eToken = "e2e-api-token-0123456789"

// startReplica runs `bin serve` on a free loopback port against dbURL
// without waiting for it to be ready (see waitReady). It gets SIGTERM and
// stopTimeout to stop when the test ends (SIGKILL after that), and its log
// is shown when the test failed.
func startReplica(t testing.TB, bin, name, dbURL string, opts serveOptions) *replica {
	t.Helper()
	dir := t.TempDir()
	addr := opts.addr
	if addr == "" {
		addr = freeAddr(t)
	}
	r := &replica{name: name, url: "http://" + addr, log: filepath.Join(dir, "serve.log"), exited: make(chan error, 1)}
	logFile, err := os.Create(r.log)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "mergeguard.yml")
	config := opts.config + fmt.Sprintf("github:\n  min_write_interval: %s\n", cmp.Or(opts.writeInterval, fakeWriteInterval))
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"serve", "--config", path}
	// context.WithoutCancel: the process is stopped by the cleanup below,
	// which runs after t.Context is cancelled.
	ctx, cancel := context.WithCancel(context.WithoutCancel(t.Context()))
	r.cancel = cancel
	r.cmd = exec.CommandContext(ctx, bin, args...)
	r.cmd.Cancel = func() error { return r.cmd.Process.Signal(syscall.SIGTERM) }
	r.cmd.WaitDelay = stopTimeout
	r.cmd.Dir = dir // no config/mergeguard.yml here
	r.cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + dir,
		// The test's own Go build cache: go vet's standard library is
		// export data `go list -export std` builds once into it, not again
		// for each replica's new HOME.
		"GOCACHE=" + goCache(t),
		"DATABASE_URL=" + dbURL,
		"MERGEGUARD_ADDR=" + addr,
		"MERGEGUARD_LOG_FORMAT=json",
	}
	if _, set := opts.env["MERGEGUARD_API_TOKEN"]; !set && !opts.noToken {
		r.cmd.Env = append(r.cmd.Env, "MERGEGUARD_API_TOKEN="+e2eToken)
	}
	for k, v := range opts.env {
		r.cmd.Env = append(r.cmd.Env, k+"="+v)
	}
	r.cmd.Stdout, r.cmd.Stderr = logFile, logFile
	if err := r.cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	go func() { r.exited <- errors.Join(r.cmd.Wait(), logFile.Close()) }()
	t.Cleanup(func() {
		r.stop(t)
		if t.Failed() {
			r.showLog(t)
		}
	})
	return r
}

// startReplicas starts replicas A and B of bin at once against dbURL and
// waits until both are ready.
func startReplicas(t testing.TB, bin, dbURL string, opts serveOptions) []*replica {
	t.Helper()
	replicas := []*replica{
		startReplica(t, bin, "replica A", dbURL, opts),
		startReplica(t, bin, "replica B", dbURL, opts),
	}
	for _, r := range replicas {
		r.waitReady(t)
	}
	return replicas
}

// freeAddr returns a loopback address with a port that was free a moment
// ago, drawn at random below the kernel's ephemeral range (32768 up on
// Linux, 49152 up elsewhere): a port the kernel picked (":0") is one the
// outgoing connections of the tests running beside it take from the same
// range, and one took it before the replica bound it.
func freeAddr(t testing.TB) string {
	t.Helper()
	var lc net.ListenConfig
	for range 100 {
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(20000+rand.IntN(12000)))
		ln, err := lc.Listen(t.Context(), "tcp", addr)
		if err != nil {
			continue // taken
		}
		if err := ln.Close(); err != nil {
			t.Fatal(err)
		}
		return addr
	}
	t.Fatal("no free loopback port between 20000 and 32000")
	return ""
}

// waitReady waits until the replica answers GET /readyz with 200, failing
// the test when it exits or takes longer than startTimeout.
func (r *replica) waitReady(t testing.TB) {
	t.Helper()
	deadline := time.Now().Add(startTimeout)
	for {
		select {
		case err := <-r.exited:
			r.exited <- err
			t.Fatalf("%s: mergeguard serve exited: %v", r.name, err)
		default:
		}
		if ready(t.Context(), r.url) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: mergeguard serve not ready within %s", r.name, startTimeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// ready reports whether GET /readyz answers 200.
func ready(ctx context.Context, url string) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/readyz", nil)
	if err != nil {
		return false
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	return errors.Join(res.Body.Close()) == nil && res.StatusCode == http.StatusOK
}

// pid is the replica's process id.
func (r *replica) pid() int { return r.cmd.Process.Pid }

// owns reports whether workerID (a run's locked_by, "<host>-<pid>/<n>") is
// one of the replica's workers.
func (r *replica) owns(workerID string) bool {
	return strings.Contains(workerID, fmt.Sprintf("-%d/", r.pid()))
}

// kill ends the replica with SIGKILL, as a crashed machine would, and waits
// for it to be gone.
func (r *replica) kill(t testing.TB) {
	t.Helper()
	r.killed = true
	if err := r.cmd.Process.Kill(); err != nil {
		t.Fatalf("%s: kill: %v", r.name, err)
	}
	err := <-r.exited
	r.exited <- err
}

// stop ends the replica with SIGTERM (SIGKILL after stopTimeout) and waits
// until it has stopped. It fails the test unless the replica stopped
// cleanly or was killed.
func (r *replica) stop(t testing.TB) {
	t.Helper()
	r.cancel()
	err := <-r.exited
	r.exited <- err
	// Wait reports a clean exit after the cancellation as ctx's error.
	if err != nil && !errors.Is(err, context.Canceled) && !r.killed {
		t.Errorf("%s: mergeguard serve did not stop cleanly on SIGTERM: %v", r.name, err)
	}
}

// memory is a process's resident set size now and at its peak, in bytes,
// from /proc/PID/status.
type memory struct {
	RSS, PeakRSS int64
}

// memory reads the replica's memory use.
func (r *replica) memory(t testing.TB) memory {
	t.Helper()
	m, err := readMemory(r.pid())
	if err != nil {
		t.Fatalf("%s: %v", r.name, err)
	}
	return m
}

func readMemory(pid int) (memory, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return memory{}, fmt.Errorf("read memory: %w", err)
	}
	defer f.Close()
	var m memory
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), ":")
		if !ok || (key != "VmRSS" && key != "VmHWM") {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(val), " kB"), 10, 64)
		if err != nil {
			return memory{}, fmt.Errorf("read memory: %s: %w", key, err)
		}
		if key == "VmRSS" {
			m.RSS = kb << 10
		} else {
			m.PeakRSS = kb << 10
		}
	}
	if err := sc.Err(); err != nil {
		return memory{}, fmt.Errorf("read memory: %w", err)
	}
	return m, nil
}

func (r *replica) showLog(t testing.TB) {
	b, err := os.ReadFile(r.log)
	if err != nil {
		t.Logf("%s log: %v", r.name, err)
		return
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > 60 {
		lines = lines[len(lines)-60:]
	}
	t.Logf("%s: mergeguard serve log (last %d lines):\n%s", r.name, len(lines), strings.Join(lines, "\n"))
}
