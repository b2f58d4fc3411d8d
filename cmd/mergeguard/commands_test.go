package main

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSuggest(t *testing.T) {
	t.Parallel()
	names := commandNames()
	tests := []struct{ word, want string }{
		{"reveiw", "review"},
		{"reviw", "review"},
		{"serv", "serve"},
		{"migarte", "migrate"},
		{"learning", "learnings"},
		{"comp", "completion"},
		{"deploy", ""},
		{"x", ""},
		{"rm", ""},
	}
	for _, tt := range tests {
		if got := suggest(tt.word, names); got != tt.want {
			t.Errorf("suggest(%q) = %q, want %q", tt.word, got, tt.want)
		}
	}
}

// TestMistakesAreOneLine: an unknown command or flag is one line that says
// what was meant and where help is, not the whole help.
func TestMistakesAreOneLine(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"reveiw"}, `unknown command "reveiw" (did you mean "review"?); "mergeguard help" lists the commands`},
		{[]string{"deploy"}, `unknown command "deploy"; "mergeguard help" lists the commands`},
		{[]string{"review", "--fromat", "json"}, `flag provided but not defined: -fromat (did you mean --format?); "mergeguard review -h" lists the flags`},
		{[]string{"review", "--fail-levl", "x"}, `flag provided but not defined: -fail-levl (did you mean --fail-level?); "mergeguard review -h" lists the flags`},
		{[]string{"migrate", "upp"}, `migrate: unknown action "upp" (did you mean "up"?) (want up, down N or version)`},
		{[]string{"completion", "bsh"}, `completion: unknown shell "bsh" (did you mean "bash"?) (want bash, zsh or fish)`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			stdout, stderr, err := runCmd(t, env(nil), tt.args...)
			if exitCode(err) != 2 || err.Error() != tt.want {
				t.Errorf("err = %v (exit %d), want %q (exit 2)", err, exitCode(err), tt.want)
			}
			if stdout != "" || stderr != "" {
				t.Errorf("printed more than the error:\nstdout %q\nstderr %q", stdout, stderr)
			}
		})
	}
}

// TestCommandHelp: every command's -h says what it does, its synopsis,
// its flags and examples, and exits 0.
func TestCommandHelp(t *testing.T) {
	t.Parallel()
	for _, c := range commands() {
		if c.name == "help" {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			_, stderr, err := runCmd(t, env(nil), c.name, "-h")
			if err != nil {
				t.Fatalf("%s -h: %v", c.name, err)
			}
			for _, want := range []string{"mergeguard " + c.name + ": ", "Usage:\n  mergeguard " + c.usage, "Examples:\n  " + c.examples[0]} {
				if !strings.Contains(stderr, want) {
					t.Errorf("%s -h lacks %q:\n%s", c.name, want, stderr)
				}
			}
			if c.name == "review" && !strings.Contains(stderr, "  -fail-level severity") {
				t.Errorf("review -h lists no flags:\n%s", stderr)
			}
		})
	}
}

// TestCompletionBash sources the bash script and completes as bash would.
func TestCompletionBash(t *testing.T) {
	t.Parallel()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash not installed")
	}
	script, _, err := runCmd(t, env(nil), "completion", "bash")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		words []string // the last is completed
		want  string
	}{
		{[]string{"mergeguard", "rev"}, "review"},
		{[]string{"mergeguard", "review", "--fail-l"}, "--fail-level"},
		{[]string{"mergeguard", "review", "--format", "s"}, "sarif"},
		{[]string{"mergeguard", "review", "--fail-level", "c"}, "critical"},
		{[]string{"mergeguard", "quality", "--format", "c"}, "csv"},
		{[]string{"mergeguard", "quality", "--format", "t"}, "table"},
		{[]string{"mergeguard", "migrate", "v"}, "version"},
		{[]string{"mergeguard", "completion", "f"}, "fish"},
		{[]string{"mergeguard", "eval", "--ana"}, "--analyzers-only"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.words, " "), func(t *testing.T) {
			cmd := exec.CommandContext(t.Context(), bash, "-c", `eval "$SCRIPT"; COMP_WORDS=(`+strings.Join(tt.words, " ")+`); COMP_CWORD=`+
				string(rune('0'+len(tt.words)-1))+`; _mergeguard; printf '%s\n' "${COMPREPLY[@]}"`)
			cmd.Env = []string{"SCRIPT=" + script}
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("bash: %v\n%s", err, out)
			}
			if diff := cmp.Diff([]string{tt.want}, strings.Fields(string(out))); diff != "" {
				t.Errorf("completions (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCompletionScripts: each shell's script names every command and the
// review command's flags; zsh's and fish's parse when the shell is here.
func TestCompletionScripts(t *testing.T) {
	t.Parallel()
	for _, shell := range []string{"bash", "zsh", "fish"} {
		t.Run(shell, func(t *testing.T) {
			script, _, err := runCmd(t, env(nil), "completion", shell)
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range append(commandNames(), "fail-on-degraded", "analyzers-only") {
				if !strings.Contains(script, want) {
					t.Errorf("the %s script lacks %q", shell, want)
				}
			}
			if path, err := exec.LookPath(shell); err == nil {
				check := map[string][]string{"bash": {"-n"}, "zsh": {"-n"}, "fish": {"--no-execute"}}[shell]
				cmd := exec.CommandContext(t.Context(), path, append(check, "/dev/stdin")...)
				cmd.Stdin = strings.NewReader(script)
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Errorf("%s does not parse its script: %v\n%s", shell, err, out)
				}
			}
		})
	}
}
