package measure

import (
	"errors"
	"testing"
	"time"
)

func TestRounds(t *testing.T) {
	calls := make([]int, 2)
	fns := []func() error{
		func() error { calls[0]++; return nil },
		func() error { calls[1]++; spin(time.Millisecond); return nil },
	}
	ts, err := Rounds(fns, 3, 5*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if ts[1].NsPerOp < float64(time.Millisecond) || ts[1].CPUNsPerOp < float64(500*time.Microsecond) ||
		ts[0].CPUNsPerOp >= ts[1].CPUNsPerOp {
		t.Errorf("timings %+v: want the spinning function at least 1 ms (0.5 ms of CPU) a call and slower", ts)
	}
	if calls[0] < 4 || calls[1] < 4 { // the warm-up and three rounds
		t.Errorf("calls = %v", calls)
	}
	boom := errors.New("boom")
	if _, err := Rounds([]func() error{func() error { return boom }}, 1, 0); !errors.Is(err, boom) {
		t.Errorf("Rounds = %v, want boom", err)
	}
}

func TestRatio(t *testing.T) {
	if got := Ratio(3, 2); got != 1.5 {
		t.Errorf("Ratio(3, 2) = %v", got)
	}
	if got := Ratio(3, 0); got != 0 {
		t.Errorf("Ratio(3, 0) = %v", got)
	}
}

// spin keeps the CPU busy for d.
func spin(d time.Duration) {
	for start := time.Now(); time.Since(start) < d; {
	}
}
