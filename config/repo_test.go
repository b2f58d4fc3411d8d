package config_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/internal/allocs"
)

func TestParseRepo(t *testing.T) {
	tests := []struct {
		name string
		data string
		want func(r *config.Repo)
	}{
		{
			name: "empty file keeps the defaults",
			data: "",
			want: func(*config.Repo) {},
		},
		{
			name: "comments only",
			data: "# nothing yet\n",
			want: func(*config.Repo) {},
		},
		{
			name: "every key",
			data: `enabled: true
auto_review:
  enabled: false
  drafts: true
  base_branches: [main, "release/**"]
  ignore_title_keywords: [WIP]
  skip_labels: [no-review]
  bots: true
path_filters:
  - "src/**"
  - "!**/*.lock"
path_instructions:
  - path: "**/*.sql"
    instructions: Check queries for injection.
instructions: Prefer small functions.
convention_files: [docs/STYLE.md]
focus_areas: [security, bug]
severity_threshold: warning
include_style: true
allow_approve: true
blocking_severity: warning
max_files: 0
language: de
incremental: false
check:
  blocking_conclusion: neutral
chat:
  max_answers_per_thread: 2
learnings:
  auto_activate: true
secrets:
  removed: warn
memory:
  suppress_after: 5
`,
			want: func(r *config.Repo) {
				*r = config.Repo{
					Enabled: true,
					AutoReview: config.AutoReview{
						Drafts:              true,
						BaseBranches:        []string{"main", "release/**"},
						IgnoreTitleKeywords: []string{"WIP"},
						SkipLabels:          []string{"no-review"},
						Bots:                true,
					},
					PathFilters:       []string{"src/**", "!**/*.lock"},
					PathInstructions:  []config.PathInstruction{{Path: "**/*.sql", Instructions: "Check queries for injection."}},
					Instructions:      "Prefer small functions.",
					ConventionFiles:   []string{"docs/STYLE.md"},
					FocusAreas:        []string{"security", "bug"},
					SeverityThreshold: "warning",
					IncludeStyle:      true,
					AllowApprove:      true,
					BlockingSeverity:  "warning",
					MaxFiles:          0,
					Language:          "de",
					Check:             config.Check{BlockingConclusion: "neutral"},
					Chat:              config.Chat{MaxAnswersPerThread: 2},
					Learnings:         config.Learnings{AutoActivate: true},
					Secrets:           config.Secrets{Removed: "warn"},
					Memory:            config.RepoMemory{SuppressAfter: 5},
				}
			},
		},
		{
			name: "partial nested mapping keeps sibling defaults",
			data: "auto_review:\n  drafts: true\n",
			want: func(r *config.Repo) { r.AutoReview.Drafts = true },
		},
		{
			name: "null value keeps the default",
			data: "severity_threshold:\n",
			want: func(*config.Repo) {},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := config.ParseRepo([]byte(tt.data))
			if err != nil {
				t.Fatal(err)
			}
			want := config.DefaultRepo()
			tt.want(&want)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("ParseRepo (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseRepoErrors(t *testing.T) {
	tests := []struct {
		name string
		data string
		want []string
	}{
		{
			name: "unknown keys",
			data: "enabled: true\nauto_reveiw:\n  drafts: true\nauto_review:\n  darfts: true\n",
			want: []string{
				`.mergeguard.yml:2: unknown key "auto_reveiw"`,
				`.mergeguard.yml:5: unknown key "auto_review.darfts"`,
			},
		},
		{
			name: "unknown key inside a list item",
			data: "path_instructions:\n  - path: a\n    instruction: b\n",
			want: []string{`.mergeguard.yml:3: unknown key "path_instructions[0].instruction"`},
		},
		{
			name: "invalid values",
			data: `enabled: true
focus_areas: [security, speed]
severity_threshold: urgent
blocking_severity: Critical
path_filters:
  - "src/[abc"
  - "!"
path_instructions:
  - path: "**/*.go"
    instructions: ""
auto_review:
  base_branches: ["release/{a"]
  ignore_title_keywords: [""]
  skip_labels: [" "]
convention_files: [../secrets.txt, /etc/passwd, docs/../../x]
max_files: -1
`,
			want: []string{
				`.mergeguard.yml:3: severity_threshold: "urgent" is not one of critical, warning, info, style`,
				`.mergeguard.yml:4: blocking_severity: "Critical" is not one of critical, warning, info, style`,
				`.mergeguard.yml:2: focus_areas[1]: "speed" is not one of security, bug, performance, quality`,
				`.mergeguard.yml:6: path_filters[0]: "src/[abc" is not a valid glob`,
				`.mergeguard.yml:7: path_filters[1]: must not be an empty glob`,
				`.mergeguard.yml:10: path_instructions[0].instructions: must not be empty`,
				`.mergeguard.yml:12: auto_review.base_branches[0]: "release/{a" is not a valid glob`,
				`.mergeguard.yml:13: auto_review.ignore_title_keywords[0]: must not be empty (it would match every title)`,
				`.mergeguard.yml:14: auto_review.skip_labels[0]: must not be empty`,
				`.mergeguard.yml:15: convention_files[0]: "../secrets.txt" is not a relative path inside the repository`,
				`.mergeguard.yml:15: convention_files[1]: "/etc/passwd" is not a relative path inside the repository`,
				`.mergeguard.yml:15: convention_files[2]: "docs/../../x" is not a relative path inside the repository`,
				`.mergeguard.yml:16: max_files: must not be negative (0 means no limit), got -1`,
			},
		},
		{
			name: "wrong types",
			data: "enabled: yes\nmax_files: many\nfocus_areas: security\npath_instructions:\n  - just a string\n",
			want: []string{
				`.mergeguard.yml:1: enabled: "yes" is not true or false`,
				`.mergeguard.yml:2: max_files: "many" is not an integer`,
				`.mergeguard.yml:3: focus_areas: must be a list, not a single value`,
				`.mergeguard.yml:5: path_instructions[0]: must be a mapping of keys to values, not a single value`,
			},
		},
		{
			name: "secrets.removed",
			data: "enabled: true\nsecrets:\n  removed: ignore\n",
			want: []string{`.mergeguard.yml:3: secrets.removed: "ignore" is not one of block, warn`},
		},
		{
			name: "memory.suppress_after",
			data: "memory:\n  suppress_after: -1\n",
			want: []string{`.mergeguard.yml:2: memory.suppress_after: must be between 0 and 100 (0: never suppress), got -1`},
		},
		{
			name: "integer overflow",
			data: "max_files: 99999999999999999999\n",
			want: []string{`.mergeguard.yml:1: max_files: "99999999999999999999" is not an integer`},
		},
		{
			name: "not a mapping",
			data: "just text\n",
			want: []string{`.mergeguard.yml:1: must be a mapping of keys to values, not a single value`},
		},
		{
			name: "syntax error",
			data: "enabled: true\n  bad indent: x\n",
			want: []string{`.mergeguard.yml:2: mapping values are not allowed in this context`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := config.ParseRepo([]byte(tt.data))
			if diff := cmp.Diff(tt.want, errLines(err)); diff != "" {
				t.Errorf("ParseRepo error (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(config.DefaultRepo(), got); diff != "" {
				t.Errorf("ParseRepo with an error must return DefaultRepo (-want +got):\n%s", diff)
			}
			var le *config.LineError
			if err != nil && !errors.As(err, &le) {
				t.Errorf("error %v holds no *LineError", err)
			}
		})
	}
}

func TestParseRepoOver(t *testing.T) {
	base := config.DefaultRepo()
	base.FocusAreas = []string{"security"}
	base.MaxFiles = 50
	got, err := config.ParseRepoOver(base, []byte("max_files: 10\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := base
	want.MaxFiles = 10
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ParseRepoOver (-want +got):\n%s", diff)
	}
}

func TestReviewable(t *testing.T) {
	tests := []struct {
		name    string
		filters []string
		yes     []string
		no      []string
	}{
		{
			name: "no filters",
			yes:  []string{"main.go", "a/b/c.lock"},
		},
		{
			name:    "excludes only",
			filters: []string{"!**/*.lock", "!vendor/**", "!*.md"},
			yes:     []string{"main.go", "docs/guide.md", "vendorx/a.go"},
			no:      []string{"go.sum.lock", "a/b/yarn.lock", "vendor/x/y.go", "README.md"},
		},
		{
			name:    "includes only",
			filters: []string{"src/**", "cmd/*/main.go"},
			yes:     []string{"src/a.go", "src/x/y/z.ts", "cmd/mergeguard/main.go"},
			no:      []string{"README.md", "cmd/mergeguard/run.go", "srcs/a.go"},
		},
		{
			name:    "exclude beats include",
			filters: []string{"src/**", "!src/**/*_test.go"},
			yes:     []string{"src/a.go"},
			no:      []string{"src/a_test.go", "src/x/b_test.go", "lib/a.go"},
		},
		{
			name:    "alternatives",
			filters: []string{"**/*.{go,ts}"},
			yes:     []string{"a.go", "x/y.ts"},
			no:      []string{"x/y.js"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := config.DefaultRepo()
			r.PathFilters = tt.filters
			for _, p := range tt.yes {
				if !r.Reviewable(p) {
					t.Errorf("Reviewable(%q) = false, want true", p)
				}
			}
			for _, p := range tt.no {
				if r.Reviewable(p) {
					t.Errorf("Reviewable(%q) = true, want false", p)
				}
			}
		})
	}
}

func TestInstructionsFor(t *testing.T) {
	r := config.DefaultRepo()
	r.Instructions = "repository-wide"
	r.PathInstructions = []config.PathInstruction{
		{Path: "**/*.sql", Instructions: "check injection"},
		{Path: "migrations/**", Instructions: "migrations are append-only"},
		{Path: "**/*.go", Instructions: "wrap errors"},
	}
	tests := map[string][]string{
		"migrations/001.sql": {"check injection", "migrations are append-only"},
		"db/q.sql":           {"check injection"},
		"cmd/main.go":        {"wrap errors"},
		"README.md":          nil,
	}
	for path, want := range tests {
		if diff := cmp.Diff(want, r.InstructionsFor(path)); diff != "" {
			t.Errorf("InstructionsFor(%q) (-want +got):\n%s", path, diff)
		}
	}
}

func FuzzParseRepo(f *testing.F) {
	seeds, err := filepath.Glob(filepath.Join("testdata", "repo", "*.yml"))
	if err != nil {
		f.Fatal(err)
	}
	if len(seeds) == 0 {
		f.Fatal("no seed files in testdata/repo")
	}
	for _, s := range seeds {
		data, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("a: &x [*x]\n"))
	f.Add([]byte("a: &a [x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\ng: [*f,*f,*f,*f,*f,*f,*f,*f,*f]\n"))
	f.Add([]byte("path_filters: [\"{{{{\"]\n"))
	// A document may allocate far more than its size (YAML nodes with their
	// positions), never out of proportion: yaml.v3 refuses alias bombs.
	bound := allocs.Bound{PerByte: 512, Fixed: 4 << 20}
	f.Fuzz(func(t *testing.T, data []byte) {
		var (
			r   config.Repo
			err error
		)
		if merr := bound.Check(len(data), func() { r, err = config.ParseRepo(data) }); merr != nil {
			t.Fatalf("ParseRepo: %v", merr)
		}
		if err != nil {
			return
		}
		// A configuration that parsed must be usable.
		r.Reviewable("a/b.go")
		r.InstructionsFor("a/b.go")
	})
}

// BenchmarkParseRepo measures parsing a .mergeguard.yml that sets every key,
// as the planner does once per review.
func BenchmarkParseRepo(b *testing.B) {
	data, err := os.ReadFile(filepath.Join("testdata", "repo", "full.yml"))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := config.ParseRepo(data); err != nil {
			b.Fatal(err)
		}
	}
}
