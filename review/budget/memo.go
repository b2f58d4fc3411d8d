package budget

import (
	"context"
	"sync"
)

// Memo is a counter that remembers the counts of long texts, split by
// script (Split), so that the prompt builder, the agents (which send their
// system and user messages again at every turn) and the LLM client count
// each text once. It forgets everything when the texts it keeps alive
// reach its byte bound. It is safe for concurrent use.
type Memo struct {
	c        ContextCounter
	maxBytes int
	mu       sync.Mutex
	m        map[string]Split
	bytes    int // of the texts in m
}

// memoMinBytes is the shortest text remembered: shorter ones cost less to
// count than to look up.
const memoMinBytes = 256

// NewMemo remembers c's counts of up to maxBytes of texts. When c is not
// a SplitCounter, all of its counts are taken as ASCII.
func NewMemo(c ContextCounter, maxBytes int) *Memo {
	return &Memo{c: c, maxBytes: maxBytes, m: map[string]Split{}}
}

// Count implements Counter.
func (m *Memo) Count(text string) int {
	n, _ := m.CountSplit(context.Background(), text)
	return n.Total()
}

// CountContext implements ContextCounter; a count stopped by ctx is not
// remembered.
func (m *Memo) CountContext(ctx context.Context, text string) (int, error) {
	n, err := m.CountSplit(ctx, text)
	return n.Total(), err
}

// CountSplit implements SplitCounter; a count stopped by ctx is not
// remembered.
func (m *Memo) CountSplit(ctx context.Context, text string) (Split, error) {
	if len(text) < memoMinBytes || len(text) > m.maxBytes {
		return m.count(ctx, text)
	}
	m.mu.Lock()
	n, ok := m.m[text]
	m.mu.Unlock()
	if ok {
		return n, nil
	}
	n, err := m.count(ctx, text)
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

// count counts text with c, split when c splits.
func (m *Memo) count(ctx context.Context, text string) (Split, error) {
	if sc, ok := m.c.(SplitCounter); ok {
		return sc.CountSplit(ctx, text)
	}
	n, err := m.c.CountContext(ctx, text)
	return Split{ASCII: n}, err
}

// CountLines implements LineCounter, remembering the total.
func (m *Memo) CountLines(ctx context.Context, text string) (int, []int, error) {
	n, lines, err := m.CountSplitLines(ctx, text)
	return n.Total(), totals(lines), err
}

// CountSplitLines implements SplitCounter, remembering the total.
func (m *Memo) CountSplitLines(ctx context.Context, text string) (Split, []Split, error) {
	n, lines, err := m.countLines(ctx, text)
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

// countLines counts text and its lines with c, split when c splits.
func (m *Memo) countLines(ctx context.Context, text string) (Split, []Split, error) {
	if sc, ok := m.c.(SplitCounter); ok {
		return sc.CountSplitLines(ctx, text)
	}
	n, ls, err := CountLines(ctx, m.c, text)
	lines := make([]Split, len(ls))
	for i, l := range ls {
		lines[i] = Split{ASCII: l}
	}
	return Split{ASCII: n}, lines, err
}
