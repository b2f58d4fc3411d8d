package webhook_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mergeguard/mergeguard/github/githubtest"
	"github.com/mergeguard/mergeguard/server/webhook"
)

// slowSender opens a connection to the intake and sends the headers of an
// unsigned delivery (wrong signature) declaring size bytes, then one byte
// of the body every interval until stop is closed or the server answers.
// It returns the status the server answered (0: none, or the connection
// closed).
func slowSender(t *testing.T, target string, id string, size int64, interval time.Duration, stop <-chan struct{}) int {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Error(err)
		return 0
	}
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Error(err)
		return 0
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n"+
		"X-GitHub-Event: pull_request\r\nX-GitHub-Delivery: %s\r\nX-Hub-Signature-256: %s\r\n\r\n",
		u.Path, u.Host, size, id, githubtest.Sign([]byte("not the secret"), []byte("x")))
	answered := make(chan int, 1)
	go func() {
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			answered <- 0
			return
		}
		resp.Body.Close()
		answered <- resp.StatusCode
	}()
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case status := <-answered:
			return status
		case <-stop:
			return 0
		case <-tick.C:
			if _, err := conn.Write([]byte{'{'}); err != nil {
				return <-answered
			}
		}
	}
}

// TestSlowSendersDoNotStallTheIntake: 8 connections declare 24 MiB
// bodies (unsigned: a wrong signature) and send a byte a second; then 100
// correctly signed deliveries are sent, ten at a time. Every one must be
// answered 2xx: a slow sender holds only the bytes it sent, not the length
// it declared (before: 0 of 100 accepted, every one 503 while two slow
// senders held the whole 48 MiB budget).
func TestSlowSendersDoNotStallTheIntake(t *testing.T) {
	t.Parallel() // its own intake, budget and limits; it mostly waits
	in := newIntake(t)
	const slow, signed = 8, 100
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i := range slow {
		wg.Go(func() { slowSender(t, in.url, fmt.Sprintf("slow-%d", i), 24<<20, time.Second, stop) })
	}
	defer wg.Wait()
	defer close(stop)
	time.Sleep(500 * time.Millisecond) // the slow senders' headers are read
	opened := githubtest.Payload(t, "pull_request/opened.payload.json")
	var accepted atomic.Int64
	statuses := make(chan int, signed)
	sem := make(chan struct{}, 10)
	var senders sync.WaitGroup
	for i := range signed {
		sem <- struct{}{}
		senders.Go(func() {
			defer func() { <-sem }()
			payload := githubtest.SetFields(t, opened, map[string]any{"number": i + 1, "pull_request.number": i + 1})
			req, err := githubtest.Delivery{Event: "pull_request", ID: fmt.Sprintf("signed-%d", i), Payload: payload}.Request(t.Context(), in.url, in.secret)
			if err != nil {
				t.Error(err)
				return
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			if resp.StatusCode/100 == 2 {
				accepted.Add(1)
			} else {
				statuses <- resp.StatusCode
			}
		})
	}
	senders.Wait()
	close(statuses)
	t.Logf("signed deliveries accepted: %d/%d while %d slow senders were open", accepted.Load(), signed, slow)
	if accepted.Load() != signed {
		seen := map[int]int{}
		for s := range statuses {
			seen[s]++
		}
		t.Errorf("signed deliveries accepted: %d/%d (refused by status: %v), want all", accepted.Load(), signed, seen)
	}
}

// TestSlowBodiesAreCutOff: once the grace period has passed, a body must
// arrive at the minimum rate, else it is answered 408 (before: it held its
// connection and its reservation for as long as it liked); a sender that
// sends nothing after its headers is cut off too. The test sets the
// grace period to 200 ms and the rate to 1 KiB/s.
func TestSlowBodiesAreCutOff(t *testing.T) {
	t.Parallel() // its own intake, budget and limits; it mostly waits
	in := newIntakeBatched(t, "", true, func(d *webhook.Deps) {
		d.Config.WebhookBodyGrace, d.Config.WebhookMinBodyRate = 200*time.Millisecond, 1<<10
	})
	tests := []struct {
		name     string
		interval time.Duration
	}{
		{"a byte every 100 ms", 100 * time.Millisecond},
		{"nothing after the headers", time.Hour},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stop := make(chan struct{})
			timer := time.AfterFunc(5*time.Second, func() { close(stop) })
			defer timer.Stop()
			began := time.Now()
			if got := slowSender(t, in.url, "slow", 24<<20, tt.interval, stop); got != http.StatusRequestTimeout {
				t.Errorf("status %d after %v, want 408 soon after the 200 ms grace period", got, time.Since(began).Round(time.Millisecond))
			}
		})
	}
	d := githubtest.Delivery{Event: "pull_request", ID: "after", Payload: githubtest.Payload(t, "pull_request/opened.payload.json")}
	if got := in.send(d); got != http.StatusOK {
		t.Errorf("a real delivery after the slow ones: %d, want 200", got)
	}
}

// TestSlowBodiesPerAddressAreCapped: bodies still being read after the
// grace period count against their client address; past the cap (2 here)
// a further one is answered 408, even when each keeps the minimum rate,
// and a delivery that arrives at once is still accepted.
func TestSlowBodiesPerAddressAreCapped(t *testing.T) {
	t.Parallel() // its own intake, budget and limits; it mostly waits
	const senders, perAddr = 5, 2
	in := newIntakeBatched(t, "", true, func(d *webhook.Deps) {
		d.Config.WebhookBodyGrace, d.Config.WebhookMinBodyRate, d.Config.WebhookSlowBodiesPerAddress = 200*time.Millisecond, 1, perAddr
	})
	stop := make(chan struct{})
	statuses := make(chan int, senders)
	var wg sync.WaitGroup
	for i := range senders {
		wg.Go(func() {
			statuses <- slowSender(t, in.url, fmt.Sprintf("slow-%d", i), 24<<20, 50*time.Millisecond, stop)
		})
	}
	time.Sleep(time.Second)
	d := githubtest.Delivery{Event: "pull_request", ID: "moving", Payload: githubtest.Payload(t, "pull_request/opened.payload.json")}
	if got := in.send(d); got != http.StatusOK {
		t.Errorf("a delivery while slow bodies are open: %d, want 200", got)
	}
	close(stop)
	wg.Wait()
	close(statuses)
	cut := 0
	for s := range statuses {
		if s == http.StatusRequestTimeout {
			cut++
		}
	}
	if cut != senders-perAddr {
		t.Errorf("%d of %d slow bodies from one address answered 408, want %d (the cap is %d)", cut, senders, senders-perAddr, perAddr)
	}
}

// TestSmallDeliveriesKeepTheirShare: two bodies announcing 4 MiB each
// send all but their last byte into an 8 MiB budget. Before, they
// reserved the whole budget and a small signed delivery got 503; now
// bodies past their first chunk never take the last eighth of the budget,
// which is kept for first chunks, so the small delivery is accepted.
func TestSmallDeliveriesKeepTheirShare(t *testing.T) {
	t.Parallel() // its own intake, budget and limits; it mostly waits
	const budget, size = 8 << 20, 4 << 20
	in := newIntakeBatched(t, "", true, func(d *webhook.Deps) { d.Config.WebhookBytesInFlight = budget })
	var writers []*io.PipeWriter
	var wg sync.WaitGroup
	defer wg.Wait()
	for i := range 2 {
		pr, pw := io.Pipe()
		writers = append(writers, pw)
		defer pw.CloseWithError(io.ErrUnexpectedEOF)
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, in.url, pr)
		if err != nil {
			t.Fatal(err)
		}
		req.ContentLength = size
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-GitHub-Event", "pull_request")
		req.Header.Set("X-GitHub-Delivery", fmt.Sprintf("large-%d", i))
		req.Header.Set("X-Hub-Signature-256", githubtest.Sign([]byte("not the secret"), []byte("x")))
		wg.Go(func() {
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
			}
		})
		wg.Go(func() { _, _ = pw.Write(make([]byte, size-1)) })
	}
	time.Sleep(time.Second) // the large bodies arrive (but their last byte)
	d := githubtest.Delivery{Event: "pull_request", ID: "small", Payload: githubtest.Payload(t, "pull_request/opened.payload.json")}
	if got := in.send(d); got != http.StatusOK {
		t.Errorf("a small delivery while large bodies fill the budget: %d, want 200", got)
	}
	for _, w := range writers {
		w.CloseWithError(io.ErrUnexpectedEOF)
	}
}
