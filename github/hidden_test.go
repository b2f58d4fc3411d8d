package github

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mergeguard/mergeguard/github/githubtest"
	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/diff"
)

// hiddenPR is a pull request that commits a .gitattributes marking Python
// files -diff, so GitHub's diff (built with git, honouring the head's
// attributes) shows settings.py, which plants an AWS key, as "Binary files
// … differ"; logo.png is a real binary; big.py is text over the bound.
func hiddenPR() githubtest.PR {
	settingsBase := "DEBUG = False\n"
	settingsHead := "DEBUG = False\nAWS_KEY = \"AKIAZ7VRSQ5TJN2XMY4W\"\nimport os; os.system(input())\n"
	png := "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01"
	big := strings.Repeat("x = 1\n", maxHiddenFileBytes/6+10)
	// A NUL past the first 8,000 bytes: text by GitHub's rule, run by python.
	tail := "KEY = \"AKIAZ7VRSQ5TJN2XMY4W\"\n" + strings.Repeat("x = 1\n", 2000) + "# \x00\n"
	binary := func(path, status string) string {
		switch status {
		case "added":
			return "diff --git a/" + path + " b/" + path + "\nnew file mode 100644\nindex 0000000..1111111\nBinary files /dev/null and b/" + path + " differ\n"
		}
		return "diff --git a/" + path + " b/" + path + "\nindex 1111111..2222222 100644\nBinary files a/" + path + " and b/" + path + " differ\n"
	}
	return githubtest.PR{
		Owner: "acme", Repo: "widgets", Number: 9, Title: "Settings",
		Base: map[string]string{"settings.py": settingsBase, "big.py": "x = 0\n"},
		Head: map[string]string{".gitattributes": "*.py -diff\n", "settings.py": settingsHead, "logo.png": png, "big.py": big, "tail.py": tail},
		Diff: addedDiff(".gitattributes", "*.py -diff\n") + binary("settings.py", "modified") + binary("logo.png", "added") + binary("big.py", "modified") +
			binary("tail.py", "added"),
	}
}

func TestSourceReadsBackFilesGitHubHidesAsBinary(t *testing.T) {
	_, src, _ := newTestSource(t, hiddenPR())
	text, err := src.Diff(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	d, err := diff.ParseString(text)
	if err != nil {
		t.Fatalf("the repaired diff does not parse: %v\n%s", err, text)
	}
	got := map[string]bool{}
	var settings *diff.File
	for _, f := range d.Files {
		got[f.Path()] = f.Binary
		if f.Path() == "settings.py" {
			settings = f
		}
	}
	want := map[string]bool{".gitattributes": false, "settings.py": false, "logo.png": true, "big.py": true, "tail.py": false}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("binary by file (-want +got):\n%s", diff)
	}
	if settings.Additions != 2 || settings.Deletions != 0 || !strings.Contains(text, `+AWS_KEY = "AKIAZ7VRSQ5TJN2XMY4W"`) {
		t.Errorf("settings.py: +%d -%d, want the two added lines in the diff:\n%s", settings.Additions, settings.Deletions, text)
	}
	if diff := cmp.Diff(map[string]bool{"settings.py": true, "tail.py": true}, src.hiddenFiles()); diff != "" {
		t.Errorf("hidden files (-want +got):\n%s", diff)
	}
}

func TestPublishPutsFindingsOnHiddenFilesInTheBody(t *testing.T) {
	fake := githubtest.New(t)
	pr := fake.AddPR(hiddenPR())
	repo := &Repo{owner: pr.Owner, name: pr.Repo, client: fake.Client(), v4: fake.V4Client(),
		publisher: NewPublisher(PublisherOptions{MaxInlineComments: 30, BotLogin: "mergeguard[bot]"}), sources: map[int]*Source{}}
	src := repo.Source(pr.Number)
	text, err := src.Diff(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	d, err := diff.ParseString(text)
	if err != nil {
		t.Fatal(err)
	}
	f := review.Finding{FilePath: "settings.py", LineStart: 2, LineEnd: 2, Side: review.SideRight, Severity: review.SeverityCritical,
		Category: review.CategorySecurity, Title: "AWS key", VerificationStatus: review.Verified, Fingerprint: "fp-aws"}
	posted, err := repo.Publish(t.Context(), review.Post{Number: pr.Number, HeadSHA: pr.HeadSHA, RunID: "run-1",
		Verdict: review.Verdict{Verdict: review.DecisionRequestChanges}, Findings: []review.Finding{f}, Index: diff.NewIndex(d)})
	if err != nil {
		t.Fatal(err)
	}
	if got := posted.Placements["fp-aws"].Where; got != review.PlacedBody {
		t.Errorf("finding on a hidden file placed %q, want %q (GitHub has no diff lines to comment on)", got, review.PlacedBody)
	}
	if n := len(fake.CallsTo(githubtest.RouteCreateReview)); n != 1 {
		t.Errorf("%d create-review calls, want 1 (no 422 to recover from)", n)
	}
}
