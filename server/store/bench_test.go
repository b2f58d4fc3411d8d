package store_test

import (
	"fmt"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mergeguard/mergeguard/review"

	"github.com/mergeguard/mergeguard/server/store"
	"github.com/mergeguard/mergeguard/server/store/storetest"
)

// BenchmarkRecordDelivery measures webhook intake: recording a delivery and
// queuing its run (each one superseding the previous run of its pull
// request, over 100 pull requests), and recording a redelivery.
func BenchmarkRecordDelivery(b *testing.B) {
	s := storetest.New(b)
	var n atomic.Int64
	delivery := func(i int64) store.Delivery {
		return store.Delivery{
			ID: fmt.Sprintf("delivery-%d", i), Event: "pull_request", Action: "synchronize",
			InstallationID: 7, Repository: "o/bench",
		}
	}
	b.Run("new", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				i := n.Add(1)
				run := prRun("o/bench", int(i%100)+1, fmt.Sprintf("head-%d", i))
				res, err := s.RecordDelivery(b.Context(), delivery(i), &run)
				if err != nil || res.Duplicate || res.Run == nil {
					b.Errorf("RecordDelivery = %+v, %v; want a new run", res, err)
					return
				}
			}
		})
	})
	b.Run("redelivery", func(b *testing.B) {
		recorded := n.Load()
		var m atomic.Int64
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				i := m.Add(1)%recorded + 1
				run := prRun("o/bench", int(i%100)+1, fmt.Sprintf("head-%d", i))
				res, err := s.RecordDelivery(b.Context(), delivery(i), &run)
				if err != nil || !res.Duplicate {
					b.Errorf("RecordDelivery = %+v, %v; want a duplicate", res, err)
					return
				}
			}
		})
	})
}

// BenchmarkFinishRunLedger measures what the finding ledger adds to
// recording a pull request run with 50 findings: the same FinishRun
// without and with its 50 ledger entries (issue 13's goal: under 5 ms).
func BenchmarkFinishRunLedger(b *testing.B) {
	s := storetest.New(b)
	findings := make([]review.Finding, 50)
	entries := make([]review.LedgerEntry, 50)
	for i := range findings {
		findings[i] = review.Finding{FilePath: fmt.Sprintf("pkg/f%d.go", i%20), LineStart: i + 1, LineEnd: i + 3,
			Side: review.SideRight, Severity: review.SeverityWarning, Category: review.CategoryBug,
			Title: "unchecked error", Description: "the error of Close is dropped", VerificationStatus: review.Verified,
			Confidence: 0.8, CodeSnippet: "defer f.Close()", Fingerprint: fmt.Sprintf("fp-%02d", i)}
		entries[i] = review.LedgerEntry{Finding: findings[i], State: review.FindingOpen, FirstSeenSHA: "h", LastSeenSHA: "h"}
	}
	verdict := &review.Verdict{Verdict: review.DecisionComment, Files: []review.FileReview{{FilePath: "pkg", Findings: findings}}}
	var pr atomic.Int64
	for _, withLedger := range []bool{false, true} {
		b.Run(fmt.Sprintf("ledger=%t", withLedger), func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				run := prRun("o/bench", int(pr.Add(1)), "h")
				if _, err := s.EnqueueRun(b.Context(), run); err != nil {
					b.Fatal(err)
				}
				claimed, err := s.ClaimRun(b.Context(), "w", time.Minute)
				if err != nil || claimed == nil {
					b.Fatalf("ClaimRun = %v, %v", claimed, err)
				}
				res := store.Result{Status: store.StatusSucceeded, Verdict: verdict}
				if withLedger {
					res.Ledger = entries
				}
				b.StartTimer()
				if err := s.FinishRun(b.Context(), claimed.ID, "w", res); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkRecordBatch measures the group commit: deliveries recorded in
// batches of 1, 8 and 64 (one transaction each, as Intake writes them),
// each delivery of its own pull request of 1,000 and queuing a run. ns/op
// is per delivery; cpu-µs/delivery is the test process's CPU time. On a
// PostgreSQL with default durability:
//
//	env -u MERGEGUARD_TEST_DATABASE_URL MERGEGUARD_PG_DURABLE=1 bash scripts/with-postgres.sh \
//	    go test -run '^$' -bench RecordBatch ./server/store/
func BenchmarkRecordBatch(b *testing.B) {
	s := storetest.New(b)
	var n atomic.Int64
	for _, size := range []int{1, 8, 64} {
		b.Run(fmt.Sprint(size), func(b *testing.B) {
			ds, runs := make([]store.Delivery, size), make([]*store.NewRun, size)
			cpu := cpuTime(b)
			for done := 0; done < b.N; done += size {
				for j := range size {
					i := n.Add(1)
					run := prRun("o/bench", int(i%1000)+1, fmt.Sprintf("head-%d", i))
					ds[j] = store.Delivery{ID: fmt.Sprintf("batch-%d", i), Event: "pull_request", Action: "synchronize",
						InstallationID: 7, Repository: "o/bench"}
					runs[j] = &run
				}
				if _, err := s.RecordBatch(b.Context(), ds, runs); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64((cpuTime(b)-cpu).Microseconds())/float64(b.N), "cpu-µs/delivery")
		})
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
