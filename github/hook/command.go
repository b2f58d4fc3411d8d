// Package hook is GitHub's webhook wire format as MergeGuard reads it: a
// delivery's headers and signature checked while its body is read
// (ReadDelivery), the one-pass decoder of the events MergeGuard handles
// (Decoder) and their types, and the comment commands and mentions people
// write. It imports no GitHub client library and nothing of MergeGuard but
// internal/ (docs/architecture.md, Packages).
package hook

import (
	"iter"
	"slices"
	"strings"

	"github.com/mergeguard/mergeguard/internal/mdscan"
)

// Command names understood in pull-request comments.
const (
	CommandRerun   = "rerun"   // full review of the current head
	CommandReview  = "review"  // same as rerun
	CommandHelp    = "help"    // reply with HelpText
	CommandPause   = "pause"   // stop automatic reviews on the pull request
	CommandResume  = "resume"  // restart automatic reviews
	CommandUnknown = "unknown" // an unknown subcommand; answer with HelpText

	// The commands of a pull request's life (docs/architecture.md).
	CommandFullReview = "full-review" // full review of the current head, never incremental
	CommandAsk        = "ask"         // answer the question in Text
	CommandIgnore     = "ignore"      // in a MergeGuard thread: dismiss its finding
	CommandLearn      = "learn"       // in a MergeGuard thread: activate the proposed learning
	CommandDescribe   = "describe"    // describe the pull request
)

// flagFull asks rerun or review for a full review.
const flagFull = "--full"

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
	// Full is set when a full review is forced: full-review, or rerun or
	// review with --full.
	Full bool
	// Text is the question of ask: what follows the subcommand, the rest
	// of its line and the lines after it, trimmed; "" for other commands.
	Text string
}

// HelpText is the reply to /mergeguard help and to unknown commands.
const HelpText = "MergeGuard commands (people with write access to the repository only):\n\n" +
	"| command | what it does |\n" +
	"|---|---|\n" +
	"| `/mergeguard review` | review the current head of this pull request |\n" +
	"| `/mergeguard rerun` | same as `review` |\n" +
	"| `/mergeguard full-review` | review the whole pull request again, not only the commits since the last review (also `rerun --full`) |\n" +
	"| `/mergeguard ask <question>` | ask MergeGuard about this pull request |\n" +
	"| `/mergeguard ignore` | in a MergeGuard thread: dismiss its finding on this pull request |\n" +
	"| `/mergeguard learn` | in a MergeGuard thread: keep the lesson MergeGuard proposed for later reviews |\n" +
	"| `/mergeguard describe` | write MergeGuard's walkthrough into this pull request's description (your text is left as it is) |\n" +
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
	for trimmed, next := range proseLines(body) {
		words := strings.Fields(trimmed)
		if len(words) == 0 || !strings.EqualFold(words[0], commandPrefix) {
			continue
		}
		if len(words) == 1 {
			return Command{Name: CommandHelp}, true
		}
		return newCommand(words[1:], trimmed, body[next:]), true
	}
	return Command{}, false
}

// proseLines yields the lines of a comment that are its author's own
// prose, trimmed, each with where the line after it starts in body:
// quoted lines (starting with ">"), lines inside fenced code blocks,
// indented code (four spaces or a tab) and text inside HTML comments
// ("<!-- ... -->", over several lines too) are left out.
func proseLines(body string) iter.Seq2[string, int] {
	return func(yield func(string, int) bool) {
		var md mdscan.Lines
		next := 0 // where the line after the current one starts
		for line := range strings.Lines(body) {
			next += len(line)
			line, fenceLine := md.Next(line)
			trimmed := strings.TrimSpace(line)
			indented := strings.HasPrefix(line, "    ") || strings.HasPrefix(line, "\t")
			if fenceLine || md.Fence != "" || indented || strings.HasPrefix(trimmed, ">") {
				continue
			}
			if !yield(trimmed, next) {
				return
			}
		}
	}
}

// newCommand is the command of words (the subcommand and its arguments),
// on a line whose visible text is line, followed by rest.
func newCommand(words []string, line, rest string) Command {
	c := Command{Name: CommandUnknown, Raw: words[0], Args: words[1:]}
	switch sub := strings.ToLower(words[0]); sub {
	case CommandRerun, CommandReview:
		c.Name, c.Full = sub, slices.ContainsFunc(c.Args, func(a string) bool { return strings.EqualFold(a, flagFull) })
	case CommandFullReview:
		c.Name, c.Full = sub, true
	case CommandHelp, CommandPause, CommandResume, CommandAsk, CommandIgnore, CommandLearn, CommandDescribe:
		c.Name = sub
	}
	if c.Name == CommandAsk {
		// The text after the subcommand, as written on its line.
		after := strings.TrimSpace(line)
		after = strings.TrimSpace(after[len(strings.Fields(after)[0]):])
		after = strings.TrimSpace(after[len(words[0]):])
		c.Text = strings.TrimSpace(after + "\n" + rest)
	}
	return c
}
