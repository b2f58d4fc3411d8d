package budget_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/mergeguard/mergeguard/review/budget"
)

// callCounter counts the calls it gets, a token per byte.
type callCounter struct{ calls map[string]int }

func (c callCounter) Count(text string) int {
	c.calls[text]++
	return len(text)
}

func (c callCounter) CountContext(ctx context.Context, text string) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	return c.Count(text), nil
}

func TestMemo(t *testing.T) {
	long, other, short := strings.Repeat("a", 600), strings.Repeat("b", 600), "short"
	tests := []struct {
		name     string
		maxBytes int
		texts    []string
		want     map[string]int // calls reaching the counter
	}{
		{"a long text is counted once", 1 << 20, []string{long, long, long}, map[string]int{long: 1}},
		{"a short one every time", 1 << 20, []string{short, short}, map[string]int{short: 2}},
		{"full: forgets, then remembers again", 1000, []string{long, other, long, long}, map[string]int{long: 2, other: 1}},
		{"larger than the bound: never kept", 500, []string{long, long}, map[string]int{long: 2}},
	}
	for _, tt := range tests {
		c := callCounter{calls: map[string]int{}}
		m := budget.NewMemo(c, tt.maxBytes)
		for _, text := range tt.texts {
			if n := m.Count(text); n != len(text) {
				t.Errorf("%s: Count = %d, want %d", tt.name, n, len(text))
			}
		}
		for text, want := range tt.want {
			if got := c.calls[text]; got != want {
				t.Errorf("%s: %.10q counted %d times, want %d", tt.name, text, got, want)
			}
		}
	}
	c := callCounter{calls: map[string]int{}}
	m := budget.NewMemo(c, 1<<20)
	done, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := m.CountContext(done, long); !errors.Is(err, context.Canceled) {
		t.Errorf("CountContext on a done context = %v", err)
	}
	if n, lines, err := m.CountLines(t.Context(), long+"\n"+long); err != nil || n != 1201 || len(lines) != 2 {
		t.Errorf("CountLines = %d, %v, %v", n, lines, err)
	}
	m.Count(long + "\n" + long)
	if c.calls[long+"\n"+long] != 1 {
		t.Errorf("the total of CountLines was not remembered: %d calls", c.calls[long+"\n"+long])
	}
}
