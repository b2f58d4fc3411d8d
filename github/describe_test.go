package github

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mergeguard/mergeguard/github/githubtest"
	"github.com/mergeguard/mergeguard/review"
)

var testDescKey = DescriptionKey("webhook secret")

func testDescriber() describer {
	return describer{key: testDescKey, repo: "acme/widgets", number: 7}
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
	other := describer{key: testDescKey, repo: "acme/widgets", number: 8}
	foreign := describer{key: DescriptionKey("another secret"), repo: "acme/widgets", number: 7}
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
			got := d.splice(tt.body, "NEW")
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("splice (-want +got):\n%s", diff)
			}
			// The next describe finds the section it wrote.
			if again := d.splice(got, "NEWER"); strings.Count(again, describeStart) != strings.Count(got, describeStart) {
				t.Errorf("a second describe added a section:\n%s", again)
			}
		})
	}
}

// TestDescriptionTextIsInert: the walkthrough a model wrote cannot ping
// people, forge markers or inject HTML into the description.
func TestDescriptionTextIsInert(t *testing.T) {
	w := &review.Walkthrough{
		Summary: "Adds caching. @octocat please review <!-- mergeguard:describe-start --> <img src=x onerror=alert(1)>\n" +
			describeStart + "\n<!-- mergeguard:describe-end mac=" + strings.Repeat("a", 64) + " -->",
		Groups: []review.WalkthroughGroup{{Name: "@acme/security <b>", Files: []review.WalkthroughFile{
			{FilePath: "a<!--b.go", Line: "cc @everyone, see [x](https://evil.example/p) and acme/other#3"},
			{FilePath: "cache.go", Line: "the cache"},
		}}},
	}
	text := descriptionText(newTextPolicy(testPullURL), review.Description{Walkthrough: w, HeadSHA: "0123456789abcdef", DetailsURL: "https://mergeguard.example.com/reviews/r1"})
	if strings.Contains(text, "<!--") || strings.Contains(text, "<img") || strings.Contains(text, "<b>") {
		t.Errorf("description text holds HTML or a marker:\n%s", text)
	}
	for _, line := range strings.Split(text, "\n") {
		if bad := liveInLine(line); len(bad) > 0 {
			t.Errorf("description line acts on untrusted text: %v\n%s", bad, line)
		}
	}
	for _, want := range []string{"### Walkthrough", "`0123456`", "[details](https://mergeguard.example.com/reviews/r1)", "`cache.go` — the cache"} {
		if !strings.Contains(text, want) {
			t.Errorf("description text lacks %q:\n%s", want, text)
		}
	}
	// Spliced into a description, the text stays one section of ours.
	body := testDescriber().splice("Author.", text)
	if got := strings.Count(body, describeStart); got != 1 {
		t.Errorf("%d start markers in the description, want 1:\n%s", got, body)
	}
}

func describeRepo(t *testing.T, key []byte) (*githubtest.Server, githubtest.PR, *Repo) {
	t.Helper()
	fake, pr, repo := convergeRepo(t)
	repo.descKey = key
	return fake, pr, repo
}

// TestDescribe writes the walkthrough into a description on the fake
// GitHub: after the author's text, then in place, reading the description
// right before each write so an author's edit in between is kept.
func TestDescribe(t *testing.T) {
	fake, pr, repo := describeRepo(t, testDescKey)
	fake.SetPullBody(pr.Owner, pr.Repo, pr.Number, "Fixes #1.\r\n\r\nPlease review @octocat.")
	desc := review.Description{HeadSHA: pr.HeadSHA, Walkthrough: &review.Walkthrough{Summary: "First.",
		Groups: []review.WalkthroughGroup{{Name: "source", Files: []review.WalkthroughFile{{FilePath: "internal/new.go", Line: "new file"}}}}}}

	changed, err := repo.Describe(t.Context(), pr.Number, desc)
	if err != nil || !changed {
		t.Fatalf("Describe = %v, %v; want changed", changed, err)
	}
	body := fake.PullBody(pr.Owner, pr.Repo, pr.Number)
	if !strings.HasPrefix(body, "Fixes #1.\r\n\r\nPlease review @octocat.\n\n"+describeStart+"\n") || !strings.Contains(body, "First.") {
		t.Fatalf("description after the first describe:\n%q", body)
	}

	// The author edits their part; a later describe keeps the edit.
	edited := strings.Replace(body, "Please review", "Please, review", 1)
	fake.SetPullBody(pr.Owner, pr.Repo, pr.Number, edited)
	desc.Walkthrough.Summary = "Second."
	if _, err := repo.Describe(t.Context(), pr.Number, desc); err != nil {
		t.Fatal(err)
	}
	body = fake.PullBody(pr.Owner, pr.Repo, pr.Number)
	if !strings.HasPrefix(body, "Fixes #1.\r\n\r\nPlease, review @octocat.\n\n") || strings.Contains(body, "First.") ||
		!strings.Contains(body, "Second.") || strings.Count(body, describeStart) != 1 {
		t.Errorf("description after the second describe:\n%q", body)
	}

	// The same walkthrough again writes nothing.
	patches := fake.CallCount(githubtest.RouteUpdatePull)
	if changed, err := repo.Describe(t.Context(), pr.Number, desc); err != nil || changed {
		t.Errorf("Describe of the same text = %v, %v; want unchanged", changed, err)
	}
	if got := fake.CallCount(githubtest.RouteUpdatePull); got != patches {
		t.Errorf("%d PATCH calls for an unchanged description, want none", got-patches)
	}
}

func TestDescribeRefusals(t *testing.T) {
	w := &review.Walkthrough{Summary: "x"}
	t.Run("no key", func(t *testing.T) {
		_, pr, repo := describeRepo(t, nil)
		if _, err := repo.Describe(t.Context(), pr.Number, review.Description{Walkthrough: w}); !errors.Is(err, errNoDescriptionKey) {
			t.Errorf("Describe without a key = %v", err)
		}
	})
	t.Run("too long", func(t *testing.T) {
		fake, pr, repo := describeRepo(t, testDescKey)
		fake.SetPullBody(pr.Owner, pr.Repo, pr.Number, strings.Repeat("é", githubtest.MaxBodyLength-10))
		if _, err := repo.Describe(t.Context(), pr.Number, review.Description{Walkthrough: w}); !errors.Is(err, ErrDescriptionTooLong) {
			t.Errorf("Describe of a full description = %v, want ErrDescriptionTooLong", err)
		}
		if n := fake.CallCount(githubtest.RouteUpdatePull); n != 0 {
			t.Errorf("%d PATCH calls, want none", n)
		}
	})
	t.Run("unknown pull request", func(t *testing.T) {
		_, _, repo := describeRepo(t, testDescKey)
		if _, err := repo.Describe(t.Context(), 999, review.Description{Walkthrough: w}); !errors.Is(err, review.ErrNotFound) {
			t.Errorf("Describe of an unknown pull request = %v, want review.ErrNotFound", err)
		}
	})
}
