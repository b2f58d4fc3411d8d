package text_test

import (
	"testing"

	"github.com/mergeguard/mergeguard/review/text"
)

func TestOneLine(t *testing.T) {
	for in, want := range map[string]string{
		"":                       "",
		"  a\n\tb   c \r\n":      "a b c",
		"already one line":       "already one line",
		"é\u00a0ü":               "é ü", // a no-break space is a space too
		"line one\n\nline two\n": "line one line two",
	} {
		if got := text.OneLine(in); got != want {
			t.Errorf("OneLine(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestClip(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly", 7, "exactly"},
		{"one too many", 11, "one too ma…"},
		{"ééééé", 3, "éé…"}, // runes, never a split one
		{"abc", 0, "…"},
		{"", 0, ""},
	}
	for _, tt := range tests {
		if got := text.Clip(tt.in, tt.n); got != tt.want {
			t.Errorf("Clip(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}

func TestShortSHA(t *testing.T) {
	for in, want := range map[string]string{"0123456789abcdef": "0123456", "abc": "abc", "": ""} {
		if got := text.ShortSHA(in); got != want {
			t.Errorf("ShortSHA(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestClipBytes(t *testing.T) {
	tests := []struct {
		s          string
		n          int
		prefix, cl string
	}{
		{"hello", 10, "hello", "hello"},
		{"hello", 5, "hello", "hello"},
		{"hello", 3, "hel", "hel…"},
		{"héllo", 2, "h", "h…"}, // é is two bytes: not split
		{"héllo", 3, "hé", "hé…"},
		{"日本", 4, "日", "日…"},
		{"abc", 0, "", "…"},
	}
	for _, tt := range tests {
		if got := text.PrefixBytes(tt.s, tt.n); got != tt.prefix {
			t.Errorf("PrefixBytes(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.prefix)
		}
		if got := text.ClipBytes(tt.s, tt.n); got != tt.cl {
			t.Errorf("ClipBytes(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.cl)
		}
	}
}
