package markdown

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mergeguard/mergeguard/internal/mdscan"
	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/diff"
)

func TestReadMarkers(t *testing.T) {
	tests := []struct {
		name, body string
		want       map[string]string
	}{
		{"review", "## Review\n\ntext\n\n<!-- mergeguard:run=run-1 -->", map[string]string{"run": "run-1"}},
		{"comment with trailing newline", "text\n<!-- mergeguard:fp=ab-12 -->\r\n", map[string]string{"fp": "ab-12"}},
		{"several markers on the line", "text\n<!-- mergeguard:run=r fp=f -->", map[string]string{"run": "r", "fp": "f"}},
		{"marker not on the last line", "<!-- mergeguard:fp=fp-target -->\nmore text", nil},
		{"marker inside the last line", "text <!-- mergeguard:fp=fp-target -->", nil},
		{"two markers on separate lines: only the last counts", "<!-- mergeguard:fp=fp-target -->\n<!-- mergeguard:fp=fp-own -->", map[string]string{"fp": "fp-own"}},
		{"escaped marker", "&lt;!-- mergeguard:fp=fp-target --&gt;", nil},
		{"key twice", "<!-- mergeguard:fp=a fp=b -->", nil},
		{"double dash in a value", "<!-- mergeguard:fp=a--b -->", nil},
		{"empty", "", nil},
	}
	for _, tt := range tests {
		if d := cmp.Diff(tt.want, ReadMarkers(tt.body)); d != "" {
			t.Errorf("%s: readMarkers (-want +got):\n%s", tt.name, d)
		}
	}
}

// TestSuggestionCannotLeaveItsCodeBlock: a suggestion is code in a fence
// longer than any backtick run in it; in the review body, where the block
// sits in a list item, every line is indented as the fence, so no line
// ends the item (and the block) early. Lines end as CommonMark ends them:
// at "\n", "\r\n" or "\r".
func TestSuggestionCannotLeaveItsCodeBlock(t *testing.T) {
	for _, sugg := range []string{
		"x := 1\n```\n</details>\n<!-- mergeguard:fp=fp-target -->",
		"a ```` b\n````\n~~~\n@everyone",
		"line one\r</details>\r\n# heading\rnot indented",
		"```go\nfmt.Println(\"```\")\n```",
	} {
		f := review.Finding{Fingerprint: "fp-s", FilePath: "pkg/p00/file.go", LineStart: 10, LineEnd: 10, Side: review.SideRight, Severity: review.SeverityWarning, Category: review.CategoryBug, Title: "Problem fp-s"}
		f.Suggestion = sugg
		code := strings.Split(review.SuggestionCode(sugg), "\n")
		for _, suggest := range []bool{true, false} {
			checkCodeBlock(t, commentBody(Policy{}, f, "fp-s", suggest), "", code)
		}
		post := review.Post{Number: 7, HeadSHA: "f3a958e", RunID: "run-1", Findings: []review.Finding{f}} // no index: in the body
		checkCodeBlock(t, PlanReview(post, testPullURL, nil, 30).Body(), "  ", code)
	}
}

var lineEndRE = regexp.MustCompile(`\r\n|\r|\n`)

// checkCodeBlock finds the first fenced code block of body and checks that
// it holds exactly code, each line indented by indent, and closes where it
// was written to.
func checkCodeBlock(t *testing.T, body, indent string, code []string) {
	t.Helper()
	lines := lineEndRE.Split(body, -1)
	open := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, indent+"```") })
	if open < 0 {
		t.Fatalf("no code block in\n%s", body)
	}
	fence := mdscan.Fence(strings.TrimPrefix(lines[open], indent))
	var got []string
	for _, l := range lines[open+1:] {
		if !strings.HasPrefix(l, indent) && l != "" {
			t.Errorf("line %q is not indented by %q: it ends the list item and the code block\n%s", l, indent, body)
			return
		}
		l = strings.TrimPrefix(l, indent)
		if trimmed := strings.TrimLeft(l, " "); len(l)-len(trimmed) <= 3 && strings.HasPrefix(trimmed, fence) && strings.Trim(trimmed, "` ") == "" {
			break
		}
		got = append(got, l)
	}
	if d := cmp.Diff(code, got); d != "" {
		t.Errorf("code block (-want +got):\n%s\nin\n%s", d, body)
	}
}

func TestEventFor(t *testing.T) {
	tests := []struct {
		decision review.Decision
		want     string
	}{
		{review.DecisionApprove, EventApprove},
		{review.DecisionRequestChanges, EventRequestChanges},
		{review.DecisionComment, EventComment},
		{"", EventComment},
		{"merge it", EventComment},
	}
	for _, tt := range tests {
		if got := eventFor(tt.decision); got != tt.want {
			t.Errorf("eventFor(%q) = %s, want %s", tt.decision, got, tt.want)
		}
	}
}

func TestAnchor(t *testing.T) {
	// Two hunks: lines 2..4 and 20..22 of the new file; line 3 deleted.
	d, err := diff.ParseString("diff --git a/f.go b/f.go\n--- a/f.go\n+++ b/f.go\n" +
		"@@ -2,3 +2,3 @@\n a\n-b\n+B\n c\n@@ -20,3 +20,3 @@\n x\n-y\n+Y\n z\n")
	if err != nil {
		t.Fatal(err)
	}
	idx := diff.NewIndex(d)
	tests := []struct {
		name       string
		side       review.Side
		start, end int
		want       *Comment
		wantExact  bool
	}{
		{"single added line", review.SideRight, 3, 3, &Comment{Line: 3, Side: "RIGHT"}, true},
		{"end before start is single", review.SideRight, 3, 0, &Comment{Line: 3, Side: "RIGHT"}, true},
		{"range in one hunk", review.SideRight, 2, 4, &Comment{StartLine: 2, StartSide: "RIGHT", Line: 4, Side: "RIGHT"}, true},
		{"range across hunks: first commentable line", review.SideRight, 3, 21, &Comment{Line: 3, Side: "RIGHT"}, false},
		{"range starting between hunks", review.SideRight, 10, 21, &Comment{Line: 20, Side: "RIGHT"}, false},
		{"deleted line on the left", review.SideLeft, 3, 3, &Comment{Line: 3, Side: "LEFT"}, true},
		{"line between hunks", review.SideRight, 10, 10, nil, false},
		{"no line", review.SideRight, 0, 0, nil, false},
	}
	for _, tt := range tests {
		f := review.Finding{FilePath: "f.go", Side: tt.side, LineStart: tt.start, LineEnd: tt.end}
		got, exact := anchor(idx, f)
		if tt.want != nil {
			tt.want.Path = "f.go"
		}
		if d := cmp.Diff(tt.want, got); d != "" || exact != tt.wantExact {
			t.Errorf("%s: anchor exact=%v (want %v) (-want +got):\n%s", tt.name, exact, tt.wantExact, d)
		}
	}
	if got, _ := anchor(nil, review.Finding{FilePath: "f.go", LineStart: 3}); got != nil {
		t.Error("anchor without an index placed a comment")
	}
}

func TestCommentBodySuggestion(t *testing.T) {
	f := review.Finding{Severity: review.SeverityWarning, Category: review.CategoryBug, Title: "T", LineStart: 3, LineEnd: 4,
		Suggestion: "```go\nx := \"```\"\n```\n"}
	got := commentBody(Policy{}, f, "fp1", true)
	want := "🟠 **Warning** · bug\n\n**T**\n\n````suggestion\nx := \"```\"\n````\n\n<!-- mergeguard:fp=fp1 -->"
	if got != want {
		t.Errorf("commentBody =\n%s\nwant\n%s", got, want)
	}
	plain := commentBody(Policy{}, f, "fp1", false)
	if strings.Contains(plain, "suggestion\n") || !strings.Contains(plain, "**Suggested fix** (lines 3–4)") {
		t.Errorf("a suggestion that does not replace the commented lines exactly:\n%s", plain)
	}
	if d := cmp.Diff(map[string]string{"fp": "fp1"}, ReadMarkers(got)); d != "" {
		t.Errorf("readMarkers (-want +got):\n%s", d)
	}
	f.SuggestionNote = "the result has 1 syntax error(s) the file did not have"
	noted := commentBody(Policy{}, f, "fp1", true)
	want = "🟠 **Warning** · bug\n\n**T**\n\n**Suggested change** (lines 3–4, not applied automatically: the result has 1 syntax error(s) the file did not have):\n\n````\nx := \"```\"\n````\n\n<!-- mergeguard:fp=fp1 -->"
	if noted != want {
		t.Errorf("a suggestion the verifier did not apply:\n%s\nwant\n%s", noted, want)
	}
}
