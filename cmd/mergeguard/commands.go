package main

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/agnivade/levenshtein"
)

// command describes one of mergeguard's commands for its help, the
// suggestions for a mistyped name and the shell completions.
type command struct {
	name string
	// usage is the synopsis after "mergeguard ".
	usage string
	// summary is the one line of `mergeguard help`.
	summary string
	// about is the paragraph of `mergeguard NAME -h`.
	about    string
	examples []string
	// actions are the words that may follow the name (migrate up...).
	actions []string
}

// commands lists mergeguard's commands, in the order help shows them.
func commands() []command {
	return []command{
		{name: "review", usage: "review [flags]", summary: "review a change here, or a GitHub pull request",
			about: "Reviews commits (the merge-base with the default branch to HEAD by default), the working tree's uncommitted or staged changes, " +
				"a diff file, or a GitHub pull request (--pr, with GITHUB_TOKEN; --post posts the review), and prints the verdict. " +
				"No server and no database are needed. Without a model (OPENAI_API_KEY unset) the built-in analyzers review alone: " +
				"secrets (gitleaks' rules), private keys, conflict markers, debugger statements, focused tests, committed .env files; " +
				"and the linters: actionlint on workflows, go vet's passes on Go, shellcheck on shell scripts, BuildKit's and hadolint's checks on Dockerfiles.",
			examples: []string{
				"mergeguard review                                   # this branch against the default branch",
				"mergeguard review --staged --format line --fail-level warning",
				"git diff origin/main...HEAD | mergeguard review --diff - --format json",
				"mergeguard review --base origin/main --format sarif > mergeguard.sarif",
				"GITHUB_TOKEN=ghp_... mergeguard review --pr https://github.com/acme/shop/pull/42 --post",
			}},
		{name: "serve", usage: "serve [--config FILE]", summary: "run the GitHub App: webhooks, API, web UI and review workers",
			about: "Serves MergeGuard: GitHub's webhooks, the review API and its live event stream, the web UI, /setup and the review workers. " +
				"It needs DATABASE_URL; it applies the database migrations at start and prints where to open the web UI once it listens.",
			examples: []string{"DATABASE_URL=postgres://localhost/mergeguard mergeguard serve", "mergeguard serve --config /etc/mergeguard.yml"}},
		{name: "migrate", usage: "migrate [--config FILE] up|down N|version", summary: "apply, undo or show the database migrations",
			about:    "Applies the pending database migrations (up), undoes the last N (down N), or prints the schema version (version).",
			examples: []string{"mergeguard migrate up", "mergeguard migrate down 1", "mergeguard migrate version"},
			actions:  []string{"up", "down", "version"}},
		{name: "learnings", usage: "learnings export --repo OWNER/NAME [--config FILE]", summary: "print a repository's learnings as .mergeguard.yml",
			about:    "Prints a repository's active learnings as .mergeguard.yml path_instructions, to keep them in the repository.",
			examples: []string{"mergeguard learnings export --repo acme/shop >> .mergeguard.yml"},
			actions:  []string{"export"}},
		{name: "quality", usage: "quality [--repo OWNER/NAME] [--since DATE] [--format table|json|csv] [--config FILE]",
			summary: "print how MergeGuard's findings fared on merged pull requests",
			about: "Prints the addressed rate of the findings of merged pull requests, with its 95% interval, by repository, severity, category, " +
				"source and week, and findings and cost per pull request (docs/quality.md); needs DATABASE_URL.",
			examples: []string{"mergeguard quality", "mergeguard quality --repo acme/shop --since 2026-09-01 --format csv > quality.csv"}},
		{name: "eval", usage: "eval [flags] DATASET", summary: "review a dataset of cases and score the findings",
			about: "Reviews each case of a dataset with golden comments and scores the findings (precision, recall, F1), " +
				"or measures the context the prompts hold (--context-only), or the analyzers alone (--analyzers-only); " +
				"with --real DIR --mirrors DIR, reviews the real-world set without a model and scores it against the tools' own findings and a go/types reference.",
			examples: []string{"mergeguard eval --analyzers-only testdata/eval", "mergeguard eval --context-only testdata/eval", "mergeguard eval --out report.json testdata/eval",
				"mergeguard eval --real testdata/eval-real --mirrors mirrors"}},
		{name: "app", usage: "app [--config FILE] [--one-line] export", summary: "print the GitHub App created at /setup as environment lines",
			about:    "Prints the GitHub App that /setup created and stored as environment lines, for a secret manager (needs DATABASE_URL and MERGEGUARD_SECRET_KEY).",
			examples: []string{"mergeguard app export > mergeguard-app.env", "mergeguard app export --one-line"},
			actions:  []string{"export"}},
		{name: "token", usage: "token [--bare] [--config FILE]", summary: "print the web UI's sign-in link with the API token",
			about:    "Prints the web UI's sign-in link with the API token: MERGEGUARD_API_TOKEN, or the one serve generated and keeps in the database.",
			examples: []string{"mergeguard token", "curl -H \"Authorization: Bearer $(mergeguard token --bare)\" http://localhost:8080/api/review/ID"}},
		{name: "completion", usage: "completion bash|zsh|fish", summary: "print a shell completion script",
			about: "Prints the completion script of a shell: the commands, their actions and their flags.",
			examples: []string{"source <(mergeguard completion bash)", "mergeguard completion zsh > \"${fpath[1]}/_mergeguard\"",
				"mergeguard completion fish > ~/.config/fish/completions/mergeguard.fish"},
			actions: []string{"bash", "zsh", "fish"}},
		{name: "version", usage: "version", summary: "print the version", about: "Prints the version, the commit and the Go version.",
			examples: []string{"mergeguard version"}},
		{name: "help", usage: "help", summary: "print this help", about: "Prints the commands and the environment variables.",
			examples: []string{"mergeguard help"}},
	}
}

// lookup returns the command named name.
func lookup(name string) (command, bool) {
	i := slices.IndexFunc(commands(), func(c command) bool { return c.name == name })
	if i < 0 {
		return command{}, false
	}
	return commands()[i], true
}

// printHelp writes a command's help: what it does, its synopsis, its flags
// and examples.
func printHelp(w io.Writer, c command, fs *flag.FlagSet) {
	fmt.Fprintf(w, "%s\n\nUsage:\n  mergeguard %s\n", wrap("mergeguard "+c.name+": "+c.about, 78), c.usage)
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	if n > 0 {
		fmt.Fprintln(w, "\nFlags (-flag or --flag):")
		fs.SetOutput(w)
		fs.PrintDefaults()
	}
	if len(c.examples) > 0 {
		fmt.Fprintln(w, "\nExamples:")
		for _, e := range c.examples {
			fmt.Fprintln(w, "  "+e)
		}
	}
}

// wrap breaks text into lines of at most width bytes, at spaces; the
// lines after the first are indented by two spaces.
func wrap(text string, width int) string {
	var b strings.Builder
	line := 0
	for i, word := range strings.Fields(text) {
		if i > 0 && line+1+len(word) > width {
			b.WriteString("\n  ")
			line = 2
		} else if i > 0 {
			b.WriteByte(' ')
			line++
		}
		b.WriteString(word)
		line += len(word)
	}
	return b.String()
}

// suggest returns the candidate closest to word when it is close enough to
// be a typo (a Levenshtein distance of at most a third of its length plus
// one), else the first candidate word is a prefix of (three bytes or
// more); "" when there is none.
func suggest(word string, candidates []string) string {
	best, bound := "", len(word)/3+2 // distances below bound are typos
	for _, c := range candidates {
		if d := levenshtein.ComputeDistance(word, c); d < bound {
			best, bound = c, d
		}
	}
	if best != "" || len(word) < 3 {
		return best
	}
	for _, c := range candidates {
		if strings.HasPrefix(c, word) {
			return c
		}
	}
	return ""
}

// didYouMean is the hint after a mistyped word, "" when nothing is close.
func didYouMean(word string, candidates []string) string {
	if s := suggest(word, candidates); s != "" {
		return fmt.Sprintf(" (did you mean %q?)", s)
	}
	return ""
}

// commandNames lists the commands' names.
func commandNames() []string {
	var out []string
	for _, c := range commands() {
		out = append(out, c.name)
	}
	return out
}

// flagMistake is err, a FlagSet's parse error, with a suggestion when it
// names an unknown flag close to one of fs's, and where the flags are
// listed.
func flagMistake(fs *flag.FlagSet, err error) error {
	name, unknown := strings.CutPrefix(err.Error(), "flag provided but not defined: -")
	hint := ""
	if unknown {
		var flags []string
		fs.VisitAll(func(f *flag.Flag) { flags = append(flags, f.Name) })
		if s := suggest(strings.TrimPrefix(name, "-"), flags); s != "" {
			hint = fmt.Sprintf(" (did you mean --%s?)", s)
		}
	}
	return fmt.Errorf("%w%s; \"%s -h\" lists the flags", err, hint, fs.Name())
}
