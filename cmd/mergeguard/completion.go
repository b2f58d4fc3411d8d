package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/mergeguard/mergeguard/config"
)

// flagCollector is the output of a FlagSet whose flags are wanted rather
// than its help: newFlagSet's usage records them into it.
type flagCollector struct {
	io.Writer
	flags []*flag.Flag
}

// completionCommand is what a shell completes after a command's name.
type completionCommand struct {
	command
	flags []*flag.Flag
}

// runCompletion is `mergeguard completion bash|zsh|fish`: it prints the
// shell's completion script for the commands, their actions and flags, and
// the values of --format and --fail-level.
func runCompletion(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("completion", stderr)
	rest, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(rest) != 1 {
		return usageError{errors.New("completion: name one shell: bash, zsh or fish")}
	}
	write, ok := map[string]func(io.Writer, []completionCommand){"bash": bashCompletion, "zsh": zshCompletion, "fish": fishCompletion}[rest[0]]
	if !ok {
		return usageError{fmt.Errorf("completion: unknown shell %q%s (want bash, zsh or fish)", rest[0], didYouMean(rest[0], []string{"bash", "zsh", "fish"}))}
	}
	write(stdout, completionCommands())
	return nil
}

// completionCommands returns each command with its flags, asked of the
// command itself: its -h, answered into a flagCollector.
func completionCommands() []completionCommand {
	var out []completionCommand
	for _, c := range commands() {
		cc := completionCommand{command: c}
		if c.name != "help" && c.name != "completion" {
			col := &flagCollector{Writer: io.Discard}
			_ = run(context.Background(), []string{c.name, "-h"}, func(string) string { return "" }, io.Discard, col)
			cc.flags = col.flags
		}
		out = append(out, cc)
	}
	return out
}

// flagValues are the values completed after a flag, by its name.
func flagValues() map[string][]string {
	return map[string][]string{
		"format":     slices.Sorted(maps.Keys(formats(""))),
		"fail-level": append(config.SeverityNames(), "none"),
	}
}

// commandFlagValues are the values completed after a flag of one command
// that takes other values than flagValues says, by command and flag name.
func commandFlagValues() map[string]map[string][]string {
	return map[string]map[string][]string{
		"quality": {"format": slices.Sorted(maps.Keys(qualityFormats))},
	}
}

// valuesOf is what is completed after command's flag name, and whether
// anything is.
func valuesOf(command, name string) ([]string, bool) {
	if vs, ok := commandFlagValues()[command][name]; ok {
		return vs, true
	}
	vs, ok := flagValues()[name]
	return vs, ok
}

func bashCompletion(w io.Writer, cmds []completionCommand) {
	fmt.Fprintln(w, "# bash completion for mergeguard: source <(mergeguard completion bash)")
	fmt.Fprintln(w, "_mergeguard() {")
	fmt.Fprintln(w, `  local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}" words=""`)
	fmt.Fprintln(w, `  if [ "$COMP_CWORD" -eq 1 ]; then`)
	fmt.Fprintf(w, "    mapfile -t COMPREPLY < <(compgen -W %q -- \"$cur\")\n    return\n  fi\n", strings.Join(commandNames(), " "))
	fmt.Fprintln(w, `  case "${COMP_WORDS[1]}:$prev" in`)
	for _, c := range slices.Sorted(maps.Keys(commandFlagValues())) {
		for _, name := range slices.Sorted(maps.Keys(commandFlagValues()[c])) {
			fmt.Fprintf(w, "  %s:-%s|%s:--%s) words=%q ;;\n", c, name, c, name, strings.Join(commandFlagValues()[c][name], " "))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(flagValues())) {
		fmt.Fprintf(w, "  *:-%s|*:--%s) words=%q ;;\n", name, name, strings.Join(flagValues()[name], " "))
	}
	fmt.Fprintln(w, `  *) case "${COMP_WORDS[1]}" in`)
	for _, c := range cmds {
		fmt.Fprintf(w, "    %s) words=%q ;;\n", c.name, strings.Join(completionWords(c), " "))
	}
	fmt.Fprintln(w, "    esac ;;\n  esac")
	fmt.Fprintln(w, `  mapfile -t COMPREPLY < <(compgen -W "$words" -- "$cur")`)
	fmt.Fprintln(w, "}\ncomplete -o default -F _mergeguard mergeguard")
}

// completionWords are a command's actions and its flags as --name.
func completionWords(c completionCommand) []string {
	words := slices.Clone(c.actions)
	for _, f := range c.flags {
		words = append(words, "--"+f.Name)
	}
	return words
}

func zshCompletion(w io.Writer, cmds []completionCommand) {
	fmt.Fprintln(w, "#compdef mergeguard\n# zsh completion for mergeguard: mergeguard completion zsh > \"${fpath[1]}/_mergeguard\"")
	fmt.Fprintln(w, "_mergeguard() {\n  local -a cmds opts") // words is zsh's own
	fmt.Fprint(w, "  cmds=(")
	for _, c := range cmds {
		fmt.Fprintf(w, " %s", shellQuote(c.name+":"+c.summary))
	}
	fmt.Fprintln(w, " )")
	fmt.Fprintln(w, "  if (( CURRENT == 2 )); then _describe command cmds; return; fi")
	fmt.Fprintln(w, "  case $words[2]:$words[CURRENT-1] in")
	for _, c := range slices.Sorted(maps.Keys(commandFlagValues())) {
		for _, name := range slices.Sorted(maps.Keys(commandFlagValues()[c])) {
			fmt.Fprintf(w, "    %s:-%s|%s:--%s) compadd -- %s; return ;;\n", c, name, c, name, strings.Join(commandFlagValues()[c][name], " "))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(flagValues())) {
		fmt.Fprintf(w, "    *:-%s|*:--%s) compadd -- %s; return ;;\n", name, name, strings.Join(flagValues()[name], " "))
	}
	fmt.Fprintln(w, "  esac\n  case $words[2] in")
	for _, c := range cmds {
		fmt.Fprintf(w, "    %s) opts=(%s) ;;\n", c.name, strings.Join(completionWords(c), " "))
	}
	fmt.Fprintln(w, "  esac\n  compadd -- $opts\n  _files\n}\ncompdef _mergeguard mergeguard")
}

func fishCompletion(w io.Writer, cmds []completionCommand) {
	fmt.Fprintln(w, "# fish completion for mergeguard: mergeguard completion fish > ~/.config/fish/completions/mergeguard.fish")
	for _, c := range cmds {
		fmt.Fprintf(w, "complete -c mergeguard -f -n __fish_use_subcommand -a %s -d %s\n", c.name, fishQuote(c.summary))
		cond := fishQuote("__fish_seen_subcommand_from " + c.name)
		for _, a := range c.actions {
			fmt.Fprintf(w, "complete -c mergeguard -f -n %s -a %s\n", cond, a)
		}
		for _, f := range c.flags {
			_, usage := flag.UnquoteUsage(f)
			line := fmt.Sprintf("complete -c mergeguard -n %s -l %s -d %s", cond, f.Name, fishQuote(firstLine(usage)))
			if vs, ok := valuesOf(c.name, f.Name); ok {
				line += " -x -a " + fishQuote(strings.Join(vs, " "))
			}
			fmt.Fprintln(w, line)
		}
	}
}

// firstLine is s up to its first line break, at most 80 bytes.
func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 80 {
		s = strings.ToValidUTF8(s[:77], "") + "..."
	}
	return s
}

// fishQuote quotes s for fish: in single quotes, where a backslash
// escapes a single quote or a backslash.
func fishQuote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, "'", `\'`).Replace(s) + "'"
}
