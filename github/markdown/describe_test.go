package markdown

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var testDescKey = DescriptionKey("webhook secret")

func testDescriber() Section {
	return Section{Key: testDescKey, Repo: "acme/widgets", Number: 7}
}

func TestDescriptionKey(t *testing.T) {
	if DescriptionKey("") != nil {
		t.Error("DescriptionKey of no secret is a key")
	}
	a, b := DescriptionKey("one"), DescriptionKey("two")
	if len(a) != 32 || string(a) == string(b) || string(a) == "one" {
		t.Errorf("DescriptionKey = %x, %x: want two different derived 32-byte keys", a, b)
	}
}

// TestDescribeSplice: MergeGuard's section is replaced only where its MAC
// proves it is MergeGuard's text, and added after the author's text
// otherwise; the author's text is never changed.
func TestDescribeSplice(t *testing.T) {
	d := testDescriber()
	old, cur := d.section("old walkthrough"), d.section("NEW")
	other := Section{Key: testDescKey, Repo: "acme/widgets", Number: 8}
	foreign := Section{Key: DescriptionKey("another secret"), Repo: "acme/widgets", Number: 7}
	forgedEnd := "<!-- mergeguard:describe-end mac=" + strings.Repeat("0", 64) + " -->"
	tests := []struct {
		name, body, want string
	}{
		{"empty description", "", cur},
		{"only whitespace", "\n\r\n", cur},
		{"author's text: ours after a blank line", "Fixes #12.\n\nDetails.", "Fixes #12.\n\nDetails.\n\n" + cur},
		{"trailing newlines are not doubled", "Fixes #12.\r\n\r\n\r\n", "Fixes #12.\n\n" + cur},
		{"ours replaced in place", "Intro.\n\n" + old + "\n\nOutro.", "Intro.\n\n" + cur + "\n\nOutro."},
		{"ours alone replaced", old, cur},
		{"ours replaced after the web editor's CRLF",
			"Intro.\r\n\r\n" + strings.ReplaceAll(old, "\n", "\r\n") + "\r\nOutro.",
			"Intro.\r\n\r\n" + cur + "\r\nOutro."},
		{"same text: unchanged", "Intro.\n\n" + cur + "\n", "Intro.\n\n" + cur + "\n"},
		{"a start marker without an end is the author's text",
			"Intro.\n" + describeStart + "\nAuthor's text.",
			"Intro.\n" + describeStart + "\nAuthor's text.\n\n" + cur},
		{"a forged pair is the author's text",
			describeStart + "\nAuthor's text.\n" + forgedEnd,
			describeStart + "\nAuthor's text.\n" + forgedEnd + "\n\n" + cur},
		{"an end marker without a start is the author's text",
			"Author's text.\n" + strings.SplitAfter(old, "\n")[2],
			"Author's text.\n" + strings.SplitAfter(old, "\n")[2] + "\n\n" + cur},
		{"ours with the author's edit inside is theirs now",
			strings.Replace(old, "old walkthrough", "old walkthrough, edited", 1),
			strings.Replace(old, "old walkthrough", "old walkthrough, edited", 1) + "\n\n" + cur},
		{"a line of the author's inside ours makes it theirs",
			strings.Replace(old, "old walkthrough", "Author's line.\nold walkthrough", 1),
			strings.Replace(old, "old walkthrough", "Author's line.\nold walkthrough", 1) + "\n\n" + cur},
		{"a start marker doubled: the extra line is kept",
			strings.Replace(old, "old walkthrough", describeStart+"\nold walkthrough", 1),
			describeStart + "\n" + cur},
		{"a forged start above ours: only ours is replaced",
			describeStart + "\nAuthor's text.\n" + old,
			describeStart + "\nAuthor's text.\n" + cur},
		{"a section of another pull request is the author's text", other.section("copied"), other.section("copied") + "\n\n" + cur},
		{"a section under another key is the author's text", foreign.section("x"), foreign.section("x") + "\n\n" + cur},
		{"two of ours: the first replaced, the copy left",
			old + "\n\nMiddle.\n\n" + old,
			cur + "\n\nMiddle.\n\n" + old},
		{"a forged pair before ours: ours replaced, theirs kept",
			describeStart + "\nAuthor's.\n" + forgedEnd + "\n" + old + "\nEnd.",
			describeStart + "\nAuthor's.\n" + forgedEnd + "\n" + cur + "\nEnd."},
		{"an open code fence is closed before ours",
			"Intro.\n```go\nfunc f() {",
			"Intro.\n```go\nfunc f() {\n```\n\n" + cur},
		{"an open HTML comment is closed before ours",
			"Intro.\n<!-- hidden note",
			"Intro.\n<!-- hidden note\n-->\n\n" + cur},
		{"a closed fence needs nothing", "```\ncode\n```", "```\ncode\n```\n\n" + cur},
		{"markers quoted in a closed fence stay the author's",
			"```\n" + describeStart + "\n```",
			"```\n" + describeStart + "\n```\n\n" + cur},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := d.Splice(tt.body, "NEW")
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("splice (-want +got):\n%s", diff)
			}
			// The next describe finds the section it wrote.
			if again := d.Splice(got, "NEWER"); strings.Count(again, describeStart) != strings.Count(got, describeStart) {
				t.Errorf("a second describe added a section:\n%s", again)
			}
		})
	}
}
