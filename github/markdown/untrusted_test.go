package markdown

import (
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mergeguard/mergeguard/github/markdown/markdowntest"
)

const testPullURL = "https://github.com/acme/widgets/pull/7"

func TestTextPolicyBlock(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"plain text", "The error is dropped.\nSee line 3.", "The error is dropped.\nSee line 3."},
		{"paragraphs", "one\n\n\n\ntwo", "one\n\ntwo"},
		{"forged markers", "x <!-- mergeguard:fp=fp-target --> <!-- mergeguard:run=run-2 -->",
			"x &lt;!-- mergeguard:fp=fp-target --&gt; &lt;!-- mergeguard:run=run-2 --&gt;"},
		{"raw html", "</details><img src=x onerror=alert(1)> & &#64;everyone",
			"&lt;/details&gt;&lt;img src=x onerror=alert(1)&gt; &amp; &amp;#64;everyone"},
		{"mentions", "@everyone @acme/security cc @alice-b, mail a@b.com; @ alone",
			"@\u200deveryone @\u200dacme/security cc @\u200dalice-b, mail a@\u200db.com; @ alone"},
		{"cross-repository reference", "fixes evil/repo#12 and #34", "fixes evil/repo#\u200d12 and #34"},
		{"external image and link", "![x](https://evil.example/p.png) [click](https://evil.example)",
			"x (`https://evil.example/p.png`) click (`https://evil.example`)"},
		{"links into the repository stay", "[guide](https://github.com/acme/widgets/blob/main/docs/guide.md) ![shot](https://github.com/acme/widgets/raw/main/a.png)",
			"[guide](https://github.com/acme/widgets/blob/main/docs/guide.md) ![shot](https://github.com/acme/widgets/raw/main/a.png)"},
		{"links out of the repository by dots", "[a](https://github.com/acme/widgets/../../evil/x) [b](https://github.com/acme/widgets/%2e%2e/x) [c](https://github.com/acme/widgetsx/y)",
			"a (`https://github.com/acme/widgets/../../evil/x`) b (`https://github.com/acme/widgets/%2e%2e/x`) c (`https://github.com/acme/widgetsx/y`)"},
		{"link on another host", "[a](https://github.com.evil.example/acme/widgets/x) [b](http://github.com/acme/widgets/x)",
			"a (`https://github.com.evil.example/acme/widgets/x`) b (`http://github.com/acme/widgets/x`)"},
		{"bare addresses", "see https://evil.example/a, www.evil.example and 1http://x.y",
			"see `https://evil.example/a`, `www.evil.example` and 1`http://x.y`"},
		{"reference links", "[ref]: https://evil.example\n[click][ref] [^1]",
			"\\[ref\\]: `https://evil.example`\n\\[click\\]\\[ref\\] \\[^1\\]"},
		{"block constructs", "# Heading\n| a | b |\n|---|---|\n- item\n1. one\n> quote\n    indented\n---\n===\n~~~\n$$x$$",
			"\\# Heading\n\\| a \\| b \\|\n\\|---\\|---\\|\n\\- item\n1\\. one\n&gt; quote\nindented\n\\---\n\\===\n\\~~~\n\\$\\$x\\$\\$"},
		{"fences", "```go\ncode()\n```", "\\`\\`\\`go\ncode()\n\\`\\`\\`"},
		{"code spans", "Use `x := 1` and ``a`b`` but `a < b` and `@x` and `a|b`, `open",
			"Use `x := 1` and ``a`b`` but \\`a &lt; b\\` and \\`@\u200dx\\` and \\`a\\|b\\`, \\`open"},
		{"backslashes", `a\` + "`b`" + `\<`, `a\\` + "`b`" + `\\&lt;`},
		{"controls and bidi overrides", "a\x00b\u202ec\r\nd\x1b", "abc\nd"},
	}
	tp := NewPolicy(testPullURL)
	for _, tt := range tests {
		if got := tp.Block(tt.in, 1000); got != tt.want {
			t.Errorf("%s: block(%q) =\n%q\nwant\n%q", tt.name, tt.in, got, tt.want)
		}
	}
}

func TestTextPolicyInline(t *testing.T) {
	tests := []struct {
		name, in string
		n        int
		want     string
	}{
		{"one line", "Unchecked\n  error", 100, "Unchecked error"},
		{"emphasis cannot end the bold", "a**b** _c_ ~~d~~", 100, "a\\*\\*b\\*\\* \\_c\\_ \\~\\~d\\~\\~"},
		{"heading at the start", "## Title", 100, "\\## Title"},
		{"snake_case stays readable", "invalid_output of parse_args_", 100, "invalid_output of parse_args\\_"},
		{"clipped on a rune boundary, at most n runes", strings.Repeat("é", 20), 10, strings.Repeat("é", 9) + "…"},
	}
	tp := NewPolicy(testPullURL)
	for _, tt := range tests {
		if got := tp.Inline(tt.in, tt.n); got != tt.want {
			t.Errorf("%s: inline(%q) = %q, want %q", tt.name, tt.in, got, tt.want)
		}
	}
}

func TestTextPolicyWithoutPullURLKeepsNoLink(t *testing.T) {
	for _, pullURL := range []string{"", "not a url", "https://github.com/", "javascript:alert(1)", "https://user@github.com/acme/widgets/pull/7"} {
		got := NewPolicy(pullURL).Block("[a](https://github.com/acme/widgets/x)", 100)
		if want := "a (`https://github.com/acme/widgets/x`)"; got != want {
			t.Errorf("policy of %q: %q, want %q", pullURL, got, want)
		}
	}
}

func TestCodeText(t *testing.T) {
	for in, want := range map[string]string{
		"pkg/a.go":           "`pkg/a.go`",
		"a`b.go":             "``a`b.go``",
		"`x`":                "`` `x` ``",
		"a\nb <!-- c -->.go": "`a b <!-- c -->.go`",
		"":                   "` `",
	} {
		if got := codeText(in); got != want {
			t.Errorf("codeText(%q) = %q, want %q", in, got, want)
		}
	}
}

var (
	// blockStartRE is what may not start a line of rendered text; a
	// backtick fence opens only when no backtick follows on its line.
	blockStartRE = regexp.MustCompile("^(#|>|[-+*=_~|]|[0-9]{1,9}[.)]|\\s|```+[^`]*$|\\$\\$)")
)

// checkUntrusted reports what in out, rendered from untrusted text, GitHub
// would act on.
func checkUntrusted(out string) []string {
	var bad []string
	for _, s := range []string{"<", ">", "<!--", "-->"} {
		if strings.Contains(out, s) {
			bad = append(bad, "contains "+s)
		}
	}
	if markdowntest.HasLiveMention(out) {
		bad = append(bad, "live mention in "+out)
	}
	for line := range strings.SplitSeq(out, "\n") {
		if blockStartRE.MatchString(line) {
			bad = append(bad, "line starts a block: "+line)
		}
	}
	for i, c := range []byte(out) {
		if c != '|' {
			continue
		}
		if n := len(out[:i]) - len(strings.TrimRight(out[:i], `\`)); n%2 == 0 {
			bad = append(bad, "unescaped | at "+out[max(0, i-10):i+1])
		}
	}
	if !utf8.ValidString(out) {
		bad = append(bad, "invalid UTF-8")
	}
	return bad
}

func FuzzTextPolicy(f *testing.F) {
	for _, s := range []string{
		"x <!-- mergeguard:fp=fp-target --> @everyone @acme/security </details>",
		"![x](https://evil.example/p.png) [click](https://evil.example) <!-- mergeguard:run=run-2 -->",
		"# h\n| a | b |\n|---|---|\n```go\nx\n```\n`a<b` ``c`d`` \\`e` @`f`",
		"[a](https://github.com/acme/widgets/x) &#64;all <<!---->!-- - -> <\x00!-- @\u200dx",
		"a|b `|` \\| \\\\| www.x.y http://a@b",
	} {
		f.Add(s)
	}
	tp := NewPolicy(testPullURL)
	f.Fuzz(func(t *testing.T, s string) {
		for _, out := range []string{tp.Block(s, 4000), tp.Inline(s, 4000)} {
			if bad := checkUntrusted(out); len(bad) > 0 {
				t.Fatalf("rendered %q as %q: %v", s, out, bad)
			}
		}
	})
}

// BenchmarkTextPolicy renders inputs made to be slow: every rule scans
// at most to the end of its line.
func BenchmarkTextPolicy(b *testing.B) {
	tp := NewPolicy(testPullURL)
	for _, in := range []struct{ name, s string }{
		{"prose", strings.Repeat("The error of compute is dropped; see `x := f()` and @alice. ", 130)},
		{"backticks", strings.Repeat("`a", 4000)},
		{"brackets", strings.Repeat("[a](", 2000)},
		{"schemes", strings.Repeat("1a.", 2700)},
	} {
		b.Run(in.name, func(b *testing.B) {
			for b.Loop() {
				tp.Block(in.s, maxDescription)
			}
		})
	}
}
