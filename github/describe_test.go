package github

import (
	"errors"
	"strings"
	"testing"

	"github.com/mergeguard/mergeguard/github/githubtest"
	"github.com/mergeguard/mergeguard/github/markdown"
	"github.com/mergeguard/mergeguard/github/markdown/markdowntest"
	"github.com/mergeguard/mergeguard/review"
)

var testDescKey = markdown.DescriptionKey("webhook secret")

// describeStart is the first line of MergeGuard's section of a description.
const describeStart = "<!-- mergeguard:describe-start -->"

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
	text := markdown.DescriptionText(testPullURL, review.Description{Walkthrough: w, HeadSHA: "0123456789abcdef", DetailsURL: "https://mergeguard.example.com/reviews/r1"})
	if strings.Contains(text, "<!--") || strings.Contains(text, "<img") || strings.Contains(text, "<b>") {
		t.Errorf("description text holds HTML or a marker:\n%s", text)
	}
	for _, line := range strings.Split(text, "\n") {
		if bad := markdowntest.LiveInLine(line); len(bad) > 0 {
			t.Errorf("description line acts on untrusted text: %v\n%s", bad, line)
		}
	}
	for _, want := range []string{"### Walkthrough", "`0123456`", "[details](https://mergeguard.example.com/reviews/r1)", "`cache.go` — the cache"} {
		if !strings.Contains(text, want) {
			t.Errorf("description text lacks %q:\n%s", want, text)
		}
	}
	// Spliced into a description, the text stays one section of ours.
	body := markdown.Section{Key: testDescKey, Repo: "acme/widgets", Number: 7}.Splice("Author.", text)
	if got := strings.Count(body, describeStart); got != 1 {
		t.Errorf("%d start markers in the description, want 1:\n%s", got, body)
	}
}
