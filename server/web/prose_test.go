package web

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestProse(t *testing.T) {
	t.Parallel() // each test has its own database and servers
	const pull = "https://github.com/acme/widgets/pull/7"
	tests := []struct {
		name, text, pull string
		want             [][]Span
	}{
		{"paragraphs", "First line\nsecond line.\n\n  \nNext paragraph.", pull,
			[][]Span{{{Text: "First line\nsecond line."}}, {{Text: "Next paragraph."}}}},
		{"a link into the repository", "See https://github.com/acme/widgets/blob/abc/x.go#L3.", pull,
			[][]Span{{{Text: "See "}, {Text: "https://github.com/acme/widgets/blob/abc/x.go#L3", Href: "https://github.com/acme/widgets/blob/abc/x.go#L3"}, {Text: "."}}}},
		{"another repository stays text", "Read https://github.com/evil/phish and (https://evil.example/x)", pull,
			[][]Span{{{Text: "Read https://github.com/evil/phish and (https://evil.example/x)"}}}},
		{"a diff review links nothing", "See https://github.com/acme/widgets/issues/1", "",
			[][]Span{{{Text: "See https://github.com/acme/widgets/issues/1"}}}},
		{"no path tricks", "https://github.com/acme/widgets/../../evil/x", pull,
			[][]Span{{{Text: "https://github.com/acme/widgets/../../evil/x"}}}},
		{"markup is text", "<script>alert(1)</script> javascript:alert(1)", pull,
			[][]Span{{{Text: "<script>alert(1)</script> javascript:alert(1)"}}}},
		{"empty", " \n\n ", pull, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, prose(tt.text, tt.pull)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
