package retry

import (
	"testing"
	"time"
)

func TestBackoffBounds(t *testing.T) {
	for n := 0; n < 70; n++ {
		d := Backoff(n, 100*time.Millisecond, 10*time.Second)
		if d < 0 || d > 10*time.Second {
			t.Fatalf("Backoff(%d) = %v, want 0..10s", n, d)
		}
	}
}
