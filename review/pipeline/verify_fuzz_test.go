package pipeline

import (
	"strconv"
	"strings"
	"testing"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/analyzer"
	"github.com/mergeguard/mergeguard/review/diff"
)

// validGitPath reports whether git can track a file at p: not empty, no
// NUL, relative, no empty, ".", ".." or ".git" component. Anything else —
// spaces and tabs anywhere, quotes, backslashes, newlines, non-UTF-8
// bytes — is a valid name.
func validGitPath(p string) bool {
	if p == "" || len(p) > 4096 || strings.ContainsRune(p, 0) {
		return false
	}
	for _, c := range strings.Split(p, "/") {
		if c == "" || c == "." || c == ".." || strings.EqualFold(c, ".git") {
			return false
		}
	}
	return true
}

// FuzzVerifyPath round-trips a file name through the whole verification
// path: the name → a git diff adding a file with a planted AWS key and a
// command injection (diff.Format, then diff.ParseString) → the secret
// scanner's finding and a model's findings → the verifier → the anchor.
// The name must come back byte for byte everywhere, the findings verified
// (the model's without a snippet likely) and anchored on commentable
// lines of that path, with a fingerprint that depends on the path.
func FuzzVerifyPath(f *testing.F) {
	for _, p := range []string{" settings.py", "settings.py ", "tab\tname.py", `q"uote.py`, `back\slash.py`,
		"ünï cødé.py", " dir /a b .py ", "line\nbreak.py", "\"quoted\"", "a b/c b/d.py", "latin1-\xe9.py", "-", "x\\"} {
		f.Add(p)
	}
	secrets := analyzer.NewSecrets()
	content := strings.Join(plantedLines, "\n") + "\n"
	f.Fuzz(func(t *testing.T, path string) {
		if !validGitPath(path) {
			t.Skip()
		}
		d, err := diff.ParseString(diff.Format(&diff.Diff{Files: []*diff.File{addedFile(path, plantedLines...)}}))
		if err != nil {
			t.Fatalf("the diff of %q does not parse: %v", path, err)
		}
		if len(d.Files) != 1 || d.Files[0].Path() != path {
			t.Fatalf("the diff of %q parses into %d files, the first %q", path, len(d.Files), d.Files[0].Path())
		}
		idx := diff.NewIndex(d)
		v := newVerifier(&memSource{head: map[string]string{path: content}}, d, idx)
		found, err := secrets.Analyze(t.Context(), d.Files)
		if err != nil || len(found) != 1 {
			t.Fatalf("secret scan of %q: %v, %d findings", path, err, len(found))
		}
		found[0].Agent = secrets.Name()
		cases := []struct {
			f    review.Finding
			want review.VerificationStatus
		}{
			{found[0], review.Verified},
			{review.Finding{FilePath: path, LineStart: 3, LineEnd: 3, Agent: "reviewer:1", CodeSnippet: "os.system(input())"}, review.Verified},
			{review.Finding{FilePath: strconv.Quote(path), LineStart: 3, LineEnd: 3, Agent: "reviewer:1"}, review.Likely},
			{review.Finding{FilePath: diff.ShowPath(path), LineStart: 3, LineEnd: 3, Agent: "reviewer:1"}, review.Likely},
		}
		for _, c := range cases {
			got := v.verify(t.Context(), c.f)
			if got.FilePath != path || got.VerificationStatus != c.want {
				t.Errorf("%q cited as %q: %q %s (%s), want %s", path, c.f.FilePath, got.FilePath, got.VerificationStatus, got.Reason, c.want)
			}
			if !idx.CommentableRange(got.FilePath, got.Side, got.LineStart, got.LineEnd) {
				t.Errorf("%q:%d-%d is not anchored on the diff", got.FilePath, got.LineStart, got.LineEnd)
			}
		}
		other := v.verify(t.Context(), review.Finding{FilePath: path, LineStart: 2, LineEnd: 2, Agent: "analyzer:secrets", Confidence: 0.9})
		w, _ := newTestVerifier(t, nil, addedFile(path+"x", plantedLines...))
		moved := w.verify(t.Context(), review.Finding{FilePath: path + "x", LineStart: 2, LineEnd: 2, Agent: "analyzer:secrets", Confidence: 0.9})
		if other.Fingerprint == "" || other.Fingerprint == moved.Fingerprint {
			t.Errorf("fingerprint %q of %q is not tied to the path", other.Fingerprint, path)
		}
	})
}
