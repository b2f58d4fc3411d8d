package codectx

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mergeguard/mergeguard/review"
)

const goMod = "module example.com/m\n\ngo 1.22\n"

// TestCollectGoTypes: Go names resolve with go/types over the module: a
// method to its receiver's type, constants and package variables of
// other packages, callers in importing packages and tests; builtins, the
// standard library and same-named functions of other packages never.
func TestCollectGoTypes(t *testing.T) {
	if !Available {
		t.Skip("no parser without cgo")
	}
	tests := []struct {
		name       string
		base, head repo
		file       string
		want       []string
	}{
		{
			name: "a method call resolves to the receiver's type, not another Len",
			base: repo{
				"go.mod":       goMod,
				"geo/shape.go": "package geo\n\ntype Square struct{ n int }\n\n// Len is the side.\nfunc (s Square) Len() int { return s.n }\n\ntype Path struct{ pts []int }\n\nfunc (p Path) Len() int { return len(p.pts) }\n",
				"geo/area.go":  "package geo\n\nfunc Area(s Square) int {\n\treturn 0\n}\n",
			},
			head: repo{"geo/area.go": "package geo\n\nfunc Area(s Square) int {\n\treturn s.Len() * s.Len()\n}\n"},
			file: "geo/area.go",
			want: []string{"definition geo/shape.go:5-6 Square.Len"},
		},
		{
			name: "builtins and the standard library never match the module's names",
			base: repo{
				"go.mod":        goMod,
				"util/util.go":  "package util\n\n// Error is not errors' Error.\ntype E struct{}\n\nfunc (E) Error() string { return \"\" }\n\nfunc append(s string) string { return s }\n\nfunc String() string { return \"\" }\n",
				"app/report.go": "package app\n\nimport \"fmt\"\n\nfunc Report(err error, xs []int) string {\n\treturn \"\"\n}\n",
			},
			head: repo{"app/report.go": "package app\n\nimport \"fmt\"\n\nfunc Report(err error, xs []int) string {\n\txs = append(xs, len(xs))\n\treturn fmt.Sprint(err.Error(), xs, string(rune(65)))\n}\n"},
			file: "app/report.go",
		},
		{
			name: "constants and package variables of another package of the module",
			base: repo{
				"go.mod":           goMod,
				"limits/limits.go": "package limits\n\nconst (\n\t// MaxRetries bounds the attempts.\n\tMaxRetries = 3\n\tOther      = 4\n)\n\n// Backoff is the first wait.\nvar Backoff = 2\n",
				"net/client.go":    "package net\n\nimport \"example.com/m/limits\"\n\nfunc Send() int {\n\treturn limits.Other\n}\n",
			},
			head: repo{"net/client.go": "package net\n\nimport \"example.com/m/limits\"\n\nfunc Send() int {\n\treturn limits.MaxRetries * limits.Backoff\n}\n"},
			file: "net/client.go",
			want: []string{"definition limits/limits.go:4-5 MaxRetries", "definition limits/limits.go:9-10 Backoff"},
		},
		{
			name: "callers in an importing package and in tests, not another package's Do",
			base: repo{
				"go.mod":          goMod,
				"job/job.go":      "package job\n\n// Do runs n jobs.\nfunc Do(n int) int {\n\treturn n\n}\n",
				"job/job_test.go": "package job\n\nimport \"testing\"\n\nfunc TestDo(t *testing.T) {\n\tif Do(1) != 1 {\n\t\tt.Fatal()\n\t}\n}\n",
				"cli/run.go":      "package cli\n\nimport \"example.com/m/job\"\n\nfunc Run() int {\n\treturn job.Do(2)\n}\n",
				"other/do.go":     "package other\n\nfunc Do(n int) int { return n }\n\nfunc use() int { return Do(3) }\n",
			},
			head: repo{"job/job.go": "package job\n\n// Do runs n jobs.\nfunc Do(n int) int {\n\treturn n * 2\n}\n"},
			file: "job/job.go",
			want: []string{"call site job/job_test.go:5-9 Do", "call site cli/run.go:5-7 Do"},
		},
		{
			name: "a definition declared on a changed line of another changed file is in the diff already",
			base: repo{
				"go.mod":     goMod,
				"job/job.go": "package job\n\n// Do runs n jobs.\nfunc Do(n int) int {\n\treturn n\n}\n\n// Max is the most jobs.\nconst Max = 3\n",
				"cli/run.go": "package cli\n\nfunc Run() int {\n\treturn 0\n}\n",
			},
			head: repo{
				"job/job.go": "package job\n\n// Do runs n jobs.\nfunc Do(n, m int) int {\n\treturn n\n}\n\n// Max is the most jobs.\nconst Max = 3\n",
				"cli/run.go": "package cli\n\nimport \"example.com/m/job\"\n\nfunc Run() int {\n\treturn job.Do(job.Max, 1)\n}\n",
			},
			file: "cli/run.go",
			want: []string{"definition job/job.go:8-9 Max"},
		},
		{
			name: "callers of a method, not of another type's method of that name",
			base: repo{
				"go.mod":       goMod,
				"store/db.go":  "package store\n\ntype DB struct{}\n\nfunc (d *DB) Close() error {\n\treturn nil\n}\n",
				"store/tx.go":  "package store\n\ntype Tx struct{}\n\nfunc (t Tx) Close() error { return nil }\n\nfunc finish(t Tx) error { return t.Close() }\n",
				"cmd/main.go":  "package main\n\nimport \"example.com/m/store\"\n\nfunc main() {\n\tvar d store.DB\n\t_ = d.Close()\n}\n",
				"cmd/other.go": "package main\n\ntype closer struct{}\n\nfunc (closer) Close() error { return nil }\n\nfunc shut() { _ = closer{}.Close() }\n",
			},
			head: repo{"store/db.go": "package store\n\ntype DB struct{ closed bool }\n\nfunc (d *DB) Close() error {\n\td.closed = true\n\treturn nil\n}\n"},
			file: "store/db.go",
			want: []string{"call site cmd/main.go:5-8 DB.Close"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkSnippetsWith(t, goOptions(t), tt.base, tt.head, tt.file, tt.want) })
	}
}

// TestCollectGoStdPositions: the standard library's objects have their
// positions in another file set, so a use of one never becomes a snippet
// of whatever module file has that offset.
func TestCollectGoStdPositions(t *testing.T) {
	if !Available {
		t.Skip("no parser without cgo")
	}
	base := repo{"go.mod": goMod, "app/app.go": "package app\n\nfunc F() error {\n\treturn nil\n}\n"}
	for i := range 5 { // files of the module past the standard library's offsets
		base[fmt.Sprintf("big/b%d.go", i)] = "package big\n\n" + strings.Repeat("// padding so that the file set's offsets reach the standard library's.\n", 10000)
	}
	head := repo{"app/app.go": "package app\n\nimport (\n\t\"errors\"\n\t\"fmt\"\n\t\"os\"\n\t\"strings\"\n\n\t_ \"example.com/m/big\"\n)\n\nfunc F() error {\n\treturn fmt.Errorf(\"%w %s\", errors.New(os.Getenv(\"A\")), strings.Join(os.Args, \" \"))\n}\n"}
	checkSnippetsWith(t, goOptions(t), base, head, "app/app.go", nil)
}

// TestCollectGoUntypedFallsBack: a changed Go file the loader does not
// type-check (a build tag excludes it) is resolved by name.
func TestCollectGoUntypedFallsBack(t *testing.T) {
	if !Available {
		t.Skip("no parser without cgo")
	}
	base := repo{
		"go.mod":      goMod,
		"gen/tool.go": "//go:build ignore\n\npackage main\n\nfunc main() {\n}\n",
		"gen/help.go": "package gen\n\n// Help prints help.\nfunc Help() {}\n",
	}
	head := repo{"gen/tool.go": "//go:build ignore\n\npackage main\n\nfunc main() {\n\tHelp()\n}\n"}
	checkSnippetsWith(t, goOptions(t), base, head, "gen/tool.go", []string{"definition gen/help.go:3-4 Help"})
}

// TestCollectGoSameOnSlowMachine: the typed Go context of a change with
// many importers is the same on an idle and on a slow machine.
func TestCollectGoSameOnSlowMachine(t *testing.T) {
	if !Available {
		t.Skip("no parser without cgo")
	}
	base := repo{"go.mod": goMod, "core/price.go": "package core\n\nfunc Price(c int) int {\n\treturn c / 100\n}\n"}
	for i := range 30 {
		base[fmt.Sprintf("shop/m%02d/m.go", i)] = fmt.Sprintf("package m%02d\n\nimport \"example.com/m/core\"\n\nfunc Show() int {\n\treturn core.Price(%d)\n}\n", i, i)
	}
	head := repo{"core/price.go": "package core\n\nfunc Price(c int) int {\n\treturn c * 3 / 100\n}\n"}
	d := gitDiff(t, base, head)
	idle, err := Collect(t.Context(), merged(base, head), d.Files, goOptions(t))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(idle.ByFile["core/price.go"]); n != maxTypedCallers {
		t.Errorf("%d snippets, want the %d callers the cap allows", n, maxTypedCallers)
	}
	slow, err := Collect(t.Context(), slowRepo{merged(base, head), 5e6}, d.Files, goOptions(t))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(prompt(idle), prompt(slow)); diff != "" {
		t.Errorf("slow machine (-idle +slow):\n%s", diff)
	}
}

// TestCollectGoWithoutModule: Go files with no go.mod above them are
// searched by name: without a module path the loader cannot resolve
// their imports of each other.
func TestCollectGoWithoutModule(t *testing.T) {
	if !Available {
		t.Skip("no parser without cgo")
	}
	base := repo{
		"job/job.go": "package job\n\n// Do runs n jobs.\nfunc Do(n int) int {\n\treturn n\n}\n",
		"cli/run.go": "package cli\n\nimport \"example.com/m/job\"\n\nfunc Run() int {\n\treturn job.Do(2)\n}\n",
	}
	head := repo{"job/job.go": "package job\n\n// Do runs n jobs.\nfunc Do(n int) int {\n\treturn n * 2\n}\n"}
	checkSnippetsWith(t, goOptions(t), base, head, "job/job.go", []string{"call site cli/run.go:5-7 Do"})
}

// countingRepo counts the reads of a repo.
type countingRepo struct {
	repo
	mu    sync.Mutex
	reads map[string]int
	lists int
}

func (r *countingRepo) ReadFile(ctx context.Context, p string, rev review.Revision) ([]byte, error) {
	r.mu.Lock()
	r.reads[p]++
	r.mu.Unlock()
	return r.repo.ReadFile(ctx, p, rev)
}

func (r *countingRepo) ListFiles(ctx context.Context) ([]string, error) {
	r.mu.Lock()
	r.lists++
	r.mu.Unlock()
	return r.repo.ListFiles(ctx)
}

// TestCollectGoReadsOnce: the typed resolver's loader reuses the
// search's listing and the files it read; nothing is read twice.
func TestCollectGoReadsOnce(t *testing.T) {
	if !Available {
		t.Skip("no parser without cgo")
	}
	base := repo{"go.mod": goMod, "core/price.go": "package core\n\nfunc Price(c int) int {\n\treturn c / 100\n}\n"}
	for i := range 5 {
		base[fmt.Sprintf("shop/m%d/m.go", i)] = fmt.Sprintf("package m%d\n\nimport \"example.com/m/core\"\n\nfunc Show() int {\n\treturn core.Price(%d)\n}\n", i, i)
	}
	head := repo{"core/price.go": "package core\n\nfunc Price(c int) int {\n\treturn c * 3 / 100\n}\n"}
	d := gitDiff(t, base, head)
	r := &countingRepo{repo: merged(base, head), reads: map[string]int{}}
	res, err := Collect(t.Context(), r, d.Files, goOptions(t))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(res.ByFile["core/price.go"]); n != 5 {
		t.Errorf("%d snippets, want the 5 callers", n)
	}
	if r.lists != 1 {
		t.Errorf("the head listed %d times, want once", r.lists)
	}
	for p, n := range r.reads {
		if n > 1 {
			t.Errorf("%s read %d times, want once", p, n)
		}
	}
}
