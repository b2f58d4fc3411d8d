package lint_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/diff"
	"github.com/mergeguard/mergeguard/review/gomod"
	"github.com/mergeguard/mergeguard/review/gomod/gomodtest"
	"github.com/mergeguard/mergeguard/review/lint"
	"github.com/mergeguard/mergeguard/review/lint/buildcheck"
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
		{"dockerfile", lint.Dockerfile{Checks: buildcheck.Run}, "Dockerfile", "Dockerfile"},
		{"shellcheck", lint.NewShell(sc), "scripts/deploy.sh", "deploy.sh"},
		{"govet", lint.NewGoVet(gomodtest.Std(t), gomod.Limits{}), "server/server.go", "server.go"},
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
		for _, l := range lint.Default("", nil, nil) {
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
	rep, err := lint.NewGoVet(gomodtest.Std(t), gomod.Limits{}).Lint(context.Background(), []lint.File{changedLine(t, "server/server.go", src, 23)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "govet-line23", render(rep))
}

// TestGoVetSafetyDeadline: go vet stopped by its safety deadline reports
// no finding, whatever it had found, and says so; a caller's own
// cancellation stays an error.
func TestGoVetSafetyDeadline(t *testing.T) {
	files := []lint.File{added(t, "server/server.go", read(t, "server.go"))}
	full, err := lint.NewGoVet(gomodtest.Std(t), gomod.Limits{}).Lint(t.Context(), files, nil)
	if err != nil || len(full.Findings) == 0 {
		t.Fatalf("without a deadline: %d findings, %v; want some", len(full.Findings), err)
	}
	rep, err := lint.NewGoVet(gomodtest.Std(t), gomod.Limits{Deadline: time.Nanosecond}).Lint(t.Context(), files, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := lint.Report{Notes: []string{"govet stopped at its safety deadline of 1ns: its findings are left out of this review."}}
	if diff := cmp.Diff(want, rep); diff != "" {
		t.Errorf("report (-want +got):\n%s", diff)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := lint.NewGoVet(gomodtest.Std(t), gomod.Limits{}).Lint(ctx, files, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v, want context.Canceled", err)
	}
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
	vet, err := lint.NewGoVet(nil, gomod.Limits{}).Lint(ctx, []lint.File{added(t, "server/server.go", read(t, "server.go"))}, nil)
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
		rep, err := lint.NewGoVet(gomodtest.Std(t), gomod.Limits{}).Lint(context.Background(), []lint.File{added(t, "store/copy.go", changed)}, tt.tree)
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
	rep, err := lint.NewGoVet(gomodtest.Std(t), gomod.Limits{}).Lint(context.Background(), files, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Notes) != 1 || !strings.HasPrefix(rep.Notes[0], "govet could not fully check 3 packages, e.g. a: parse a/x.go") {
		t.Errorf("notes = %q, want one naming 3 packages", rep.Notes)
	}
}

// module is a Go module at the head revision: a package a that b imports.
func module(b string) tree {
	return tree{
		"go.mod": "module example.com/m\n\ngo 1.22\n",
		"a/a.go": `// Package a is the module's own package.
package a

import (
	"fmt"
	"sync"
)

// Name is a string.
const Name = "a"

// Pair is a struct of two fields.
type Pair struct{ X, Y int }

// Locked holds a lock.
type Locked struct{ mu sync.Mutex }

// Logf formats like fmt.Printf.
func Logf(format string, args ...any) { fmt.Printf(format, args...) }
`,
		"b/b.go": b,
	}
}

// TestGoVetModuleTypes: the module's own packages are type-checked from
// the head tree, so the passes see their types and functions, also in a
// package that uses a third-party one.
func TestGoVetModuleTypes(t *testing.T) {
	tests := []struct {
		name, b string
		want    []string
	}{
		{"constant of the module", "package b\n\nimport (\n\t\"fmt\"\n\n\t\"example.com/m/a\"\n)\n\nfunc F() { fmt.Printf(\"%d\\n\", a.Name) }\n",
			[]string{"b/b.go:9 | fmt.Printf format %d has arg a.Name of wrong type string"}},
		{"printf wrapper of the module", "package b\n\nimport \"example.com/m/a\"\n\nfunc F() { a.Logf(\"%d\", \"s\") }\n",
			[]string{`b/b.go:5 | example.com/m/a.Logf format %d has arg "s" of wrong type string`}},
		{"lock in a type of the module", "package b\n\nimport \"example.com/m/a\"\n\nfunc Copy(l a.Locked) a.Locked { return l }\n",
			[]string{"b/b.go:5 | Copy passes lock by value: example.com/m/a.Locked contains sync.Mutex",
				"b/b.go:5 | return copies lock value: example.com/m/a.Locked contains sync.Mutex"}},
		{"unkeyed literal of a type of the module", "package b\n\nimport \"example.com/m/a\"\n\nvar P = a.Pair{1, 2}\n",
			[]string{"b/b.go:5 | example.com/m/a.Pair struct literal uses unkeyed fields"}},
		{"beside a third-party package", "package b\n\nimport (\n\t\"fmt\"\n\n\t\"example.com/m/a\"\n\t\"github.com/x/y\"\n)\n\nfunc F() error {\n\tv, err := y.Do(y.Config{N: 1}, []y.T{{}})\n\tfmt.Printf(\"%d %v\\n\", a.Name, v)\n\treturn err\n}\n",
			[]string{"b/b.go:12 | fmt.Printf format %d has arg a.Name of wrong type string"}},
		{"shapes of third-party code", "package b\n\nimport (\n\t\"fmt\"\n\n\t\"github.com/x/y\"\n)\n\n" +
			"func G() (int, error) {\n\tvar p, q = y.Two()\n\tc := y.Config{1, 2}\n\t_ = []y.T{{}, {}}\n" +
			"\tf := func() (int, error) { return (y.Two()) }\n\tr, ok := y.M[p]\n\t_, _, _, _, _ = q, c, f, r, ok\n" +
			"\t_, _ = len(y.Items), append(y.List, 1, 2)\n\t_ = append(y.List, y.More...)\n\tclear(y.M)\n" +
			"\tp2, q2 := y.Pair\n\t_, _, _ = p2, q2, string(y.N)\n\tv := y.Get()\n\tif v == nil {\n\t\tfmt.Println(v, y.Get(), undeclared)\n\t\tfmt.Printf(\"%s %s\\n\", 1, v)\n\t}\n\treturn y.Two()\n}\n",
			[]string{"b/b.go:24 | fmt.Printf format %s has arg 1 of wrong type int"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := module(tt.b)
			rep, err := lint.NewGoVet(gomodtest.Std(t), gomod.Limits{}).Lint(context.Background(), []lint.File{added(t, "b/b.go", []byte(tt.b))}, tr)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range rep.Findings {
				got = append(got, fmt.Sprintf("%s:%d | %s", f.FilePath, f.LineStart, f.Title))
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("findings (-want +got):\n%s", d)
			}
			if len(rep.Notes) != 0 {
				t.Errorf("notes: %q", rep.Notes)
			}
		})
	}
}

// TestGoVetBudget: a review's loading stops at its limits, and a note says
// which limit left what untyped.
func TestGoVetBudget(t *testing.T) {
	b := "package b\n\nimport (\n\t\"fmt\"\n\n\t\"example.com/m/a\"\n)\n\nfunc F() { fmt.Printf(\"%d\\n\", a.Name) }\n"
	tests := []struct {
		name     string
		lim      gomod.Limits
		findings int
		notes    []string
	}{
		{"within", gomod.Limits{Packages: 2}, 1, nil},
		{"packages", gomod.Limits{Packages: 1}, 0, []string{"govet: the packages limit (1) was reached: 1 left untyped (e.g. example.com/m/a)."}},
		{"files", gomod.Limits{Files: 1}, 0, []string{"govet: the files limit (1) was reached: 1 left untyped (e.g. a/a.go)."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep, err := lint.NewGoVet(gomodtest.Std(t), tt.lim).Lint(context.Background(), []lint.File{added(t, "b/b.go", []byte(b))}, module(b))
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Findings) != tt.findings {
				t.Errorf("%d findings, want %d:\n%s", len(rep.Findings), tt.findings, render(rep))
			}
			if d := cmp.Diff(tt.notes, rep.Notes); d != "" {
				t.Errorf("notes (-want +got):\n%s", d)
			}
		})
	}
}
