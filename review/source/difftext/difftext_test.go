package difftext_test

import (
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/diff"
	"github.com/mergeguard/mergeguard/review/source/difftext"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// fixtureDir holds the real diffs, review/diff/testdata.
const fixtureDir = "../../diff/testdata/"

// fixtures returns the paths of the real diffs of fixtureDir that have a
// golden file of their Files here, testdata/<name>.files.golden.
func fixtures(t *testing.T) []string {
	t.Helper()
	goldens, err := filepath.Glob("testdata/*.files.golden")
	if err != nil || len(goldens) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	names := make([]string, len(goldens))
	for i, g := range goldens {
		names[i] = fixtureDir + strings.TrimSuffix(filepath.Base(g), ".files.golden") + ".diff"
	}
	return names
}

func load(t *testing.T, name string) (string, *difftext.Source) {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	src, err := difftext.New(string(b))
	if err != nil {
		t.Fatalf("New(%s): %v", name, err)
	}
	return string(b), src
}

// TestFilesGolden records Files and ListFiles of every fixture.
func TestFilesGolden(t *testing.T) {
	for _, name := range fixtures(t) {
		t.Run(filepath.Base(name), func(t *testing.T) {
			_, src := load(t, name)
			files, err := src.Files(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			list, err := src.ListFiles(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			got, err := json.MarshalIndent(map[string]any{"files": files, "list_files": list}, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			golden := "testdata/" + strings.TrimSuffix(filepath.Base(name), ".diff") + ".files.golden"
			if *update {
				if err := os.WriteFile(golden, append(got, '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update)", err)
			}
			if d := cmp.Diff(string(want), string(got)+"\n"); d != "" {
				t.Errorf("files (-want +got):\n%s", d)
			}
		})
	}
}

var indexLine = regexp.MustCompile(`(?m)^index ([0-9a-f]+)\.\.([0-9a-f]+)`)

// gitBlobHash is the object id git gives content.
func gitBlobHash(b []byte) string {
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(b))
	h.Write(b)
	return hex.EncodeToString(h.Sum(nil))
}

// TestReadFileMatchesGitBlobs rebuilds every added file's head and every
// deleted file's base and checks them against the blob ids of the diff's
// index lines: the content is byte for byte what git stored.
func TestReadFileMatchesGitBlobs(t *testing.T) {
	checked := 0
	for _, name := range fixtures(t) {
		text, src := load(t, name)
		blocks := strings.Split(text, "\ndiff --git ")
		d, err := diff.ParseString(text)
		if err != nil {
			t.Fatal(err)
		}
		files := d.Files
		if len(blocks) != len(files) {
			t.Fatalf("%s: %d blocks for %d files", name, len(blocks), len(files))
		}
		for i, f := range files {
			m := indexLine.FindStringSubmatch(blocks[i])
			var path, want string
			var rev review.Revision
			switch {
			case f.Binary || m == nil:
				continue
			case f.Status == diff.Added:
				path, rev, want = f.NewPath, review.Head, m[2]
			case f.Status == diff.Deleted:
				path, rev, want = f.OldPath, review.Base, m[1]
			default:
				for _, r := range []review.Revision{review.Head, review.Base} {
					if _, err := src.ReadFile(t.Context(), f.Path(), r); !errors.Is(err, review.ErrNotFound) {
						t.Errorf("%s: ReadFile(%s, %s) of a %s file: err = %v, want ErrNotFound", name, f.Path(), r, f.Status, err)
					}
				}
				continue
			}
			b, err := src.ReadFile(t.Context(), path, rev)
			if err != nil {
				t.Errorf("%s: ReadFile(%s, %s): %v", name, path, rev, err)
				continue
			}
			if got := gitBlobHash(b); !strings.HasPrefix(got, want) {
				t.Errorf("%s: %s at %s hashes to %s, want %s...", name, path, rev, got, want)
			}
			checked++
		}
	}
	if checked < 8 {
		t.Errorf("only %d files checked", checked)
	}
}

func TestReadFileNotFound(t *testing.T) {
	_, src := load(t, fixtureDir+"go-reviewdog_binary-png-added_a3f39fd.diff")
	tests := []struct {
		path string
		rev  review.Revision
	}{
		{"assets/reviewdog.logo.png", review.Head}, // binary
		{"assets/reviewdog.logo.png", review.Base}, // added: no base
		{"README.md", review.Head},                 // modified: partial
		{"nope.go", review.Head},                   // not in the diff
	}
	for _, tt := range tests {
		if _, err := src.ReadFile(t.Context(), tt.path, tt.rev); !errors.Is(err, review.ErrNotFound) {
			t.Errorf("ReadFile(%s, %s) err = %v, want ErrNotFound", tt.path, tt.rev, err)
		}
	}
}

func TestCRLFContentKept(t *testing.T) {
	_, src := load(t, fixtureDir+"ts-anc95-chatgpt-codereview_pr198-crlf-new-file-and-yaml_55767bc.diff")
	b, err := src.ReadFile(t.Context(), "src/test_bot/main.py", review.Head)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(b), "def main():\r\n") || !strings.HasSuffix(string(b), "\r\n    main()") {
		t.Errorf("content = %q", b)
	}
}

func TestUnsupportedAndMetadata(t *testing.T) {
	text, src := load(t, fixtureDir+"go-reviewdog_rename-with-changes_223ba6c.diff")
	if _, err := src.Commits(t.Context(), 20); !errors.Is(err, review.ErrUnsupported) {
		t.Errorf("Commits err = %v, want ErrUnsupported", err)
	}
	if _, err := src.Blame(t.Context(), "x", 1); !errors.Is(err, review.ErrUnsupported) {
		t.Errorf("Blame err = %v, want ErrUnsupported", err)
	}
	if c, err := src.Change(t.Context()); err != nil || !cmp.Equal(c, review.Change{}) {
		t.Errorf("Change = %+v, %v; want empty", c, err)
	}
	if d, err := src.Diff(t.Context()); err != nil || d != text {
		t.Errorf("Diff returned other text (err %v)", err)
	}
}

func TestNew(t *testing.T) {
	if _, err := difftext.New("this is not a diff\n"); err == nil {
		t.Error("New accepted text without a file header")
	}
	if _, err := difftext.New("diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n-a\n"); err == nil {
		t.Error("New accepted a hunk shorter than its header")
	}
	src, err := difftext.New("")
	if err != nil {
		t.Fatalf("New(empty): %v", err)
	}
	if files, _ := src.Files(t.Context()); len(files) != 0 {
		t.Errorf("empty diff has files %v", files)
	}
}

// TestWithTree: with a checkout, a modified file is read whole from it
// when it agrees with the diff, never when it is another revision; the
// checkout's files are listed, .git left out.
func TestWithTree(t *testing.T) {
	const d = "diff --git a/run.sh b/run.sh\n--- a/run.sh\n+++ b/run.sh\n@@ -2,3 +2,3 @@\n set -e\n-echo a\n+echo b\n exit 0\n"
	head := "#!/bin/bash\nset -e\necho b\nexit 0\n"
	tests := []struct {
		name  string
		tree  fstest.MapFS
		want  string
		found bool
	}{
		{"agrees", fstest.MapFS{"run.sh": {Data: []byte(head)}}, head, true},
		{"agrees with CRLF", fstest.MapFS{"run.sh": {Data: []byte(strings.ReplaceAll(head, "\n", "\r\n"))}}, strings.ReplaceAll(head, "\n", "\r\n"), true},
		{"the base revision", fstest.MapFS{"run.sh": {Data: []byte("#!/bin/bash\nset -e\necho a\nexit 0\n")}}, "", false},
		{"a line moved", fstest.MapFS{"run.sh": {Data: []byte("#!/bin/bash\n\nset -e\necho b\nexit 0\n")}}, "", false},
		{"shorter", fstest.MapFS{"run.sh": {Data: []byte("#!/bin/bash\nset -e\n")}}, "", false},
		{"missing", fstest.MapFS{}, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src, err := difftext.New(d)
			if err != nil {
				t.Fatal(err)
			}
			b, err := src.WithTree(tt.tree).ReadFile(t.Context(), "run.sh", review.Head)
			if tt.found != (err == nil) || string(b) != tt.want {
				t.Errorf("ReadFile = %q, %v; want %q (found %v)", b, err, tt.want, tt.found)
			}
			if !tt.found && !errors.Is(err, review.ErrNotFound) {
				t.Errorf("err = %v, want ErrNotFound", err)
			}
		})
	}
	src, err := difftext.New(d)
	if err != nil {
		t.Fatal(err)
	}
	tree := fstest.MapFS{"run.sh": {Data: []byte(head)}, "lib/x.sh": {Data: []byte("x\n")}, ".git/HEAD": {Data: []byte("ref\n")}}
	files, err := src.WithTree(tree).ListFiles(t.Context())
	if diff := cmp.Diff([]string{"lib/x.sh", "run.sh"}, files); err != nil || diff != "" {
		t.Errorf("ListFiles: %v (-want +got):\n%s", err, diff)
	}
	if _, err := src.ReadFile(t.Context(), "run.sh", review.Head); !errors.Is(err, review.ErrNotFound) {
		t.Errorf("without a tree, a modified file is read: %v", err)
	}
}
