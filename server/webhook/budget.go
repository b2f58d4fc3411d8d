package webhook

import (
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/mergeguard/mergeguard/github/hook"
)

// budget is the replica's in-flight byte budget for delivery bodies. A
// body reserves its bytes a chunk at a time as they arrive
// (hook.ReadDelivery), so a sender holds what it sent, not what it
// announced. A share of the budget (small) is kept for bodies' first
// chunks: a body read past its first chunk never takes the last of it, so
// a delivery that is moving (GitHub's are mostly tens of kilobytes, one
// chunk) finds room while large bodies fill the rest. It also counts, per
// client address, the bodies still being read after the grace period, to
// cap slow senders.
type budget struct {
	total, small int64
	slowPerAddr  int

	mu   sync.Mutex
	used int64
	slow map[string]int
}

func newBudget(total int64, slowPerAddr int) *budget {
	small := max(total/8, 2*hook.FirstChunkBytes)
	return &budget{total: total, small: min(small, total), slowPerAddr: slowPerAddr, slow: map[string]int{}}
}

// grow reserves n more bytes for a body that already holds held; first
// chunks may take the whole budget, later ones all but the small share.
func (b *budget) grow(n, held int64) bool {
	limit := b.total
	if held > 0 || n > hook.FirstChunkBytes {
		limit -= b.small
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used+n > limit {
		return false
	}
	b.used += n
	return true
}

// fits reports whether a body of n bytes announced would fit now.
func (b *budget) fits(n int64) bool {
	if n <= hook.FirstChunkBytes {
		return true
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used+n <= b.total-b.small
}

func (b *budget) release(n int64) {
	if n == 0 {
		return
	}
	b.mu.Lock()
	b.used -= n
	b.mu.Unlock()
}

// addSlow counts one more slow body from addr, unless addr has as many as
// it may.
func (b *budget) addSlow(addr string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.slow[addr] >= b.slowPerAddr {
		return false
	}
	b.slow[addr]++
	return true
}

func (b *budget) dropSlow(addr string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.slow[addr]--; b.slow[addr] <= 0 {
		delete(b.slow, addr)
	}
}

// errSlow: a body arrived slower than the minimum rate, or its address
// already has as many slow bodies in flight as it may.
var errSlow = errors.New("the webhook body arrives too slowly")

// pace is how fast a body must arrive: within grace any rate, after it at
// least rate bytes a second averaged since the request began, and never
// past timeout (the server's read timeout; 0: none).
type pace struct {
	grace   time.Duration
	rate    int64
	timeout time.Duration
}

// pacedBody is a request body read at least at its pace. Each Read is
// given a read deadline (http.ResponseController) by which the bytes
// read so far are enough, so a sender that stops is cut off too; a body
// still being read after the grace period counts as slow for its client
// address (budget.addSlow) until it ends.
type pacedBody struct {
	body   io.Reader
	rc     *http.ResponseController
	pace   pace
	budget *budget
	addr   string

	start, deadline time.Time
	got             int64
	slow            bool
}

func newPacedBody(w http.ResponseWriter, r *http.Request, p pace, b *budget) *pacedBody {
	addr, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		addr = r.RemoteAddr
	}
	return &pacedBody{body: r.Body, rc: http.NewResponseController(w), pace: p, budget: b, addr: addr, start: time.Now()}
}

// due is when the bytes read so far stop being enough.
func (p *pacedBody) due() time.Time {
	d := p.start.Add(max(p.pace.grace, time.Duration(float64(p.got)/float64(p.pace.rate)*float64(time.Second))))
	if limit := p.start.Add(p.pace.timeout); p.pace.timeout > 0 && limit.Before(d) {
		d = limit
	}
	return d
}

func (p *pacedBody) Read(b []byte) (int, error) {
	now := time.Now()
	due := p.due()
	if !now.Before(due) {
		return 0, errSlow
	}
	if !p.slow && now.Sub(p.start) >= p.pace.grace {
		if !p.budget.addSlow(p.addr) {
			return 0, errSlow
		}
		p.slow = true
	}
	if !due.Equal(p.deadline) {
		_ = p.rc.SetReadDeadline(due) // unsupported: the check above still holds at each Read
		p.deadline = due
	}
	n, err := p.body.Read(b)
	p.got += int64(n)
	if err != nil && !time.Now().Before(due) && !errors.Is(err, io.EOF) {
		return n, errSlow
	}
	return n, err
}

// done ends the body's pace: the read deadline is lifted (the connection
// may carry further requests) and a slow body no longer counts.
func (p *pacedBody) done() {
	if !p.deadline.IsZero() {
		_ = p.rc.SetReadDeadline(time.Time{})
	}
	if p.slow {
		p.budget.dropSlow(p.addr)
	}
}
