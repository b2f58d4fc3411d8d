package pipeline

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/diff"
)

// addedFile is the diff of a new file at path holding lines.
func addedFile(path string, lines ...string) *diff.File {
	h := diff.Hunk{NewStart: 1, NewLines: len(lines)}
	for i, l := range lines {
		h.Lines = append(h.Lines, diff.Line{Kind: diff.Add, NewLine: int32(i + 1), Text: l})
	}
	return &diff.File{NewPath: path, Status: diff.Added, Hunks: []diff.Hunk{h}, Additions: len(lines)}
}

// newTestVerifier parses the diff of files, as git would print it, and
// returns a verifier reading the head contents of head (nil: only the
// diff is known, as for a bare diff).
func newTestVerifier(t testing.TB, head map[string]string, files ...*diff.File) (*verifier, *diff.Index) {
	t.Helper()
	d, err := diff.ParseString(diff.Format(&diff.Diff{Files: files}))
	if err != nil {
		t.Fatal(err)
	}
	idx := diff.NewIndex(d)
	return newVerifier(&memSource{head: head}, d, idx), idx
}

// plantedLines are a Python file with an AWS key and a command injection.
var plantedLines = []string{"import os", `AWS_KEY = "AKIAZ7VRSQ5TJN2XMY4W"`, "os.system(input())"}

// judged is what the verifier tests compare of a finding.
type judged struct {
	Path       string
	Start, End int
	Status     review.VerificationStatus
}

// TestVerifyExactPaths: a path is matched byte for byte. A file whose name
// starts or ends with whitespace, or holds tabs, quotes, backslashes or
// non-ASCII letters, keeps its findings, verified and anchored on the very
// path of the diff; a citation that differs by whitespace is not that file.
func TestVerifyExactPaths(t *testing.T) {
	paths := []string{
		" settings.py", "settings.py ", "\tsettings.py", "settings.py\t", " dir /  a b .py ",
		"tab\tname.py", `q"uote.py`, `back\slash.py`, "ünï cødé.py", "-dash.py", "line\nbreak.py", "a b/c b/d.py",
	}
	for _, path := range paths {
		t.Run(path, func(t *testing.T) {
			v, idx := newTestVerifier(t, map[string]string{path: strings.Join(plantedLines, "\n") + "\n"}, addedFile(path, plantedLines...))
			findings := []review.Finding{
				{FilePath: path, LineStart: 2, LineEnd: 2, Severity: review.SeverityCritical, Agent: "analyzer:secrets", Confidence: 0.9},
				{FilePath: path, LineStart: 3, LineEnd: 3, Severity: review.SeverityCritical, Agent: "reviewer:1", CodeSnippet: "os.system(input())"},
			}
			var got []judged
			for _, f := range findings {
				f = v.verify(t.Context(), f)
				got = append(got, judged{f.FilePath, f.LineStart, f.LineEnd, f.VerificationStatus})
				if !idx.CommentableRange(f.FilePath, f.Side, f.LineStart, f.LineEnd) {
					t.Errorf("%q:%d is not anchored on the diff", f.FilePath, f.LineStart)
				}
			}
			want := []judged{{path, 2, 2, review.Verified}, {path, 3, 3, review.Verified}}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("verified (-want +got):\n%s", diff)
			}
		})
	}
}

// TestVerifyLookup: what a model may cite for a path, and what it may not.
func TestVerifyLookup(t *testing.T) {
	v, _ := newTestVerifier(t, nil,
		addedFile(" settings.py", plantedLines...), addedFile("settings.py\t", plantedLines...),
		addedFile("pkg/app.py", plantedLines...))
	tests := map[string]struct {
		cited string
		want  string // "" for not in the diff
	}{
		"exact, leading space":       {" settings.py", " settings.py"},
		"exact, trailing tab":        {"settings.py\t", "settings.py\t"},
		"trimmed is another file":    {"settings.py", ""},
		"space added is another one": {" settings.py ", ""},
		"./ prefix":                  {"./ settings.py", " settings.py"},
		"b/ prefix":                  {"b/ settings.py", " settings.py"},
		"quoted":                     {`" settings.py"`, " settings.py"},
		"quoted with escapes":        {`"settings.py\t"`, "settings.py\t"},
		"unique suffix":              {"app.py", "pkg/app.py"},
		"longer path":                {"repo/pkg/app.py", "pkg/app.py"},
		"suffix without a slash":     {"pp.py", ""},
		"empty":                      {"", ""},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, got, ok := v.lookup(tc.cited)
			if !ok {
				got = ""
			}
			if got != tc.want {
				t.Errorf("lookup(%q) = %q, want %q", tc.cited, got, tc.want)
			}
		})
	}
}

// modifiedHead is the head of store/run.go; its diff changes line 6 only,
// so lines 1-2 and 10 are outside the diff.
var modifiedHead = []string{
	"package store", "", `import "os/exec"`, "", "func Run(name string) error {",
	`	cmd := exec.Command("sh", "-c", name)`, "	return cmd.Run()", "}", "", "func helper() {}",
}

// modifiedFile is the diff of store/run.go (line 6 was `cmd := exec.Command(name)`).
func modifiedFile() *diff.File {
	h := diff.Hunk{OldStart: 3, OldLines: 7, NewStart: 3, NewLines: 7}
	add := func(k diff.LineKind, oldN, newN int32, text string) {
		h.Lines = append(h.Lines, diff.Line{Kind: k, OldLine: oldN, NewLine: newN, Text: text})
	}
	for n := int32(3); n <= 5; n++ {
		add(diff.Context, n, n, modifiedHead[n-1])
	}
	add(diff.Delete, 6, 0, "	cmd := exec.Command(name)")
	add(diff.Add, 0, 6, modifiedHead[5])
	for n := int32(7); n <= 9; n++ {
		add(diff.Context, n, n, modifiedHead[n-1])
	}
	return &diff.File{OldPath: "store/run.go", NewPath: "store/run.go", Status: diff.Modified, Hunks: []diff.Hunk{h}, Additions: 1, Deletions: 1}
}

// TestVerifyStatuses: a cited snippet that matches nothing in the file is a
// false positive; only a finding without a snippet is likely; a heuristic
// analyzer's finding is likely, an exact one verified.
func TestVerifyStatuses(t *testing.T) {
	head := map[string]string{"store/run.go": strings.Join(modifiedHead, "\n") + "\n"}
	model := func(start, end int, snippet string) review.Finding {
		return review.Finding{FilePath: "store/run.go", LineStart: start, LineEnd: end, Severity: review.SeverityCritical,
			Agent: "reviewer:1", CodeSnippet: snippet}
	}
	analyzerHit := func(agent string, conf float64, snippet string) review.Finding {
		return review.Finding{FilePath: "store/run.go", LineStart: 6, LineEnd: 6, Severity: review.SeverityCritical,
			Agent: agent, Confidence: conf, CodeSnippet: snippet}
	}
	tests := map[string]struct {
		f        review.Finding
		bareDiff bool // the source knows only the diff
		want     judged
	}{
		"snippet at the cited lines": {f: model(6, 6, `exec.Command("sh", "-c", name)`),
			want: judged{"store/run.go", 6, 6, review.Verified}},
		"snippet a line off": {f: model(8, 8, `exec.Command("sh", "-c", name)`),
			want: judged{"store/run.go", 6, 6, review.Verified}},
		"hallucinated snippet on lines of the diff": {f: model(6, 6, `os.system(input())`),
			want: judged{"store/run.go", 6, 6, review.FalsePositive}},
		"hallucinated snippet, no line": {f: model(0, 0, `os.system(input())`),
			want: judged{"store/run.go", 0, 0, review.FalsePositive}},
		"hallucinated snippet outside the diff": {f: model(1, 1, `os.system(input())`),
			want: judged{"store/run.go", 1, 1, review.FalsePositive}},
		"hallucinated snippet in a bare diff": {f: model(6, 6, `os.system(input())`), bareDiff: true,
			want: judged{"store/run.go", 6, 6, review.FalsePositive}},
		"snippet outside the diff": {f: model(6, 6, `func helper() {}`),
			want: judged{"store/run.go", 10, 10, review.Unverified}},
		"snippet far from the cited lines": {f: model(40, 40, `exec.Command("sh", "-c", name)`),
			want: judged{"store/run.go", 6, 6, review.Unverified}},
		"snippet, no line": {f: model(0, 0, `exec.Command("sh", "-c", name)`),
			want: judged{"store/run.go", 6, 6, review.Unverified}},
		"no snippet on lines of the diff": {f: model(6, 6, ""),
			want: judged{"store/run.go", 6, 6, review.Likely}},
		"no snippet next to the diff": {f: model(10, 10, ""),
			want: judged{"store/run.go", 9, 9, review.Likely}},
		"exact analyzer, no snippet": {f: analyzerHit("analyzer:secrets", 0.9, ""),
			want: judged{"store/run.go", 6, 6, review.Verified}},
		"heuristic analyzer, no snippet": {f: analyzerHit("analyzer:secrets", 0.6, ""),
			want: judged{"store/run.go", 6, 6, review.Likely}},
		"exact analyzer, snippet": {f: analyzerHit("analyzer:debug-statements", 0.95, `exec.Command("sh", "-c", name)`),
			want: judged{"store/run.go", 6, 6, review.Verified}},
		"heuristic analyzer, snippet": {f: analyzerHit("analyzer:env-files", 0.85, `exec.Command("sh", "-c", name)`),
			want: judged{"store/run.go", 6, 6, review.Likely}},
		"confidence does not make a model exact": {f: func() review.Finding { f := model(6, 6, ""); f.Confidence = 1; return f }(),
			want: judged{"store/run.go", 6, 6, review.Likely}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			h := head
			if tc.bareDiff {
				h = map[string]string{}
			}
			v, _ := newTestVerifier(t, h, modifiedFile())
			f := v.verify(t.Context(), tc.f)
			got := judged{f.FilePath, f.LineStart, f.LineEnd, f.VerificationStatus}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s\nreason: %s", diff, f.Reason)
			}
		})
	}
}

// TestVerifyHugeFile: a file whose diff is too large for GitHub to take
// comments on is still in the diff: an exact analyzer's finding on it is
// verified (and posted in the review body), not left unverified.
func TestVerifyHugeFile(t *testing.T) {
	lines := []string{strings.Repeat("x", diff.MaxCommentableDiffBytes), `AWS_KEY = "AKIAZ7VRSQ5TJN2XMY4W"`}
	v, idx := newTestVerifier(t, nil, addedFile("big.py", lines...))
	f := v.verify(t.Context(), review.Finding{FilePath: "big.py", LineStart: 2, LineEnd: 2, Severity: review.SeverityCritical,
		Agent: "analyzer:secrets", Confidence: 0.9})
	if f.VerificationStatus != review.Verified {
		t.Errorf("status = %s (%s), want verified", f.VerificationStatus, f.Reason)
	}
	if idx.Commentable("big.py", review.SideRight, 2) {
		t.Error("the test's file is commentable; make it larger")
	}
}
