package retry

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"
)

func TestAfter(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	tests := map[string]struct {
		value  string
		want   time.Duration
		wantOK bool
	}{
		"absent":          {"", 0, false},
		"seconds":         {"120", 2 * time.Minute, true},
		"zero":            {"0", 0, true},
		"fraction":        {"1.5", 1500 * time.Millisecond, true},
		"spaces":          {"  7 ", 7 * time.Second, true},
		"negative":        {"-3", 0, false},
		"absurd":          {"99999999999999", 0, false},
		"http date":       {"Mon, 23 Nov 2026 12:01:30 GMT", 90 * time.Second, true},
		"http date past":  {"Mon, 23 Nov 2026 11:00:00 GMT", 0, true},
		"rfc850 date":     {"Monday, 23-Nov-26 12:00:10 GMT", 10 * time.Second, true},
		"garbage":         {"soon", 0, false},
		"duration syntax": {"5s", 0, false},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			h := http.Header{}
			if tt.value != "" {
				h.Set("Retry-After", tt.value)
			}
			got, ok := After(h, now)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("After(%q) = %v, %v; want %v, %v", tt.value, got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestBackoffDelay(t *testing.T) {
	b := Backoff{Base: time.Second, Max: 10 * time.Second}
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 10 * time.Second, 10 * time.Second}
	for i, w := range want {
		if got := b.Delay(i + 1); got != w {
			t.Errorf("Delay(%d) = %v, want %v", i+1, got, w)
		}
	}
	if got := (Backoff{Base: time.Second}).Delay(80); got <= 0 {
		t.Errorf("uncapped Delay(80) = %v, want a positive wait (no overflow)", got)
	}
}

func TestJitterStaysInBounds(t *testing.T) {
	for range 1000 {
		got := Jitter(time.Second, 0.2)
		if got < 800*time.Millisecond || got > 1200*time.Millisecond {
			t.Fatalf("Jitter(1s, 0.2) = %v, outside [0.8s, 1.2s]", got)
		}
	}
	if got := Jitter(time.Second, 0); got != time.Second {
		t.Errorf("Jitter(1s, 0) = %v, want 1s", got)
	}
}

func TestSleepEndsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Errorf("Sleep on a cancelled context = %v, want context.Canceled", err)
	}
	if err := Sleep(context.Background(), time.Millisecond); err != nil {
		t.Errorf("Sleep(1ms) = %v", err)
	}
}
