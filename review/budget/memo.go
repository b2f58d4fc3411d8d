package budget

import (
	"context"
	"sync"
)

// Memo is a counter that remembers the counts of long texts, so that the
// prompt builder, the agents (which send their system and user messages
// again at every turn) and the LLM client count each text once. It
// forgets everything when the texts it keeps alive reach its byte bound.
// It is safe for concurrent use.
type Memo struct {
	c        ContextCounter
	maxBytes int
	mu       sync.Mutex
	m        map[string]int
	bytes    int // of the texts in m
}

// memoMinBytes is the shortest text remembered: shorter ones cost less to
// count than to look up.
const memoMinBytes = 256

// NewMemo remembers c's counts of up to maxBytes of texts.
func NewMemo(c ContextCounter, maxBytes int) *Memo {
	return &Memo{c: c, maxBytes: maxBytes, m: map[string]int{}}
}

// Count implements Counter.
func (m *Memo) Count(text string) int {
	n, _ := m.CountContext(context.Background(), text)
	return n
}

// CountContext implements ContextCounter; a count stopped by ctx is not
// remembered.
func (m *Memo) CountContext(ctx context.Context, text string) (int, error) {
	if len(text) < memoMinBytes || len(text) > m.maxBytes {
		return m.c.CountContext(ctx, text)
	}
	m.mu.Lock()
	n, ok := m.m[text]
	m.mu.Unlock()
	if ok {
		return n, nil
	}
	n, err := m.c.CountContext(ctx, text)
	if err != nil {
		return n, err
	}
	m.mu.Lock()
	if _, ok := m.m[text]; !ok {
		if m.bytes+len(text) > m.maxBytes {
			clear(m.m)
			m.bytes = 0
		}
		m.m[text] = n
		m.bytes += len(text)
	}
	m.mu.Unlock()
	return n, nil
}

// CountLines implements LineCounter, remembering the total.
func (m *Memo) CountLines(ctx context.Context, text string) (int, []int, error) {
	n, lines, err := CountLines(ctx, m.c, text)
	if err == nil && len(text) >= memoMinBytes && len(text) <= m.maxBytes {
		m.mu.Lock()
		if _, ok := m.m[text]; !ok && m.bytes+len(text) <= m.maxBytes {
			m.m[text] = n
			m.bytes += len(text)
		}
		m.mu.Unlock()
	}
	return n, lines, err
}
