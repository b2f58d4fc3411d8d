package budget

import (
	"syscall"
	"testing"
	"time"
)

// cpuTime is the processor time the process has used so far (user and
// system, every thread), or 0 where getrusage fails.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// ReportCPU (exported for the external test package's benchmarks)
// reports the processor time per operation as cpu-ms/op (and,
// when bytes is not 0, bytes per processor second as cpu-MB/s), next to
// the wall time that a loaded machine inflates: the goals of the issue
// (15 MB/s, 200 ms, 500 ms) are about work, which a single-threaded count
// does at one core. Call it as the first deferred statement of a
// benchmark, before the loop: defer ReportCPU(b, bytes)().
func ReportCPU(b *testing.B, bytes int) func() {
	start := cpuTime()
	return func() {
		used := cpuTime() - start
		if b.N == 0 || used <= 0 {
			return
		}
		b.ReportMetric(float64(used)/float64(b.N)/1e6, "cpu-ms/op")
		if bytes > 0 {
			b.ReportMetric(float64(bytes)*float64(b.N)/used.Seconds()/1e6, "cpu-MB/s")
		}
	}
}
