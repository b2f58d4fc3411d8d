package budget_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mergeguard/mergeguard/review/budget"
)

// TestCountSplit checks o200k_base's split of texts into the tokens of
// ASCII pieces and those of other pieces with their bytes, and that the
// split adds up to the count, in total and line by line.
func TestCountSplit(t *testing.T) {
	tests := []struct {
		name string
		text string
		want budget.Split
	}{
		{"empty", "", budget.Split{}},
		{"code", "if err != nil {\n\treturn err\n}\n", budget.Split{ASCII: 9}},
		{"an accented word is one piece, not ASCII", "naïve", budget.Split{Other: 3, OtherBytes: 6}},
		{"a space before a Greek word goes with it", "x Ωμέγα", budget.Split{ASCII: 1, Other: 3, OtherBytes: 11}},
		{"Chinese", "// 的一是不了", budget.Split{ASCII: 1, Other: 4, OtherBytes: 16}},
		{"a symbol's piece takes the space before and the line break after", "a → b 🚀\n", budget.Split{ASCII: 2, Other: 4, OtherBytes: 10}},
		{"an invalid byte is U+FFFD", "ok \xff", budget.Split{ASCII: 1, Other: 1, OtherBytes: 4}},
	}
	tk := tokenizers()
	o200k := tk.Base("gpt-4o")
	for _, tt := range tests {
		got, err := o200k.CountSplit(t.Context(), tt.text)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(tt.want, got); d != "" {
			t.Errorf("%s: CountSplit(%q) (-want +got):\n%s", tt.name, tt.text, d)
		}
		if n := o200k.Count(tt.text); got.Total() != n {
			t.Errorf("%s: split adds up to %d, Count is %d", tt.name, got.Total(), n)
		}
		total, lines, err := o200k.CountSplitLines(t.Context(), tt.text)
		var sum budget.Split
		for _, l := range lines {
			sum = sum.Add(l)
		}
		if err != nil || total != got || sum != got {
			t.Errorf("%s: CountSplitLines = %+v, lines adding up to %+v, %v; want %+v", tt.name, total, sum, err, got)
		}
	}
}

// TestMemoSplit checks that Memo remembers the split and that a counter
// that does not split is taken as all ASCII.
func TestMemoSplit(t *testing.T) {
	text := "// Ωμέγα καλημέρα κόσμε Ελλάδα, naïve façade → 🚀 " + "func main() { return }\n"
	for len(text) < 1024 {
		text += text
	}
	o200k := tokenizers().Base("llama3")
	want, err := o200k.CountSplit(t.Context(), text)
	if err != nil {
		t.Fatal(err)
	}
	m := budget.NewMemo(o200k, 1<<20)
	for range 2 {
		if got, err := m.CountSplit(t.Context(), text); err != nil || got != want {
			t.Errorf("Memo.CountSplit = %+v, %v; want %+v", got, err, want)
		}
	}
	if got, lines, err := m.CountSplitLines(t.Context(), text); err != nil || got != want || len(lines) == 0 {
		t.Errorf("Memo.CountSplitLines = %+v, %d lines, %v; want %+v", got, len(lines), err, want)
	}
	c := callCounter{calls: map[string]int{}}
	plain := budget.NewMemo(c, 1<<20)
	for range 2 {
		if got, err := plain.CountSplit(t.Context(), text); err != nil || got != (budget.Split{ASCII: len(text)}) {
			t.Errorf("Memo over a plain counter: CountSplit = %+v, %v; want all %d ASCII", got, err, len(text))
		}
	}
	if c.calls[text] != 1 {
		t.Errorf("counted %d times, want once", c.calls[text])
	}
}
