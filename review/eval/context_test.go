package eval

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCheckContext(t *testing.T) {
	refs := []LineRef{{File: "a.go", StartLine: 3, EndLine: 4}, {File: "b.go", StartLine: 10, EndLine: 10}}
	lines := [][]string{{"\towner, err := r.Users.ByID(ctx, id)", "\t}"}, {"func (u *Users) ByID(ctx context.Context) (*User, error) {"}}
	both := "  12 + owner, err := r.Users.ByID(ctx, id)\n...\nfunc (u *Users) ByID(ctx context.Context) (*User, error) {"
	tests := []struct {
		name    string
		prompts []string
		refs    []LineRef
		want    ContextResult
	}{
		{"one prompt holds both", []string{"other", both}, refs, ContextResult{Known: true, Seen: true, Prompts: 2}},
		{"split over two prompts", []string{"owner, err := r.Users.ByID(ctx, id)", "func (u *Users) ByID(ctx context.Context) (*User, error) {"}, refs,
			ContextResult{Known: true, Prompts: 2, Missing: []string{"b.go:10-10"}}},
		{"no prompt", nil, refs, ContextResult{Known: true, Missing: []string{"a.go:3-4", "b.go:10-10"}, Reason: "no model prompt was built"}},
		{"no context lines", []string{both}, nil, ContextResult{Prompts: 1, Reason: "no context lines recorded"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := CheckContext(tt.prompts, tt.refs, lines)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("CheckContext (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLinesOf(t *testing.T) {
	text := "a\nb\nc\n"
	if diff := cmp.Diff([]string{"b", "c"}, LinesOf(text, 2, 3)); diff != "" {
		t.Error(diff)
	}
	if got := LinesOf(text, 9, 10); got != nil {
		t.Errorf("past the end: %q", got)
	}
}
