package github

import (
	"strings"
)

// Command names understood in pull-request comments.
const (
	CommandRerun   = "rerun"   // full review of the current head
	CommandReview  = "review"  // same as rerun
	CommandHelp    = "help"    // reply with HelpText
	CommandPause   = "pause"   // stop automatic reviews on the pull request
	CommandResume  = "resume"  // restart automatic reviews
	CommandUnknown = "unknown" // an unknown subcommand; answer with HelpText
)

// commandPrefix starts a command line.
const commandPrefix = "/mergeguard"

// Command is a /mergeguard command found in a comment.
type Command struct {
	// Name is one of the Command* constants.
	Name string
	// Args are the words after the subcommand, as written.
	Args []string
	// Raw is the subcommand as written (for an unknown one, to quote it).
	Raw string
}

// HelpText is the reply to /mergeguard help and to unknown commands.
const HelpText = "MergeGuard commands (people with write access to the repository only):\n\n" +
	"| command | what it does |\n" +
	"|---|---|\n" +
	"| `/mergeguard review` | review the current head of this pull request |\n" +
	"| `/mergeguard rerun` | same as `review` |\n" +
	"| `/mergeguard pause` | stop automatic reviews on this pull request |\n" +
	"| `/mergeguard resume` | restart automatic reviews on this pull request |\n" +
	"| `/mergeguard help` | show this help |\n\n" +
	"Write the command at the start of a line. Repository settings live in `.mergeguard.yml` on the base branch."

// ParseCommand finds the first /mergeguard command of a comment: a line
// whose first word is "/mergeguard" (in any case), followed by a
// subcommand. Quoted lines (starting with ">"), lines inside fenced code
// blocks, indented code (four spaces or a tab) and text inside HTML
// comments ("<!-- ... -->", over several lines too, which GitHub does not
// show) are ignored, so that quoting, documenting or hiding a command does
// not run it. "/mergeguard" alone is help; an unknown subcommand is
// Command{Name: CommandUnknown}, to be answered with HelpText.
func ParseCommand(body string) (Command, bool) {
	fence := ""
	inComment := false
	for line := range strings.Lines(body) {
		if fence == "" {
			line, inComment = visible(line, inComment)
		}
		trimmed := strings.TrimSpace(line)
		if f := fenceOf(trimmed); f != "" {
			switch {
			case fence == "":
				fence = f
			case strings.HasPrefix(f, fence) && strings.TrimLeft(trimmed, f[:1]) == "":
				fence = "" // a closing fence: at least as long, nothing after it
			}
			continue
		}
		indented := strings.HasPrefix(line, "    ") || strings.HasPrefix(line, "\t")
		if fence != "" || indented || strings.HasPrefix(trimmed, ">") {
			continue
		}
		words := strings.Fields(trimmed)
		if len(words) == 0 || !strings.EqualFold(words[0], commandPrefix) {
			continue
		}
		if len(words) == 1 {
			return Command{Name: CommandHelp}, true
		}
		c := Command{Name: CommandUnknown, Raw: words[1], Args: words[2:]}
		switch sub := strings.ToLower(words[1]); sub {
		case CommandRerun, CommandReview, CommandHelp, CommandPause, CommandResume:
			c.Name = sub
		}
		return c, true
	}
	return Command{}, false
}

// fenceOf returns the fence a line opens or closes (three or more
// backticks or tildes), or "".
func fenceOf(line string) string {
	for _, ch := range []string{"`", "~"} {
		n := len(line) - len(strings.TrimLeft(line, ch))
		if n >= 3 {
			return line[:n]
		}
	}
	return ""
}

// visible returns the part of line outside HTML comments, given whether
// the line starts inside one, and whether the next line does. Text after
// "-->" or before "<!--" on a line is kept.
func visible(line string, inComment bool) (string, bool) {
	if !inComment && !strings.Contains(line, "<!--") {
		return line, false
	}
	var kept strings.Builder
	for line != "" {
		if inComment {
			_, after, closed := strings.Cut(line, "-->")
			if !closed {
				return kept.String(), true
			}
			line, inComment = after, false
			continue
		}
		before, after, opened := strings.Cut(line, "<!--")
		kept.WriteString(before)
		if !opened {
			break
		}
		// The text kept before and after the comment stays apart.
		kept.WriteByte(' ')
		line, inComment = after, true
	}
	return kept.String(), inComment
}
