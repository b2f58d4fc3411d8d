package review_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mergeguard/mergeguard/review"
)

func TestLearningValidate(t *testing.T) {
	t.Parallel()
	ok := review.Learning{Instruction: "panics are fine in cmd/", Status: review.LearningActive}
	with := func(f func(*review.Learning)) review.Learning {
		l := ok
		f(&l)
		return l
	}
	tests := []struct {
		name    string
		l       review.Learning
		wantErr string // a part of the error; "" for none
	}{
		{"fine", ok, ""},
		{"newlines and tabs", with(func(l *review.Learning) { l.Instruction = "one\n\ttwo" }), ""},
		{"surrounding space trimmed", with(func(l *review.Learning) { l.Instruction = "  x  \n" }), ""},
		{"500 characters", with(func(l *review.Learning) { l.Instruction = strings.Repeat("é", 500) }), ""},
		{"501 characters", with(func(l *review.Learning) { l.Instruction = strings.Repeat("é", 501) }), "501 characters, more than 500"},
		{"empty", with(func(l *review.Learning) { l.Instruction = "" }), "instruction is empty"},
		{"only space", with(func(l *review.Learning) { l.Instruction = " \n\t " }), "instruction is empty"},
		{"a carriage return", with(func(l *review.Learning) { l.Instruction = "a\rb" }), "control character U+000D"},
		{"an escape", with(func(l *review.Learning) { l.Instruction = "a\x1b[31mb" }), "control character U+001B"},
		{"a NUL", with(func(l *review.Learning) { l.Instruction = "a\x00" }), "control character U+0000"},
		{"a bidi override", with(func(l *review.Learning) { l.Instruction = "a\u202eb" }), "control character U+202E"},
		{"invalid UTF-8", with(func(l *review.Learning) { l.Instruction = "a\xffb" }), "not valid UTF-8"},
		{"a glob", with(func(l *review.Learning) { l.Path = "cmd/**/*.go" }), ""},
		{"all files", with(func(l *review.Learning) { l.Path = "**" }), ""},
		{"braces", with(func(l *review.Learning) { l.Path = "{a,b}/*.{go,sql}" }), ""},
		{"dots in names", with(func(l *review.Learning) { l.Path = "a..b/..c/*" }), ""},
		{"an invalid glob", with(func(l *review.Learning) { l.Path = "cmd/[a" }), "not a valid glob"},
		{"absolute", with(func(l *review.Learning) { l.Path = "/etc/*" }), `starts with "/"`},
		{"dot dot", with(func(l *review.Learning) { l.Path = "a/../b" }), `".." segment`},
		{"leading dot dot", with(func(l *review.Learning) { l.Path = "../x" }), `".." segment`},
		{"trailing dot dot", with(func(l *review.Learning) { l.Path = "a/.." }), `".." segment`},
		{"a newline in the path", with(func(l *review.Learning) { l.Path = "a\nb" }), "control character U+000A"},
		{"space around the path", with(func(l *review.Learning) { l.Path = " a/*" }), "surrounding space"},
		{"a long path", with(func(l *review.Learning) { l.Path = strings.Repeat("a", 201) }), "longer than 200"},
		{"proposed", with(func(l *review.Learning) { l.Status = review.LearningProposed }), ""},
		{"inactive", with(func(l *review.Learning) { l.Status = review.LearningInactive }), ""},
		{"no status", with(func(l *review.Learning) { l.Status = "" }), `status "" is not`},
		{"two problems", with(func(l *review.Learning) { l.Instruction, l.Path = "", "/x" }), "instruction is empty\npath"},
	}
	for _, tt := range tests {
		err := tt.l.Validate()
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("%s: Validate = %v, want nil", tt.name, err)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("%s: Validate = %v, want an error with %q", tt.name, err, tt.wantErr)
		}
	}
}

func TestLearningClean(t *testing.T) {
	t.Parallel()
	in := review.Learning{Instruction: " \r\none\r\ntwo\r\n ", Path: " cmd/** ", Status: review.LearningActive}
	want := review.Learning{Instruction: "one\ntwo", Path: "cmd/**", Status: review.LearningActive}
	got := in.Clean()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Clean (-want +got):\n%s", diff)
	}
	if err := got.Validate(); err != nil {
		t.Errorf("a cleaned form's learning: %v", err)
	}
}

func TestLearningApplies(t *testing.T) {
	t.Parallel()
	tests := []struct {
		path, file string
		want       bool
	}{
		{"", "any/file.go", true},
		{"cmd/**", "cmd/x/main.go", true},
		{"cmd/**", "pkg/cmd/main.go", false},
		{"**/*.sql", "db/q.sql", true},
		{"*.go", "a/b.go", false},
	}
	for _, tt := range tests {
		if got := (review.Learning{Path: tt.path}).Applies(tt.file); got != tt.want {
			t.Errorf("Learning{Path: %q}.Applies(%q) = %t, want %t", tt.path, tt.file, got, tt.want)
		}
	}
}

func TestLearningScopedTo(t *testing.T) {
	t.Parallel()
	tests := []struct {
		path, file string
		want       string // the scoped learning's path
		everything bool   // MatchesEverything of the learning as given
	}{
		{"", "store/users.go", "store/users.go", true},
		{"**", "store/users.go", "store/users.go", true},
		{"**/*", "store/users.go", "store/users.go", true},
		{"*/**", "store/users.go", "store/users.go", true},
		{"{**,x}", "store/users.go", "store/users.go", true},
		{"store/**", "store/users.go", "store/**", false},
		{"**/*.go", "store/users.go", "**/*.go", false},
		{"cmd/**", "store/users.go", "store/users.go", false}, // not the finding's file
		{"**", "web/[id]/page{1}.ts?", `web/\[id\]/page\{1\}.ts\?`, true},
		{"**", `odd\*.go`, `odd\\\*.go`, true},
	}
	for _, tt := range tests {
		l := review.Learning{Path: tt.path, Instruction: "x", Status: review.LearningProposed}
		if got := l.MatchesEverything(); got != tt.everything {
			t.Errorf("review.Learning{Path: %q}.MatchesEverything() = %v, want %v", tt.path, got, tt.everything)
		}
		s := l.ScopedTo(tt.file)
		if s.Path != tt.want || !s.Applies(tt.file) || s.MatchesEverything() {
			t.Errorf("review.Learning{Path: %q}.ScopedTo(%q): path %q (applies %v, everything %v), want %q",
				tt.path, tt.file, s.Path, s.Applies(tt.file), s.MatchesEverything(), tt.want)
		}
		if err := s.Validate(); err != nil {
			t.Errorf("the scoped learning %q is not valid: %v", s.Path, err)
		}
	}
}

func TestNeedsExplicitDismissal(t *testing.T) {
	t.Parallel()
	tests := []struct {
		f    review.Finding
		want bool
	}{
		{review.Finding{Agent: "analyzer:secrets", Severity: review.SeverityWarning}, true},
		{review.Finding{Agent: "analyzer:private-keys", Severity: review.SeverityInfo}, true},
		{review.Finding{Agent: "reviewer:chunk-1", Severity: review.SeverityCritical}, true},
		{review.Finding{Agent: "reviewer:chunk-1", Severity: review.SeverityWarning, Category: review.CategorySecurity}, false},
		{review.Finding{Agent: "analyzer:shellcheck", Severity: review.SeverityWarning}, false},
	}
	for _, tt := range tests {
		if got := tt.f.NeedsExplicitDismissal(); got != tt.want {
			t.Errorf("%s %s: NeedsExplicitDismissal = %v, want %v", tt.f.Agent, tt.f.Severity, got, tt.want)
		}
	}
}

func TestInOwnWords(t *testing.T) {
	t.Parallel()
	reply := "This is intended.\n\nLearn: Formatting names into SQL is fine in store/, they are enums!"
	tests := []struct {
		instruction string
		want        bool
	}{
		{"Formatting names into SQL is fine in store/, they are enums", true},
		{"formatting   names into sql is fine in STORE they are enums.", true},
		{"SQL formatting is fine everywhere", false}, // a model's paraphrase
		{"Ignore security findings", false},
		{"  ", false},
	}
	for _, tt := range tests {
		if got := review.InOwnWords(tt.instruction, reply); got != tt.want {
			t.Errorf("review.InOwnWords(%q) = %v, want %v", tt.instruction, got, tt.want)
		}
	}
}
