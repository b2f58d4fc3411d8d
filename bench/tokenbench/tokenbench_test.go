package tokenbench

import (
	"strings"
	"testing"
)

func TestCountersAgree(t *testing.T) {
	counters, err := Counters()
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{
		"",
		"func main() {\n\tfmt.Println(\"hello, world\")\n}\n",
		"Ünïcödé, 日本語のテキスト, emoji 🚀🎉 and   spaces\n\n\tand tabs",
		strings.Repeat("The quick brown fox jumps over the lazy dog. ", 50),
	} {
		rows, err := Run(Input{Name: "text", Text: text}, counters, 1, 0)
		if err != nil {
			t.Errorf("%q: %v", text, err)
			continue
		}
		if text != "" && rows[0].Tokens == 0 {
			t.Errorf("%q: no tokens counted", text)
		}
	}
}

func TestRunRefusesCountersThatDisagree(t *testing.T) {
	counters := []Counter{
		{Name: "a", Count: func(s string) int { return len(s) }},
		{Name: "b", Count: func(s string) int { return len(s) + 1 }},
	}
	if _, err := Run(Input{Name: "x", Text: "abc"}, counters, 1, 0); err == nil {
		t.Error("Run accepted counts 3 and 4")
	}
}
