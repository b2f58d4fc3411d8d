package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/server/store"
	"github.com/mergeguard/mergeguard/server/store/storetest"
)

// TestExportLearnings: what is exported is a .mergeguard.yml that
// config.ParseRepo reads back to the same instructions, whatever the text
// holds.
func TestExportLearnings(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		ls   []review.Learning
		want []config.PathInstruction
	}{
		{"none", nil, nil},
		{
			name: "plain, with and without a path",
			ls: []review.Learning{
				{ID: 3, Instruction: "panics are fine in cmd/", Path: "cmd/**", Author: "alice", PRNumber: 7},
				{ID: 4, Instruction: "db.Exec is parametrised by the wrapper", Author: "api"},
			},
			want: []config.PathInstruction{
				{Path: "cmd/**", Instructions: "panics are fine in cmd/"},
				{Path: "**", Instructions: "db.Exec is parametrised by the wrapper"},
			},
		},
		{
			name: "text YAML would misread",
			ls: []review.Learning{
				{ID: 1, Instruction: "key: value # not a comment", Path: "*.go", Author: "a"},
				{ID: 2, Instruction: "- a list?\n  indented: line\n\ttab and trailing space ", Path: "{a,b}/**", Author: "a"},
				{ID: 3, Instruction: `"quoted" 'and' {flow} [seq] &anchor *alias !tag | > @ %`, Path: "!x/**", Author: "a"},
				{ID: 4, Instruction: "yes", Path: "null", Author: "a\nb: injected"},
				{ID: 5, Instruction: "path_instructions: []\n---\nenabled: false", Path: "docs/*.md", Author: "a"},
			},
			want: []config.PathInstruction{
				{Path: "*.go", Instructions: "key: value # not a comment"},
				{Path: "{a,b}/**", Instructions: "- a list?\n  indented: line\n\ttab and trailing space "},
				{Path: "!x/**", Instructions: `"quoted" 'and' {flow} [seq] &anchor *alias !tag | > @ %`},
				{Path: "null", Instructions: "yes"},
				{Path: "docs/*.md", Instructions: "path_instructions: []\n---\nenabled: false"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out, err := exportLearnings("o/r", tt.ls)
			if err != nil {
				t.Fatal(err)
			}
			repo, err := config.ParseRepo(out)
			if err != nil {
				t.Fatalf("ParseRepo of the export: %v\n%s", err, out)
			}
			if diff := cmp.Diff(tt.want, repo.PathInstructions, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("path_instructions read back (-want +got):\n%s\n%s", diff, out)
			}
			if repo.Enabled != config.DefaultRepo().Enabled {
				t.Errorf("the export changed enabled:\n%s", out)
			}
		})
	}
}

// TestLearningsExportCommand: the command reads the repository's active
// learnings from DATABASE_URL.
func TestLearningsExportCommand(t *testing.T) {
	t.Parallel()
	dbURL := storetest.URL(t)
	st, err := store.Open(t.Context(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, l := range []review.Learning{
		{Repository: "Acme/Shop", Instruction: "panics are fine in cmd/", Path: "cmd/**", Status: review.LearningActive, Author: "alice", PRNumber: 7},
		{Repository: "acme/shop", Instruction: "still proposed", Status: review.LearningProposed, Author: "bob"},
		{Repository: "acme/shop", Instruction: "switched off", Status: review.LearningInactive, Author: "bob"},
		{Repository: "acme/other", Instruction: "another repository's", Status: review.LearningActive, Author: "bob"},
	} {
		if _, err := st.AddLearning(t.Context(), l); err != nil {
			t.Fatal(err)
		}
	}
	stdout, stderr, err := runCmd(t, env(map[string]string{"DATABASE_URL": dbURL}), "learnings", "export", "--repo", "acme/shop")
	if err != nil {
		t.Fatalf("learnings export: %v\n%s", err, stderr)
	}
	repo, err := config.ParseRepo([]byte(stdout))
	if err != nil {
		t.Fatalf("ParseRepo: %v\n%s", err, stdout)
	}
	want := []config.PathInstruction{{Path: "cmd/**", Instructions: "panics are fine in cmd/"}}
	if diff := cmp.Diff(want, repo.PathInstructions); diff != "" {
		t.Errorf("exported (-want +got):\n%s\n%s", diff, stdout)
	}
}

func TestLearningsUsage(t *testing.T) {
	t.Parallel()
	checkUsageErrors(t, []usageErrorCase{
		{"no action", []string{"learnings"}, "learnings: missing action (export)", 2},
		{"unknown action", []string{"learnings", "import"}, `learnings: unknown action "import" (want export)`, 2},
		{"extra argument", []string{"learnings", "export", "x", "--repo", "o/r"}, `learnings export: unexpected argument "x"`, 2},
		{"no repository", []string{"learnings", "export"}, `learnings export: --repo must be owner/name, got ""`, 2},
		{"a bad repository", []string{"learnings", "export", "--repo", "o/r/x"}, `learnings export: --repo must be owner/name, got "o/r/x"`, 2},
		{"no database", []string{"learnings", "export", "--repo", "o/r"},
			"learnings: invalid configuration:\ndatabase.url: required by this command (set DATABASE_URL)", 1},
	})
}
