package hook

import "testing"

func TestMentions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, body string
		want       bool
	}{
		{"plain", "@mergeguard why is this a bug?", true},
		{"in a sentence", "Thanks, @MergeGuard. Is this right?", true},
		{"with [bot]", "cc @mergeguard[bot]", true},
		{"at the end", "what do you think @mergeguard", true},
		{"after a parenthesis", "(@mergeguard)", true},
		{"second line", "first line\n\n@mergeguard second", true},
		{"no mention", "why is this a bug?", false},
		{"another user", "@mergeguard-ci look", false},
		{"a longer login", "@mergeguardian look", false},
		{"a team", "@mergeguard/reviewers look", false},
		{"an e-mail address", "mail me at me@mergeguard.dev", false},
		{"a code span", "call `@mergeguard` in the docs", false},
		{"a double-backtick code span", "see ``x @mergeguard ` y`` here", false},
		{"after a code span", "`x` then @mergeguard", true},
		{"an unclosed backtick", "a ` b @mergeguard", true},
		{"a fenced block", "```\n@mergeguard\n```\nno", false},
		{"indented code", "text\n\n    @mergeguard\n", false},
		{"a quote", "> @mergeguard said\nI agree", false},
		{"an HTML comment", "<!-- @mergeguard -->hi", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := Mentions(tt.body, "mergeguard[bot]"); got != tt.want {
				t.Errorf("Mentions(%q) = %t, want %t", tt.body, got, tt.want)
			}
		})
	}
	if Mentions("@mergeguard", "") {
		t.Error("an unknown login is mentioned")
	}
}
