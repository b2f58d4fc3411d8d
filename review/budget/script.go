package budget

import (
	"context"

	openai "github.com/sashabaranov/go-openai"
)

// Split is o200k_base's count of a text split by script: the tokens of
// the pieces (the pre-tokens of the split pattern) made of ASCII bytes
// only, and those of the pieces holding a non-ASCII byte, with those
// pieces' UTF-8 bytes. Tokenizers agree within a few tens of percent on
// ASCII text (code, English) but may count two to four times apart on
// other scripts (Greek, Cyrillic, CJK, emoji), so a model without a known
// tokenizer is corrected for each part apart (Correction).
type Split struct {
	ASCII      int
	Other      int
	OtherBytes int
}

// Total is the text's count: ASCII plus Other.
func (s Split) Total() int { return s.ASCII + s.Other }

// Add returns the sum of s and o, part by part.
func (s Split) Add(o Split) Split {
	return Split{ASCII: s.ASCII + o.ASCII, Other: s.Other + o.Other, OtherBytes: s.OtherBytes + o.OtherBytes}
}

// SplitCounter is a ContextCounter that splits its counts by script in
// the same pass. The counters of Tokenizers and Memo implement it.
type SplitCounter interface {
	ContextCounter
	// CountSplit is CountContext, split.
	CountSplit(ctx context.Context, text string) (Split, error)
	// CountSplitLines is LineCounter.CountLines, split.
	CountSplitLines(ctx context.Context, text string) (Split, []Split, error)
}

// totals returns each Split's total.
func totals(lines []Split) []int {
	out := make([]int, len(lines))
	for i, l := range lines {
		out[i] = l.Total()
	}
	return out
}

// splitSum is a Counter that adds up the splits of what it counts.
type splitSum struct {
	c   SplitCounter
	sum Split
}

// Count implements Counter.
func (s *splitSum) Count(text string) int {
	sp, _ := s.c.CountSplit(context.Background(), text)
	s.sum = s.sum.Add(sp)
	return sp.Total()
}

// SplitRequest is CountRequest, split: the chat format's overheads, which
// are no text, count as ASCII.
func SplitRequest(c SplitCounter, req openai.ChatCompletionRequest) Split {
	s := &splitSum{c: c}
	n := CountRequest(s, req)
	s.sum.ASCII += n - s.sum.Total()
	return s.sum
}
