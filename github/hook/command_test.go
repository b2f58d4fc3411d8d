package hook

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/mergeguard/mergeguard/internal/allocs"
)

func TestParseCommand(t *testing.T) {
	tests := []struct {
		name   string
		body   string
		want   Command
		wantOK bool
	}{
		{"rerun", "/mergeguard rerun", Command{Name: CommandRerun, Raw: "rerun"}, true},
		{"review", "/mergeguard review", Command{Name: CommandReview, Raw: "review"}, true},
		{"help", "/mergeguard help", Command{Name: CommandHelp, Raw: "help"}, true},
		{"pause", "/mergeguard pause", Command{Name: CommandPause, Raw: "pause"}, true},
		{"resume", "/mergeguard resume", Command{Name: CommandResume, Raw: "resume"}, true},
		{"case-insensitive", "/MergeGuard ReRun", Command{Name: CommandRerun, Raw: "ReRun"}, true},
		{"bare command is help", "/mergeguard", Command{Name: CommandHelp}, true},
		{"unknown subcommand", "/mergeguard deploy now", Command{Name: CommandUnknown, Raw: "deploy", Args: []string{"now"}}, true},
		{"arguments kept", "/mergeguard review please  quickly", Command{Name: CommandReview, Raw: "review", Args: []string{"please", "quickly"}}, true},
		{"later line", "Thanks for the fix!\n\n/mergeguard rerun\n", Command{Name: CommandRerun, Raw: "rerun"}, true},
		{"leading spaces", "  /mergeguard rerun", Command{Name: CommandRerun, Raw: "rerun"}, true},
		{"CRLF", "LGTM\r\n/mergeguard pause\r\n", Command{Name: CommandPause, Raw: "pause"}, true},
		{"first command wins", "/mergeguard pause\n/mergeguard resume", Command{Name: CommandPause, Raw: "pause"}, true},
		{"quoted", "> /mergeguard rerun\nI agree", Command{}, false},
		{"quoted with spaces", "  >  /mergeguard rerun", Command{}, false},
		{"fenced code", "```\n/mergeguard rerun\n```", Command{}, false},
		{"tilde fence", "~~~sh\n/mergeguard rerun\n~~~", Command{}, false},
		{"after a fence", "```\n/mergeguard pause\n```\n/mergeguard rerun", Command{Name: CommandRerun, Raw: "rerun"}, true},
		{"longer fence closes only with as long a fence", "````\n```\n/mergeguard pause\n````\n/mergeguard resume", Command{Name: CommandResume, Raw: "resume"}, true},
		{"indented code", "Run:\n\n    /mergeguard rerun", Command{}, false},
		{"inline code", "type `/mergeguard rerun` to rerun", Command{}, false},
		{"not the first word", "please /mergeguard rerun", Command{}, false},
		{"prefix of a longer word", "/mergeguarded rerun", Command{}, false},
		{"empty", "", Command{}, false},
		{"HTML comment", "<!-- /mergeguard rerun -->", Command{}, false},
		{"multi-line HTML comment", "Thanks!\n<!--\n/mergeguard rerun\n-->\n", Command{}, false},
		{"HTML comment opened mid-line", "note <!-- hidden\n/mergeguard pause\nstill hidden -->", Command{}, false},
		{"unclosed HTML comment", "<!--\n/mergeguard rerun", Command{}, false},
		{"after an HTML comment", "<!-- template -->\n/mergeguard rerun", Command{Name: CommandRerun, Raw: "rerun"}, true},
		{"after a closing on the same line", "<!--\nhidden --> /mergeguard resume", Command{Name: CommandResume, Raw: "resume"}, true},
		{"before an HTML comment on the line", "/mergeguard rerun <!-- why -->", Command{Name: CommandRerun, Raw: "rerun"}, true},
		{"two comments on a line", "<!-- a --> x <!-- b\n/mergeguard pause\n-->", Command{}, false},
		{"fence inside an HTML comment", "<!--\n```\n-->\n/mergeguard rerun", Command{Name: CommandRerun, Raw: "rerun"}, true},
		{"HTML comment inside a fence is code", "```\n<!--\n```\n/mergeguard rerun", Command{Name: CommandRerun, Raw: "rerun"}, true},
		{"full-review", "/mergeguard full-review", Command{Name: CommandFullReview, Raw: "full-review", Full: true}, true},
		{"full-review any case", "/MergeGuard Full-Review", Command{Name: CommandFullReview, Raw: "Full-Review", Full: true}, true},
		{"rerun --full", "/mergeguard rerun --full", Command{Name: CommandRerun, Raw: "rerun", Args: []string{"--full"}, Full: true}, true},
		{"review --FULL", "/mergeguard review --FULL", Command{Name: CommandReview, Raw: "review", Args: []string{"--FULL"}, Full: true}, true},
		{"rerun --fuller is not full", "/mergeguard rerun --fuller", Command{Name: CommandRerun, Raw: "rerun", Args: []string{"--fuller"}}, true},
		{"--full on another command", "/mergeguard pause --full", Command{Name: CommandPause, Raw: "pause", Args: []string{"--full"}}, true},
		{"ignore", "/mergeguard ignore", Command{Name: CommandIgnore, Raw: "ignore"}, true},
		{"learn", "Good catch.\n/mergeguard learn", Command{Name: CommandLearn, Raw: "learn"}, true},
		{"describe", "/mergeguard describe", Command{Name: CommandDescribe, Raw: "describe"}, true},
		{"describe any case, after text", "Please.\n/MergeGuard Describe now", Command{Name: CommandDescribe, Raw: "Describe", Args: []string{"now"}}, true},
		{"describe in a code fence", "```\n/mergeguard describe\n```", Command{}, false},
		{"ask", "/mergeguard ask why is  this safe?", Command{Name: CommandAsk, Raw: "ask", Args: []string{"why", "is", "this", "safe?"}, Text: "why is  this safe?"}, true},
		{"ask over lines", "/mergeguard Ask what does\nthis loop do?\r\n", Command{Name: CommandAsk, Raw: "Ask", Args: []string{"what", "does"}, Text: "what does\nthis loop do?"}, true},
		{"ask without a question", "/mergeguard ask", Command{Name: CommandAsk, Raw: "ask"}, true},
		{"ask after a hidden comment", "<!-- x --> /mergeguard ask why?", Command{Name: CommandAsk, Raw: "ask", Args: []string{"why?"}, Text: "why?"}, true},
		{"quoted full-review", "> /mergeguard full-review", Command{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := ParseCommand(tt.body)
			if ok != tt.wantOK {
				t.Fatalf("ParseCommand(%q) ok = %v, want %v", tt.body, ok, tt.wantOK)
			}
			if d := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); d != "" {
				t.Errorf("ParseCommand(%q) (-want +got):\n%s", tt.body, d)
			}
		})
	}
}

func TestHelpTextListsEveryCommand(t *testing.T) {
	for _, c := range []string{CommandRerun, CommandReview, CommandHelp, CommandPause, CommandResume} {
		if !strings.Contains(HelpText, "`/mergeguard "+c+"`") {
			t.Errorf("HelpText does not mention /mergeguard %s", c)
		}
	}
}

func FuzzParseCommand(f *testing.F) {
	for _, seed := range []string{
		"/mergeguard rerun", "/MERGEGUARD help", "> /mergeguard pause", "```\n/mergeguard resume\n```",
		"/mergeguard", "/mergeguard x y z", "text\n\t/mergeguard rerun", "", "\x00/mergeguard\xffrerun",
		"<!-- /mergeguard rerun -->", "<!--\n/mergeguard rerun\n-->", "<!-- a -->/mergeguard rerun", "/mergeguard help <!--",
		"<!--\n```\n-->\n/mergeguard pause", "<!---->/mergeguard review", "<!-->\n/mergeguard rerun",
	} {
		f.Add(seed)
	}
	names := []string{CommandRerun, CommandReview, CommandHelp, CommandPause, CommandResume, CommandUnknown}
	bound := allocs.Bound{PerByte: 16, Fixed: 64 << 10}
	f.Fuzz(func(t *testing.T, body string) {
		var (
			c  Command
			ok bool
		)
		if err := bound.Check(len(body), func() { c, ok = ParseCommand(body) }); err != nil {
			t.Fatalf("ParseCommand: %v", err)
		}
		if !ok {
			if c.Name != "" || c.Raw != "" || len(c.Args) != 0 {
				t.Errorf("ParseCommand(%q) = %+v with ok false", body, c)
			}
			return
		}
		if !slices.Contains(names, c.Name) {
			t.Errorf("ParseCommand(%q) name %q", body, c.Name)
		}
		if !strings.Contains(strings.ToLower(body), commandPrefix) {
			t.Errorf("ParseCommand(%q) found a command in a body without %s", body, commandPrefix)
		}
		if c.Name != CommandUnknown && c.Raw != "" && !strings.EqualFold(c.Raw, c.Name) {
			t.Errorf("ParseCommand(%q) = %+v: Raw does not spell Name", body, c)
		}
	})
}
