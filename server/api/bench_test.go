package api

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/server/events"
	"github.com/mergeguard/mergeguard/server/store"
	"github.com/mergeguard/mergeguard/server/store/storetest"
)

// benchServer is the real live path on loopback: a Postgres store, the hub
// fed by LISTEN on its own connection, and the API's stream handler served
// over HTTP with the production heartbeat and poll intervals.
type benchServer struct {
	store *store.Store
	hub   *events.Hub
	addr  string // host:port
	run   string // a queued run to stream
}

func newBenchServer(b *testing.B) *benchServer {
	b.Helper()
	st := storetest.New(b)
	hub := events.NewHub()
	ready := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		var once sync.Once
		// The first (empty) payload says the LISTEN is in place.
		st.Listen(ctx, events.Channel, func(p string) { // ends with ctx
			once.Do(func() { close(ready) })
			hub.Notify(p)
		})
	}()
	b.Cleanup(func() { cancel(); <-done })
	select {
	case <-ready:
	case <-time.After(10 * time.Second):
		b.Fatal("hub never started listening")
	}
	// Every client connects from 127.0.0.1: allow them all.
	a := New(Deps{Config: testAPI(func(c *config.API) { c.MaxStreams, c.MaxStreamsPerClient = fanoutClients, fanoutClients }), Store: st, Hub: hub, Access: holder, Logger: zerolog.Nop()})
	mux := http.NewServeMux()
	a.Register(mux)
	srv := httptest.NewServer(asHolder(mux))
	b.Cleanup(srv.Close)
	text := sampleDiff
	run, err := st.EnqueueRun(b.Context(), store.NewRun{Mode: store.ModeDiff, Trigger: store.TriggerAPI, DiffText: &text})
	if err != nil {
		b.Fatal(err)
	}
	return &benchServer{store: st, hub: hub, addr: strings.TrimPrefix(srv.URL, "http://"), run: run.ID}
}

// sseClient is one stream client on its own TCP connection, read by one
// goroutine that reports each event's id and arrival time.
type sseClient struct {
	conn net.Conn
	got  chan arrival
}

type arrival struct {
	seq int
	at  time.Time
}

// dial opens the run's stream and returns once the server has answered
// (so the handler is subscribed to the hub).
func (s *benchServer) dial(b *testing.B) *sseClient {
	b.Helper()
	d := net.Dialer{Timeout: 5 * time.Second}
	conn, err := d.DialContext(b.Context(), "tcp", s.addr)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = conn.Close() }) // the server may have closed it first
	fmt.Fprintf(conn, "GET /api/review/%s/stream HTTP/1.1\r\nHost: %s\r\nAccept: text/event-stream\r\n\r\n", s.run, s.addr)
	r := bufio.NewReaderSize(conn, 4096)
	// Headers, then the "retry:" preamble written after subscribing.
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			b.Fatalf("stream answer: %v", err)
		}
		if strings.HasPrefix(line, "HTTP/1.1 ") && !strings.HasPrefix(line, "HTTP/1.1 200") {
			b.Fatalf("stream answered %q", strings.TrimSpace(line))
		}
		if strings.Contains(line, "retry: ") {
			break
		}
	}
	_ = conn.SetReadDeadline(time.Time{})
	c := &sseClient{conn: conn, got: make(chan arrival, 64)}
	go c.read(r)
	return c
}

// read scans the chunked body for "id: N" lines; the chunk framing lines
// are hex sizes and never match.
func (c *sseClient) read(r *bufio.Reader) {
	defer close(c.got)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		if id, ok := strings.CutPrefix(line, "id: "); ok {
			at := time.Now()
			if seq, err := strconv.Atoi(strings.TrimSpace(id)); err == nil {
				c.got <- arrival{seq: seq, at: at}
			}
		}
	}
}

// wait returns the arrival of event seq, failing after timeout.
func (c *sseClient) wait(b *testing.B, seq int, timeout time.Duration) time.Time {
	b.Helper()
	deadline := time.After(timeout)
	for {
		select {
		case a, ok := <-c.got:
			if !ok {
				b.Fatalf("stream closed before event %d", seq)
			}
			if a.seq == seq {
				return a.at
			}
			if a.seq > seq {
				b.Fatalf("got event %d while waiting for %d", a.seq, seq)
			}
		case <-deadline:
			b.Fatalf("event %d not received within %s", seq, timeout)
		}
	}
}

func (s *benchServer) append(b *testing.B, seq int) {
	b.Helper()
	got, err := s.store.AppendEvent(b.Context(), s.run, review.Event{Type: review.EventToolCalled,
		Stage: review.StageReviewer, Agent: "reviewer:chunk-1", Data: map[string]any{"tool": "read_file", "turn": seq}})
	if err != nil {
		b.Fatal(err)
	}
	if got != seq {
		b.Fatalf("appended seq %d, want %d", got, seq)
	}
}

// latencyEvents is how many events one operation of BenchmarkStreamLatency
// sends.
const latencyEvents = 500

// BenchmarkStreamLatency measures how long an event takes from
// store.AppendEvent to an SSE client, through NOTIFY → LISTEN → hub →
// stream handler → Events query → HTTP. One operation sends 500 events one
// at a time, each after the previous one arrived, so none is coalesced.
// e2e-p50/p99-ms count from the start of the AppendEvent call (an upper
// bound of commit → client, the INSERT included); after-commit-p50/p99-ms
// count from its return (a lower bound: the commit is before it).
func BenchmarkStreamLatency(b *testing.B) {
	s := newBenchServer(b)
	c := s.dial(b)
	var fromCall, fromReturn []time.Duration
	seq := 0
	for b.Loop() {
		for range latencyEvents {
			seq++
			start := time.Now()
			s.append(b, seq)
			returned := time.Now()
			at := c.wait(b, seq, 5*time.Second)
			fromCall = append(fromCall, at.Sub(start))
			fromReturn = append(fromReturn, max(0, at.Sub(returned)))
		}
	}
	b.ReportMetric(float64(len(fromCall)), "events")
	b.ReportMetric(ms(percentile(fromCall, 50)), "e2e-p50-ms")
	b.ReportMetric(ms(percentile(fromCall, 99)), "e2e-p99-ms")
	b.ReportMetric(ms(slices.Max(fromCall)), "e2e-max-ms")
	b.ReportMetric(ms(percentile(fromReturn, 50)), "after-commit-p50-ms")
	b.ReportMetric(ms(percentile(fromReturn, 99)), "after-commit-p99-ms")
}

// fanoutClients is how many stream clients BenchmarkStreamFanout holds.
const fanoutClients = 200

// BenchmarkStreamFanout holds 200 stream clients of one run open on one
// server and broadcasts one event per operation, checking that every
// client receives it. It reports the time until all have it (p50 and max
// over operations), and what each open stream costs the server: goroutines
// (counted in the server's own stacks) and heap and stack bytes (measured
// over the whole process, so each client's 4 KiB read buffer and reading
// goroutine are included).
func BenchmarkStreamFanout(b *testing.B) {
	s := newBenchServer(b)
	before := memNow()
	clients := make([]*sseClient, fanoutClients)
	for i := range clients {
		clients[i] = s.dial(b)
	}
	after := memNow()
	if n := s.hub.Subscribers(); n != fanoutClients {
		b.Fatalf("hub has %d subscribers, want %d", n, fanoutClients)
	}
	serverGoroutines := countStacks("net/http.(*conn).serve", "net/http.(*connReader).backgroundRead")

	var toAll, toFirst []time.Duration
	seq := 0
	for b.Loop() {
		seq++
		start := time.Now()
		s.append(b, seq)
		var first, last time.Time
		for _, c := range clients {
			at := c.wait(b, seq, 10*time.Second)
			if first.IsZero() || at.Before(first) {
				first = at
			}
			if at.After(last) {
				last = at
			}
		}
		toFirst = append(toFirst, first.Sub(start))
		toAll = append(toAll, last.Sub(start))
	}
	b.ReportMetric(fanoutClients, "clients")
	b.ReportMetric(ms(percentile(toFirst, 50)), "first-p50-ms")
	b.ReportMetric(ms(percentile(toAll, 50)), "all-p50-ms")
	b.ReportMetric(ms(slices.Max(toAll)), "all-max-ms")
	b.ReportMetric(float64(serverGoroutines)/fanoutClients, "server-goroutines/client")
	b.ReportMetric(float64(after.heap-before.heap)/fanoutClients, "heap-B/client")
	b.ReportMetric(float64(after.stack-before.stack)/fanoutClients, "stack-B/client")
}

type mem struct{ heap, stack int64 }

func memNow() mem {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return mem{heap: int64(m.HeapInuse), stack: int64(m.StackInuse)}
}

// countStacks counts the goroutines whose stack mentions any of funcs.
func countStacks(funcs ...string) int {
	buf := make([]byte, 64<<20)
	buf = buf[:runtime.Stack(buf, true)]
	n := 0
	for g := range strings.SplitSeq(string(buf), "\n\n") {
		for _, f := range funcs {
			if strings.Contains(g, f) {
				n++
				break
			}
		}
	}
	return n
}

func percentile(d []time.Duration, p int) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[(len(s)-1)*p/100]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
