package webhook_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mergeguard/mergeguard/github/githubtest"
)

// BenchmarkIntake measures webhook intake over loopback, batched (group
// commit, as `mergeguard serve` records) and unbatched (one transaction
// per delivery): 50 concurrent senders post signed pull_request
// deliveries (opened, spread over 500 pull requests, each delivery with
// its own id) to the real handler on a real database, and every delivery
// must be answered 200 and stored exactly once.
//
//   - saturated: each sender posts as fast as it is answered; reports the
//     throughput (deliveries/s) and the 99th percentile latency.
//   - 500rps, 1000rps: the senders together offer 500 or 1,000 deliveries
//     a second; reports the 99th percentile latency at that load, measured
//     from when each delivery was due (so a slow answer also counts against
//     the ones queued behind it).
//
// Each also reports the CPU time of the whole test process per delivery,
// the senders' included (e2e's TestLoad measures the server's alone).
// Durable figures need a PostgreSQL with fsync on:
//
//	env -u MERGEGUARD_TEST_DATABASE_URL MERGEGUARD_PG_DURABLE=1 bash scripts/with-postgres.sh \
//	    go test -run '^$' -bench Intake -benchtime 5000x ./server/webhook/
func BenchmarkIntake(b *testing.B) {
	for _, batched := range []bool{true, false} {
		name := "batched"
		if !batched {
			name = "unbatched"
		}
		b.Run(name+"/saturated", func(b *testing.B) { benchIntake(b, batched, 0) })
		b.Run(name+"/500rps", func(b *testing.B) { benchIntake(b, batched, 500) })
		b.Run(name+"/1000rps", func(b *testing.B) { benchIntake(b, batched, 1000) })
	}
}

// cpuTime is the CPU time the process has used, user and system.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func benchIntake(b *testing.B, batched bool, rate int) {
	const (
		senders = 50
		pulls   = 500
	)
	in := newIntakeBatched(b, "", batched)
	base := githubtest.Payload(b, "pull_request/opened.payload.json")
	type signed struct {
		body []byte
		sig  string
	}
	payloads := make([]signed, pulls)
	for i := range payloads {
		body := githubtest.SetFields(b, base, map[string]any{"number": i + 1, "pull_request.number": i + 1})
		payloads[i] = signed{body: body, sig: githubtest.Sign(in.secret, body)}
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: senders}}
	prefix := fmt.Sprintf("%d-", time.Now().UnixNano())
	var interval time.Duration
	if rate > 0 {
		interval = time.Second / time.Duration(rate)
	}

	latencies := make([]time.Duration, b.N)
	var next, failed atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	cpu := cpuTime(b)
	start := time.Now()
	for range senders {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= b.N {
					return
				}
				due := time.Now()
				if interval > 0 {
					due = start.Add(time.Duration(i) * interval)
					time.Sleep(time.Until(due))
				}
				p := payloads[i%pulls]
				req, err := http.NewRequest(http.MethodPost, in.url, bytes.NewReader(p.body))
				if err != nil {
					b.Error(err)
					return
				}
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("X-GitHub-Event", "pull_request")
				req.Header.Set("X-GitHub-Delivery", prefix+fmt.Sprint(i))
				req.Header.Set("X-Hub-Signature-256", p.sig)
				resp, err := client.Do(req)
				if err != nil {
					b.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				latencies[i] = time.Since(due)
				if resp.StatusCode != http.StatusOK {
					failed.Add(1)
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	cpu = cpuTime(b) - cpu
	b.StopTimer()

	if n := failed.Load(); n > 0 {
		b.Fatalf("%d of %d deliveries were not answered 200", n, b.N)
	}
	if got := in.count("webhook_deliveries", "delivery_id LIKE $1", prefix+"%"); got != b.N {
		b.Fatalf("%d deliveries stored, want %d (each exactly once)", got, b.N)
	}
	slices.Sort(latencies)
	p99 := latencies[min(len(latencies)-1, len(latencies)*99/100)]
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "deliveries/s")
	b.ReportMetric(float64(p99.Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(latencies[len(latencies)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(latencies[len(latencies)-1].Microseconds())/1000, "max-ms")
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/delivery")
}
