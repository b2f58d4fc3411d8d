package access

import (
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// clock is a settable time.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func newTestThrottle() (*Throttle, *clock) {
	c := &clock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	th := NewThrottle()
	th.now = c.now
	return th, c
}

// TestThrottlePerAddress: AddressFailures failures in a window block the
// address for ThrottleWindow, the next block twice as long; other
// addresses are not blocked; a success forgets the address.
func TestThrottlePerAddress(t *testing.T) {
	th, c := newTestThrottle()
	for range AddressFailures - 1 {
		th.Fail("198.51.100.1")
	}
	if w := th.Wait("198.51.100.1"); w != 0 {
		t.Fatalf("after %d failures: wait %v, want 0", AddressFailures-1, w)
	}
	th.Fail("198.51.100.1")
	var waits []time.Duration
	waits = append(waits, th.Wait("198.51.100.1"), th.Wait("198.51.100.2"))
	c.t = c.t.Add(ThrottleWindow)
	waits = append(waits, th.Wait("198.51.100.1"))
	for range AddressFailures {
		th.Fail("198.51.100.1")
	}
	waits = append(waits, th.Wait("198.51.100.1"))
	th.Succeed("198.51.100.1")
	waits = append(waits, th.Wait("198.51.100.1"))
	want := []time.Duration{ThrottleWindow, 0, 0, 2 * ThrottleWindow, 0}
	if d := cmp.Diff(want, waits); d != "" {
		t.Errorf("waits (-want +got):\n%s", d)
	}
}

// TestThrottleGlobal: GlobalFailures failures from as many addresses
// block everybody until the bucket earns one more attempt.
func TestThrottleGlobal(t *testing.T) {
	th, c := newTestThrottle()
	for i := range GlobalFailures {
		th.Fail("203.0.113." + strconv.Itoa(i))
	}
	per := ThrottleWindow / GlobalFailures
	if w := th.Wait("192.0.2.1"); w != per {
		t.Errorf("a fresh address after %d failures overall: wait %v, want %v", GlobalFailures, w, per)
	}
	c.t = c.t.Add(per)
	if w := th.Wait("192.0.2.1"); w != 0 {
		t.Errorf("after %v: wait %v, want 0", per, w)
	}
}

// TestThrottleBoundsAddresses: the table of addresses stays bounded.
func TestThrottleBoundsAddresses(t *testing.T) {
	th, c := newTestThrottle()
	for i := range maxAddresses + 50 {
		th.Fail(strconv.Itoa(i))
		if i%GlobalFailures == 0 {
			c.t = c.t.Add(time.Second)
		}
	}
	if n := len(th.addrs); n > maxAddresses {
		t.Errorf("%d addresses remembered, want at most %d", n, maxAddresses)
	}
}
