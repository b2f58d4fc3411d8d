package main

import "testing"

func TestReplace(t *testing.T) {
	tests := []struct {
		name, doc, want string
		wantErr         bool
	}{
		{"replaces", "a\n<!-- bench:start -->\nold\n<!-- bench:end -->\nb\n", "a\n<!-- bench:start -->\nnew\n<!-- bench:end -->\nb\n", false},
		{"empty section", "<!-- bench:start -->\n<!-- bench:end -->\n", "<!-- bench:start -->\nnew\n<!-- bench:end -->\n", false},
		{"no start", "a\n<!-- bench:end -->\n", "", true},
		{"no end", "<!-- bench:start -->\nold\n", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Replace(tt.doc, "new\n")
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("Replace = %q, %v; want %q (error: %v)", got, err, tt.want, tt.wantErr)
			}
		})
	}
}
