package gomod_test

import (
	"context"
	"go/build"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mergeguard/mergeguard/review/gomod"
	"github.com/mergeguard/mergeguard/review/gomod/gomodtest"
)

// dirTree is a Tree of a directory of testdata.
type dirTree struct{ root string }

func (d dirTree) ReadFile(_ context.Context, p string) ([]byte, error) {
	return os.ReadFile(filepath.Join(d.root, filepath.FromSlash(p)))
}

func (d dirTree) ListFiles(context.Context) ([]string, error) {
	var out []string
	err := fs.WalkDir(os.DirFS(d.root), ".", func(p string, e fs.DirEntry, err error) error {
		if err == nil && !e.IsDir() {
			out = append(out, p)
		}
		return err
	})
	return out, err
}

// summary is what a test checks of a Package.
type summary struct {
	Module, Path, Name string
	Test, XTest        bool
	Files, Imports     []string
	Untyped            []string
	TypeErrors         []string
	ParseErrors        []string
}

func summarize(p *gomod.Package) summary {
	s := summary{Module: p.Module.Path, Path: p.Path, Name: p.Name, Test: p.Test, XTest: p.XTest,
		Files: p.Filenames, Untyped: p.Untyped}
	for ip := range p.Imports {
		s.Imports = append(s.Imports, ip)
	}
	sort.Strings(s.Imports)
	for _, e := range p.TypeErrors {
		_, msg, _ := strings.Cut(e.Error(), ": ")
		s.TypeErrors = append(s.TypeErrors, msg)
	}
	for f := range p.ParseErrors {
		s.ParseErrors = append(s.ParseErrors, f)
	}
	sort.Strings(s.ParseErrors)
	return s
}

func TestLoad(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the tags fixture builds on linux")
	}
	s := gomodtest.Std(t)
	tests := []struct {
		dir   string
		tests bool
		want  []summary
	}{
		{"b", false, []summary{{Module: "example.com/mod", Path: "example.com/mod/b", Name: "b", Files: []string{"b/b.go"},
			Imports: []string{"example.com/mod/a"}, Untyped: []string{"example.com/mod/nested/x", "github.com/third/party"},
			TypeErrors: []string{"undefined: party.Thing", "undefined: x.Name"}}}},
		{"c", true, []summary{
			{Module: "example.com/mod", Path: "example.com/mod/c", Name: "c", Test: true, Files: []string{"c/c.go", "c/export_test.go"}},
			{Module: "example.com/mod", Path: "example.com/mod/c_test", Name: "c_test", XTest: true, Files: []string{"c/c_test.go"},
				Imports: []string{"example.com/mod/c"}},
		}},
		{"c", false, []summary{{Module: "example.com/mod", Path: "example.com/mod/c", Name: "c", Files: []string{"c/c.go"}}}},
		{"a", true, []summary{{Module: "example.com/mod", Path: "example.com/mod/a", Name: "a", Files: []string{"a/a.go"}}}},
		{"tags", false, []summary{{Module: "example.com/mod", Path: "example.com/mod/tags", Name: "tags", Files: []string{"tags/tags.go", "tags/v_linux.go"}}}},
		{"sub", false, []summary{{Module: "example.com/mod", Path: "example.com/mod/sub", Name: "sub", Files: []string{"sub/ok.go"}, ParseErrors: []string{"sub/broken.go"}}}},
		{"nested/x", false, []summary{{Module: "example.com/nested", Path: "example.com/nested/x", Name: "x", Files: []string{"nested/x/x.go"}}}},
		{"nowhere", true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.dir, func(t *testing.T) {
			l := gomod.NewLoader(dirTree{"testdata/mod"}, s, gomod.Limits{})
			pkgs, err := l.Load(context.Background(), tt.dir, tt.tests)
			if err != nil {
				t.Fatal(err)
			}
			var got []summary
			for _, p := range pkgs {
				got = append(got, summarize(p))
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("Load(%s) (-want +got):\n%s", tt.dir, d)
			}
			if n := l.Notes(); len(n) != 0 {
				t.Errorf("notes: %q", n)
			}
		})
	}
}

// TestLoadTypesTheModule: a type of the module's own package is known to
// its importer, with its methods and fields.
func TestLoadTypesTheModule(t *testing.T) {
	l := gomod.NewLoader(dirTree{"testdata/mod"}, gomodtest.Std(t), gomod.Limits{})
	pkgs, err := l.Load(context.Background(), "b", false)
	if err != nil || len(pkgs) != 1 {
		t.Fatalf("Load: %v, %d packages", err, len(pkgs))
	}
	use := pkgs[0].Types.Scope().Lookup("Use")
	if got, want := use.Type().String(), "func(t example.com/mod/a.T) string"; got != want {
		t.Errorf("Use: %s, want %s", got, want)
	}
	var paths []string
	for _, p := range l.Packages() {
		paths = append(paths, p.Path)
	}
	if d := cmp.Diff([]string{"example.com/mod/a", "example.com/mod/b"}, paths); d != "" {
		t.Errorf("Packages (-want +got):\n%s", d)
	}
}

func TestLoadLimits(t *testing.T) {
	tests := []struct {
		name  string
		lim   gomod.Limits
		std   bool
		dir   string
		notes []string
	}{
		{"packages", gomod.Limits{Packages: 1}, true, "b",
			[]string{"gomod: the packages limit (1) was reached: 1 left untyped (e.g. example.com/mod/a)."}},
		{"files", gomod.Limits{Files: 1}, true, "c",
			[]string{"gomod: the files limit (1) was reached: 2 left untyped (e.g. c/c_test.go)."}},
		{"bytes", gomod.Limits{Bytes: 100}, true, "a",
			[]string{"gomod: the bytes limit (100) was reached: 1 left untyped (e.g. a/a.go)."}},
		{"file size", gomod.Limits{FileBytes: 100}, true, "c",
			[]string{"gomod: the file size limit (100) was reached: 2 left untyped (e.g. c/c.go)."}},
		{"files per package", gomod.Limits{FilesPerPackage: 1}, true, "c",
			[]string{"gomod: the files per package limit (1) was reached: 2 left untyped (e.g. c/c_test.go)."}},
		{"no standard library", gomod.Limits{}, false, "a",
			[]string{"gomod: the Go standard library is not available on this machine, so 1 standard imports were left untyped (e.g. fmt)."}},
		{"within", gomod.Limits{Packages: 2}, true, "b", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s *gomod.Std
			if tt.std {
				s = gomodtest.Std(t)
			}
			l := gomod.NewLoader(dirTree{"testdata/mod"}, s, tt.lim)
			if _, err := l.Load(context.Background(), tt.dir, true); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.notes, l.Notes()); d != "" {
				t.Errorf("Notes (-want +got):\n%s", d)
			}
		})
	}
}

// TestStdKinds: the standard library from export data, from source, or
// not at all; each types the fixture's fmt.Sprintf.
func TestStdKinds(t *testing.T) {
	goCmd := filepath.Join(build.Default.GOROOT, "bin", "go")
	tests := []struct {
		name string
		std  *gomod.Std
		want string
	}{
		{"export data", gomod.NewStd(goCmd, true), "export data"},
		{"source", gomod.NewStd("", true), "source"},
		{"go command fails, source", gomod.NewStd(filepath.Join(t.TempDir(), "no-go"), true), "source"},
		{"none", gomod.NewStd("", false), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.want == "source" && testing.Short() {
				// 1 s of type-checking, and 1 s more of go test hashing
				// the 16,000 files it opens for its result cache.
				t.Skip("slow: types fmt and its imports, runtime among them, from source; skipped by -short, make test runs it")
			}
			if got := tt.std.Kind(context.Background()); got != tt.want {
				t.Fatalf("Kind: %q, want %q", got, tt.want)
			}
			l := gomod.NewLoader(dirTree{"testdata/mod"}, tt.std, gomod.Limits{})
			pkgs, err := l.Load(context.Background(), "a", false)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := len(pkgs[0].TypeErrors) == 0, tt.want != ""; got != want {
				t.Errorf("typed without errors: %v, want %v (%v)", got, want, pkgs[0].TypeErrors)
			}
		})
	}
}

func TestModuleImportPath(t *testing.T) {
	tests := []struct {
		m         gomod.Module
		dir, path string
		in        bool
	}{
		{gomod.Module{Dir: ".", Path: "example.com/m"}, ".", "example.com/m", true},
		{gomod.Module{Dir: ".", Path: "example.com/m"}, "a/b", "example.com/m/a/b", true},
		{gomod.Module{Dir: "tools", Path: "example.com/t"}, "tools/gen", "example.com/t/gen", true},
		{gomod.Module{Dir: "x"}, "x", "x", false},
	}
	for _, tt := range tests {
		if got := tt.m.ImportPath(tt.dir); got != tt.path {
			t.Errorf("%v.ImportPath(%s) = %s, want %s", tt.m, tt.dir, got, tt.path)
		}
		dir, in := tt.m.DirOf(tt.path)
		if in != tt.in || in && dir != tt.dir {
			t.Errorf("%v.DirOf(%s) = %s, %v, want %s, %v", tt.m, tt.path, dir, in, tt.dir, tt.in)
		}
	}
}

// TestStdShared: one Std serves loaders on many goroutines, as the server
// runs reviews, and each sees the same standard library.
func TestStdShared(t *testing.T) {
	s := gomodtest.Std(t)
	const n = 4
	types := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			l := gomod.NewLoader(dirTree{"testdata/mod"}, s, gomod.Limits{})
			pkgs, err := l.Load(context.Background(), "a", false)
			if err != nil || len(pkgs) != 1 || len(pkgs[0].TypeErrors) != 0 {
				t.Errorf("Load: %v, %d packages", err, len(pkgs))
				return
			}
			types[i] = pkgs[0].Types.Scope().Lookup("Logf").Type().String()
		})
	}
	wg.Wait()
	for i := range n {
		if types[i] != types[0] || types[0] == "" {
			t.Errorf("goroutine %d: Logf is %q, goroutine 0: %q", i, types[i], types[0])
		}
	}
}

// TestUntypedImportNames: an untyped import is named as its path suggests,
// so a use of it is an unknown member, not an unknown name.
func TestUntypedImportNames(t *testing.T) {
	tests := []struct{ path, use string }{
		{"github.com/x/go-isatty", "isatty"},
		{"gopkg.in/yaml.v3", "yaml"},
		{"github.com/x/mux/v2", "mux"},
		{"github.com/x/client-go", "client"},
		{"github.com/x/some-lib", "some_lib"},
	}
	for _, tt := range tests {
		src := "package p\n\nimport \"" + tt.path + "\"\n\nvar V = " + tt.use + ".X\n"
		tr := mapTree{"go.mod": "module example.com/m\n", "p/p.go": src}
		pkgs, err := gomod.NewLoader(tr, nil, gomod.Limits{}).Load(context.Background(), "p", false)
		if err != nil || len(pkgs) != 1 {
			t.Fatalf("%s: %v, %d packages", tt.path, err, len(pkgs))
		}
		want := []string{"undefined: " + tt.use + ".X"}
		if d := cmp.Diff(want, summarize(pkgs[0]).TypeErrors); d != "" {
			t.Errorf("%s (-want +got):\n%s", tt.path, d)
		}
	}
}

// mapTree is a Tree of files in memory.
type mapTree map[string]string

func (m mapTree) ReadFile(_ context.Context, p string) ([]byte, error) {
	s, ok := m[p]
	if !ok {
		return nil, fs.ErrNotExist
	}
	return []byte(s), nil
}

func (m mapTree) ListFiles(context.Context) ([]string, error) {
	var out []string
	for p := range m {
		out = append(out, p)
	}
	sort.Strings(out)
	return out, nil
}

// readsTree counts the files a Tree read.
type readsTree struct {
	dirTree
	reads map[string]int
}

func (r readsTree) ReadFile(ctx context.Context, p string) ([]byte, error) {
	r.reads[p]++
	return r.dirTree.ReadFile(ctx, p)
}

// TestLoadReadsWhatItNeeds: a load reads the go.mod files above what it
// loads and the files of the packages it type-checks, each once.
func TestLoadReadsWhatItNeeds(t *testing.T) {
	tr := readsTree{dirTree{"testdata/mod"}, map[string]int{}}
	l := gomod.NewLoader(tr, gomodtest.Std(t), gomod.Limits{})
	for range 2 {
		if _, err := l.Load(context.Background(), "b", false); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]int{"go.mod": 1, "nested/go.mod": 1, "a/a.go": 1, "b/b.go": 1}
	if d := cmp.Diff(want, tr.reads); d != "" {
		t.Errorf("reads (-want +got):\n%s", d)
	}
}
