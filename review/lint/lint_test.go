package lint_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/diff"
	"github.com/mergeguard/mergeguard/review/lint"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// added is a new file: every line of content is added.
func added(t *testing.T, path string, content []byte) lint.File {
	t.Helper()
	lines := strings.SplitAfter(strings.TrimSuffix(string(content), "\n"), "\n")
	var b strings.Builder
	fmt.Fprintf(&b, "diff --git a/%s b/%s\nnew file mode 100644\n--- /dev/null\n+++ b/%s\n@@ -0,0 +1,%d @@\n", path, path, path, len(lines))
	for _, l := range lines {
		b.WriteString("+" + strings.TrimSuffix(l, "\n") + "\n")
	}
	d, err := diff.ParseString(b.String())
	if err != nil {
		t.Fatal(err)
	}
	return lint.File{Diff: d.Files[0], Content: content}
}

// changedLine is a modified file whose only added line is line n.
func changedLine(t *testing.T, path string, content []byte, n int) lint.File {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(string(content), "\n"), "\n")
	var b strings.Builder
	fmt.Fprintf(&b, "diff --git a/%s b/%s\n--- a/%s\n+++ b/%s\n@@ -%d,1 +%d,1 @@\n-old\n+%s\n", path, path, path, path, n, n, lines[n-1])
	d, err := diff.ParseString(b.String())
	if err != nil {
		t.Fatal(err)
	}
	return lint.File{Diff: d.Files[0], Content: content}
}

func read(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func shellcheck(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("shellcheck")
	if err != nil {
		t.Skip("shellcheck is not installed (make test installs it: scripts/ensure-shellcheck.sh)")
	}
	return p
}

// render is one line per finding, for golden files.
func render(rep lint.Report) string {
	var b strings.Builder
	for _, f := range rep.Findings {
		fmt.Fprintf(&b, "%s:%d %s %s %.1f %s | %s\n", f.FilePath, f.LineStart, f.Severity, f.Category, f.Confidence, f.Agent, f.Title)
	}
	for _, n := range rep.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	return b.String()
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	p := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(p, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s (-want +got):\n%s", name, diff)
	}
}

func TestLinters(t *testing.T) {
	sc := shellcheck(t)
	tests := []struct {
		name   string
		linter lint.Linter
		path   string
		file   string
	}{
		{"actionlint", lint.NewActions(sc), ".github/workflows/ci.yml", "ci.yml"},
		{"dockerfile", lint.Dockerfile{}, "Dockerfile", "Dockerfile"},
		{"shellcheck", lint.NewShell(sc), "scripts/deploy.sh", "deploy.sh"},
		{"govet", lint.NewGoVet(true), "server/server.go", "server.go"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !tt.linter.Applies(tt.path) {
				t.Fatalf("%s does not apply to %s", tt.linter.Name(), tt.path)
			}
			rep, err := tt.linter.Lint(context.Background(), []lint.File{added(t, tt.path, read(t, tt.file))}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Findings) == 0 {
				t.Fatal("no findings")
			}
			golden(t, tt.name, render(rep))
			// Each finding names its check; the tools that give a column
			// have it carried (SARIF's rules and regions, the line format).
			for _, f := range rep.Findings {
				if f.Rule == "" || (tt.name != "dockerfile" && f.Column < 1) {
					t.Errorf("%s:%d %q: rule %q, column %d; want the check and its column", f.FilePath, f.LineStart, f.Title, f.Rule, f.Column)
				}
			}
		})
	}
}

func TestApplies(t *testing.T) {
	tests := []struct {
		path string
		want []string // the linters that apply
	}{
		{".github/workflows/ci.yml", []string{"analyzer:actionlint"}},
		{".github/workflows/sub/ci.yml", nil}, // GitHub runs only the folder's own files
		{".github/dependabot.yml", nil},
		{"Dockerfile", []string{"analyzer:dockerfile"}},
		{"build/app.Dockerfile", []string{"analyzer:dockerfile"}},
		{"Dockerfile.dev", []string{"analyzer:dockerfile"}},
		{"Containerfile", []string{"analyzer:dockerfile"}},
		{"pkg/server.go", []string{"analyzer:govet"}},
		{"vendor/x/y.go", nil},
		{"pkg/testdata/bad.go", nil},
		{"scripts/run.sh", []string{"analyzer:shellcheck"}},
		{"scripts/run.bash", []string{"analyzer:shellcheck"}},
		{"README.md", nil},
	}
	for _, tt := range tests {
		var got []string
		for _, l := range lint.Default("", true) {
			if l.Applies(tt.path) {
				got = append(got, l.Name())
			}
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.path, diff)
		}
	}
}

// TestOnlyAddedLines: a linter reports only on the lines the change added,
// not what was already wrong in the file.
func TestOnlyAddedLines(t *testing.T) {
	src := read(t, "server.go")
	rep, err := lint.NewGoVet(true).Lint(context.Background(), []lint.File{changedLine(t, "server/server.go", src, 23)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "govet-line23", render(rep))
}

// TestWithoutTools: without shellcheck and the standard library's sources
// the linters say what they did not check, and what needs neither still
// runs.
func TestWithoutTools(t *testing.T) {
	ctx := context.Background()
	sh, err := lint.NewShell("").Lint(ctx, []lint.File{added(t, "deploy.sh", read(t, "deploy.sh"))}, nil)
	if err != nil {
		t.Fatal(err)
	}
	vet, err := lint.NewGoVet(false).Lint(ctx, []lint.File{added(t, "server/server.go", read(t, "server.go"))}, nil)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "without-tools", render(sh)+render(vet))
}

// tree is a repository at the head revision.
type tree map[string]string

func (tr tree) ReadFile(_ context.Context, p string) ([]byte, error) {
	s, ok := tr[p]
	if !ok {
		return nil, fmt.Errorf("%s: %w", p, review.ErrNotFound)
	}
	return []byte(s), nil
}

func (tr tree) ListFiles(context.Context) ([]string, error) {
	var out []string
	for p := range tr {
		out = append(out, p)
	}
	return out, nil
}

// TestGoVetReadsThePackage: a changed file is type-checked with the other
// files of its package, so a type declared beside it is known.
func TestGoVetReadsThePackage(t *testing.T) {
	changed := []byte("package store\n\nfunc Copy(s Store) Store { return s }\n")
	tr := tree{
		"store/store.go":   "package store\n\nimport \"sync\"\n\n// Store stores.\ntype Store struct{ mu sync.Mutex }\n",
		"store/copy.go":    string(changed),
		"other/ignored.go": "package other\n",
	}
	for _, tt := range []struct {
		name string
		tree lint.Tree
		want int
	}{{"with its package", tr, 2}, {"alone", nil, 0}} {
		rep, err := lint.NewGoVet(true).Lint(context.Background(), []lint.File{added(t, "store/copy.go", changed)}, tt.tree)
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Findings) != tt.want {
			t.Errorf("%s: %d findings, want %d:\n%s", tt.name, len(rep.Findings), tt.want, render(rep))
		}
	}
}

// TestGoVetOneNoteForUnparsedPackages: changed Go files that do not parse
// are named in one note, not one per package.
func TestGoVetOneNoteForUnparsedPackages(t *testing.T) {
	bad := []byte("not go at all\n")
	files := []lint.File{added(t, "a/x.go", bad), added(t, "b/y.go", bad), added(t, "c/z.go", bad)}
	rep, err := lint.NewGoVet(true).Lint(context.Background(), files, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Notes) != 1 || !strings.HasPrefix(rep.Notes[0], "govet could not fully check 3 packages, e.g. a: parse a/x.go") {
		t.Errorf("notes = %q, want one naming 3 packages", rep.Notes)
	}
}
