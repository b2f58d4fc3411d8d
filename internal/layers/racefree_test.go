package layers

import (
	"bufio"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestRaceFreePackagesAreSequential: make test runs the packages of
// scripts/race-free-packages.txt without the race detector, but the tests
// each line names; the race detector reports races between goroutines
// only. So a listed package's code starts no goroutine (no go statement,
// no call of a method named Go, as errgroup.Group's and
// sync.WaitGroup's), and its tests start none and run one at a time (no
// t.Parallel), but the tests named.
func TestRaceFreePackagesAreSequential(t *testing.T) {
	root := filepath.Join("..", "..")
	lines := raceFree(t, filepath.Join(root, "scripts", "race-free-packages.txt"))
	if len(lines) == 0 {
		t.Fatal("no package listed")
	}
	for _, l := range lines {
		rel, ok := strings.CutPrefix(l.pkg, module+"/")
		if !ok {
			t.Errorf("%s: not a package of this module", l.pkg)
			continue
		}
		found, err := concurrency(filepath.Join(root, filepath.FromSlash(rel)))
		if err != nil {
			t.Errorf("%s: %v", l.pkg, err)
		}
		for _, s := range found {
			if !s.test || !l.raced.MatchString(s.fn) {
				t.Errorf("%s runs concurrently in %s at %s: name the test on its line or take the package out of scripts/race-free-packages.txt", l.pkg, s.fn, s.pos)
			}
		}
	}
}

// raceFreeLine is a line of scripts/race-free-packages.txt: a package and
// the tests that run with the race detector all the same.
type raceFreeLine struct {
	pkg   string
	raced *regexp.Regexp
}

// raceFree reads the listed packages ('#' starts a comment).
func raceFree(t *testing.T, path string) []raceFreeLine {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []raceFreeLine
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		l := raceFreeLine{pkg: fields[0], raced: regexp.MustCompile(`^$`)}
		if len(fields) > 1 {
			l.raced = regexp.MustCompile("^(" + fields[1] + ")$")
		}
		lines = append(lines, l)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return lines
}

// site is where a file starts a goroutine.
type site struct {
	pos  string
	fn   string // the top-level function it is in
	test bool   // in a _test.go file
}

// concurrency lists where the Go files of dir (tests included) start a
// goroutine: go statements, calls of a method named Go, and t.Parallel.
func concurrency(dir string) ([]site, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, fmt.Errorf("list the Go files of %s: %w", dir, err)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no Go files in %s", dir)
	}
	fset := token.NewFileSet()
	var found []site
	for _, name := range files {
		file, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		for _, decl := range file.Decls {
			fn := "a package-level declaration"
			if f, ok := decl.(*ast.FuncDecl); ok {
				fn = f.Name.Name
			}
			ast.Inspect(decl, func(n ast.Node) bool {
				if startsGoroutine(n) {
					found = append(found, site{pos: fset.Position(n.Pos()).String(), fn: fn, test: strings.HasSuffix(name, "_test.go")})
				}
				return true
			})
		}
	}
	return found, nil
}

// startsGoroutine reports whether n is a go statement or a call of a
// method named Go, Parallel or RunParallel.
func startsGoroutine(n ast.Node) bool {
	switch n := n.(type) {
	case *ast.GoStmt:
		return true
	case *ast.CallExpr:
		sel, ok := n.Fun.(*ast.SelectorExpr)
		return ok && (sel.Sel.Name == "Go" || sel.Sel.Name == "Parallel" || sel.Sel.Name == "RunParallel")
	}
	return false
}
