package intakebench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mergeguard/mergeguard/bench/internal/measure"
	"github.com/mergeguard/mergeguard/github/githubtest"
)

// Payload is one signed delivery body.
type Payload struct {
	Body      []byte
	Signature string
}

// Payloads returns n variants of a pull_request payload, pull requests 1
// to n (number and pull_request.number set), each signed with secret. They
// are indented by two spaces as GitHub's payload examples are, so they keep
// the example's size (28 KB for pull_request.opened).
func Payloads(base []byte, n int, secret string) ([]Payload, error) {
	out := make([]Payload, n)
	for i := range out {
		var doc map[string]any
		if err := json.Unmarshal(base, &doc); err != nil {
			return nil, fmt.Errorf("payload: %w", err)
		}
		pr, ok := doc["pull_request"].(map[string]any)
		if !ok {
			return nil, fmt.Errorf("payload: no pull_request object")
		}
		doc["number"], pr["number"] = i+1, i+1
		body, err := json.MarshalIndent(doc, "", "  ")
		if err != nil {
			return nil, fmt.Errorf("payload: %w", err)
		}
		out[i] = Payload{Body: body, Signature: githubtest.Sign([]byte(secret), body)}
	}
	return out, nil
}

// Level is one load: Senders concurrent senders sending up to Max
// deliveries or for MaxDuration, whichever ends first. With Rate > 0 the
// senders together offer Rate deliveries a second and each latency counts
// from when its delivery was due; with 0 each sender sends as soon as its
// last delivery is answered.
type Level struct {
	Senders     int
	Rate        int
	Max         int
	MaxDuration time.Duration
}

// Result is what one intake did under one level.
type Result struct {
	Senders    int     `json:"senders"`
	Offered    int     `json:"offered_per_second"` // 0: saturated
	Deliveries int     `json:"deliveries"`
	Errors     int     `json:"errors"` // answers other than 200, and failed requests
	Seconds    float64 `json:"seconds"`
	PerSecond  float64 `json:"per_second"`
	P50MS      float64 `json:"p50_ms"`
	P99MS      float64 `json:"p99_ms"`
	MaxMS      float64 `json:"max_ms"`
	// CPUMSPerDelivery is the intake process's CPU time (user + system,
	// getrusage) over the level, per delivery.
	CPUMSPerDelivery float64 `json:"cpu_ms_per_delivery"`
	// SwitchesPerDelivery is the intake process's context switches over
	// the level (measure.Usage), per delivery.
	SwitchesPerDelivery float64 `json:"context_switches_per_delivery"`
}

// Load sends lvl's deliveries of payloads (cycled) to the intake at
// baseURL, delivery ids idPrefix and a sequence number.
func Load(ctx context.Context, baseURL string, payloads []Payload, idPrefix string, lvl Level) (Result, error) {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: lvl.Senders}, Timeout: 30 * time.Second}
	defer client.CloseIdleConnections()
	before, err := usageOf(ctx, client, baseURL)
	if err != nil {
		return Result{}, err
	}
	var interval time.Duration
	if lvl.Rate > 0 {
		interval = time.Second / time.Duration(lvl.Rate)
	}
	latencies := make([]time.Duration, lvl.Max)
	var next, sent, failed atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	deadline := start.Add(lvl.MaxDuration)
	for range lvl.Senders {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= lvl.Max || time.Now().After(deadline) || ctx.Err() != nil {
					return
				}
				due := time.Now()
				if interval > 0 {
					due = start.Add(time.Duration(i) * interval)
					time.Sleep(time.Until(due))
				}
				if !deliver(ctx, client, baseURL, payloads[i%len(payloads)], fmt.Sprintf("%s%d", idPrefix, i)) {
					failed.Add(1)
				}
				latencies[i] = time.Since(due)
				sent.Add(1)
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	after, err := usageOf(ctx, client, baseURL)
	if err != nil {
		return Result{}, err
	}
	n := int(sent.Load())
	used := measure.Usage{CPU: after.CPU - before.CPU, ContextSwitches: after.ContextSwitches - before.ContextSwitches}
	return summarize(lvl, latencies[:n], int(failed.Load()), elapsed, used), nil
}

// deliver posts one delivery and reports whether it was answered 200.
func deliver(ctx context.Context, client *http.Client, baseURL string, p Payload, id string) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, baseURL+Route, bytes.NewReader(p.Body))
	if err != nil {
		return false
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-GitHub-Event", "pull_request")
	req.Header.Set("X-GitHub-Delivery", id)
	req.Header.Set("X-Hub-Signature-256", p.Signature)
	resp, err := client.Do(req)
	if err != nil {
		return false
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// summarize turns a level's latencies (in delivery order; only those of
// sent deliveries) into its result.
func summarize(lvl Level, latencies []time.Duration, failed int, elapsed time.Duration, used measure.Usage) Result {
	r := Result{Senders: lvl.Senders, Offered: lvl.Rate, Deliveries: len(latencies), Errors: failed, Seconds: elapsed.Seconds()}
	if len(latencies) == 0 {
		return r
	}
	slices.Sort(latencies)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	r.PerSecond = float64(len(latencies)) / elapsed.Seconds()
	r.P50MS = ms(latencies[len(latencies)/2])
	r.P99MS = ms(latencies[min(len(latencies)-1, len(latencies)*99/100)])
	r.MaxMS = ms(latencies[len(latencies)-1])
	r.CPUMSPerDelivery = float64(used.CPU.Microseconds()) / 1000 / float64(len(latencies))
	r.SwitchesPerDelivery = float64(used.ContextSwitches) / float64(len(latencies))
	return r
}

// usageOf asks the intake at baseURL for its process's usage.
func usageOf(ctx context.Context, client *http.Client, baseURL string) (measure.Usage, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, baseURL+UsageRoute, nil)
	if err != nil {
		return measure.Usage{}, fmt.Errorf("usage: %w", err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return measure.Usage{}, fmt.Errorf("usage: %w", err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return measure.Usage{}, fmt.Errorf("usage: %w", err)
	}
	var u measure.Usage
	if err := json.Unmarshal(bytes.TrimSpace(b), &u); err != nil {
		return measure.Usage{}, fmt.Errorf("usage: %s: %w", strings.TrimSpace(string(b)), err)
	}
	return u, nil
}
