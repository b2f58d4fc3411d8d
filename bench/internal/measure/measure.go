// Package measure times functions and describes the machine a benchmark
// ran on.
package measure

import (
	"bufio"
	"cmp"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"
)

// Timing is what one function cost per call.
type Timing struct {
	// NsPerOp is wall time; CPUNsPerOp is the process's CPU time (user +
	// system, getrusage, garbage collection included), which other work on
	// a busy machine does not inflate.
	NsPerOp     float64 `json:"ns_per_op"`
	CPUNsPerOp  float64 `json:"cpu_ns_per_op"`
	BytesPerOp  float64 `json:"bytes_allocated_per_op"`
	AllocsPerOp float64 `json:"allocs_per_op"`
	Iterations  int     `json:"iterations"`
}

// Rounds times each of fns in turn, rounds times, each round at least
// minRound long, interleaved so that a slow spell of a shared machine falls
// on every function alike; a function's figure is its round of least CPU
// time. The first error returned by a call ends the measurement.
func Rounds(fns []func() error, rounds int, minRound time.Duration) ([]Timing, error) {
	all := make([][]Timing, len(fns))
	for _, fn := range fns {
		if err := fn(); err != nil { // warm up
			return nil, err
		}
	}
	for range max(rounds, 1) {
		for i, fn := range fns {
			t, err := round(fn, minRound)
			if err != nil {
				return nil, err
			}
			all[i] = append(all[i], t)
		}
	}
	out := make([]Timing, len(fns))
	for i, ts := range all {
		out[i] = slices.MinFunc(ts, func(a, b Timing) int { return cmp.Compare(a.CPUNsPerOp, b.CPUNsPerOp) })
	}
	return out, nil
}

// round calls fn n times, doubling n until the calls take minRound of
// CPU time.
func round(fn func() error, minRound time.Duration) (Timing, error) {
	for n := 1; ; n *= 2 {
		runtime.GC() // no garbage of another function's round to collect
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		cpuStart, err := CPUTime()
		if err != nil {
			return Timing{}, err
		}
		start := time.Now()
		for range n {
			if err := fn(); err != nil {
				return Timing{}, err
			}
		}
		elapsed := time.Since(start)
		cpuEnd, err := CPUTime()
		if err != nil {
			return Timing{}, err
		}
		runtime.ReadMemStats(&after)
		if cpuEnd-cpuStart >= minRound || n >= 1<<30 {
			return Timing{
				NsPerOp:     float64(elapsed.Nanoseconds()) / float64(n),
				CPUNsPerOp:  float64((cpuEnd - cpuStart).Nanoseconds()) / float64(n),
				BytesPerOp:  float64(after.TotalAlloc-before.TotalAlloc) / float64(n),
				AllocsPerOp: float64(after.Mallocs-before.Mallocs) / float64(n),
				Iterations:  n,
			}, nil
		}
	}
}

// CPUTime is the user and system CPU time this process has used.
func CPUTime() (time.Duration, error) {
	u, err := ProcessUsage()
	return u.CPU, err
}

// Usage is what a process has used so far.
type Usage struct {
	CPU time.Duration `json:"cpu_ns"` // user and system time
	// ContextSwitches counts the times its threads left a CPU, waiting
	// (voluntary) or preempted. On a virtual machine each costs tens of
	// microseconds of CPU, and their count varies far less from run to
	// run than CPU time does.
	ContextSwitches int64 `json:"context_switches"`
}

// ProcessUsage is this process's usage (getrusage).
func ProcessUsage() (Usage, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return Usage{}, fmt.Errorf("getrusage: %w", err)
	}
	return Usage{CPU: time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), ContextSwitches: ru.Nvcsw + ru.Nivcsw}, nil
}

// Machine is what a benchmark ran on.
type Machine struct {
	CPU   string `json:"cpu"`
	Cores int    `json:"cores"`
	Go    string `json:"go"`
	OS    string `json:"os"`
	Date  string `json:"date"`
	// Commit is the app's commit the suite measured ("" when unknown).
	Commit string `json:"commit,omitempty"`
}

// ThisMachine describes the machine this process runs on; commit is
// recorded as given.
func ThisMachine(now time.Time, commit string) Machine {
	return Machine{CPU: cpuModel(), Cores: runtime.NumCPU(), Go: runtime.Version(),
		OS: runtime.GOOS + "/" + runtime.GOARCH, Date: now.UTC().Format(time.RFC3339), Commit: commit}
}

// cpuModel is the "model name" of /proc/cpuinfo, or "unknown".
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "unknown"
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

// Ratio is a/b, or 0 when b is 0.
func Ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}
