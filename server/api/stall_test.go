//go:build linux

package api

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/server/store"

	"github.com/mergeguard/mergeguard/internal/allocs"
)

// stalledClients and stallEvents size TestStalledStreamClientsAreDropped:
// 100 clients that never read a finished run of 2,000 events of about 2 KB
// (4 MB of stream each, more than the socket buffers take).
const (
	stalledClients = 100
	stallEvents    = 2000
)

// TestStalledStreamClientsAreDropped connects 100 raw TCP clients to the
// stream of a finished run with many events; they send the request and
// never read. The server must stay responsive, hold a bounded amount of
// memory per client, and drop every one of them.
func TestStalledStreamClientsAreDropped(t *testing.T) {
	f, a := limitFixture(t, Deps{Config: testAPI(func(c *config.API) {
		c.MaxStreams, c.MaxStreamsPerClient, c.StreamWriteTimeout = stalledClients, stalledClients, 2*time.Second
	})})
	// Small send buffers, as on a busy host: the kernel takes a few
	// batches of each stream, not megabytes, before writes block.
	f.srv.Close()
	f.srv = httptest.NewUnstartedServer(f.srv.Config.Handler)
	f.srv.Listener = smallSendBuffers{f.srv.Listener}
	f.srv.Start()
	t.Cleanup(f.srv.Close)
	run := manyEventsRun(t, f.store)
	addr := strings.TrimPrefix(f.srv.URL, "http://")

	idleHeap, stop := allocs.HeapPeak(t)
	idleRSS := rss(t)
	start := time.Now()
	for range stalledClients {
		stallStream(t, addr, run.ID)
	}
	waitFor(t, "the streams to start", func() bool { return a.streams.open() > 0 })
	// Responsive while they stall.
	getStart := time.Now()
	if code, out := f.do(t, http.MethodGet, "/api/review/"+run.ID, "", nil); code != http.StatusOK {
		t.Errorf("GET while clients stall: %d %v", code, out)
	}
	getTook := time.Since(getStart)
	deadline := time.Now().Add(30 * time.Second)
	for (a.streams.open() > 0 || f.hub.Subscribers() > 0) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	dropped, open := time.Since(start), a.streams.open()
	peak := stop()
	peakRSS := rss(t)
	perClient := (float64(peak) - float64(idleHeap)) / stalledClients
	t.Logf("%d stalled clients: heap in use idle %.1f MB, peak %.1f MB (%.0f KB per client); RSS %.1f → %.1f MB; "+
		"GET answered in %s; %d streams open after %s",
		stalledClients, mb(idleHeap), mb(peak), perClient/1024, mb(idleRSS), mb(peakRSS), getTook.Round(time.Millisecond), open, dropped.Round(time.Millisecond))
	if open > 0 || f.hub.Subscribers() > 0 {
		t.Errorf("%d streams still open (%d subscribers) %s after the clients stalled, want every one dropped", open, f.hub.Subscribers(), dropped)
	}
	if getTook > 10*time.Second { // blocked behind the stalled clients, it would wait for their drop (20 s)
		t.Errorf("GET took %s while clients stalled", getTook)
	}
	if perClient > 2<<20 {
		t.Errorf("heap grew by %.1f MB per stalled client, want at most 2 MB", perClient/(1<<20))
	}
}

// manyEventsRun stores a finished run with stallEvents events of ~2 KB.
func manyEventsRun(t *testing.T, st *store.Store) store.Run {
	t.Helper()
	run := runningRun(t, st)
	pad := strings.Repeat("x", 2000)
	for i := range stallEvents {
		if _, err := st.AppendEvent(t.Context(), run.ID, review.Event{Type: review.EventToolCalled,
			Stage: review.StageReviewer, Data: map[string]any{"turn": i, "result": pad}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.FinishRun(t.Context(), run.ID, "w1", store.Result{Status: store.StatusSucceeded}); err != nil {
		t.Fatal(err)
	}
	return run
}

// stallStream opens a TCP connection with a small receive buffer, asks
// for the run's stream and never reads; the connection is closed when the
// test ends.
func stallStream(t *testing.T, addr, id string) {
	t.Helper()
	d := net.Dialer{Timeout: 5 * time.Second, Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
		if err != nil {
			return err
		}
		return serr
	}}
	conn, err := d.DialContext(t.Context(), "tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() }) // the server may have closed it first
	if _, err := fmt.Fprintf(conn, "GET /api/review/%s/stream HTTP/1.1\r\nHost: %s\r\n\r\n", id, addr); err != nil {
		t.Fatal(err)
	}
}

// smallSendBuffers gives each accepted connection a 64 KB send buffer.
type smallSendBuffers struct{ net.Listener }

func (l smallSendBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok && err == nil {
		err = tc.SetWriteBuffer(64 << 10)
	}
	return c, err
}

// rss is the process's resident set size in bytes.
func rss(t *testing.T) uint64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		t.Fatal(err)
	}
	fields := strings.Fields(string(b))
	pages, err := strconv.ParseUint(fields[1], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return pages * uint64(os.Getpagesize())
}
