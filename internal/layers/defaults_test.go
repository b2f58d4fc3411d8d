package layers

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// pendingDefaults are the files known to re-apply config.Default still,
// each with why it is not fixed yet. The list only shrinks.
var pendingDefaults = map[string]string{}

// TestDefaultsOnlyInConfig: defaults live in config/ and are applied once,
// when the configuration is loaded (config.Load starts from
// config.Default); constructors take the configuration they are given as
// it is. No package but config (and the tests, which build their
// configurations from config.Default) calls config.Default.
func TestDefaultsOnlyInConfig(t *testing.T) {
	root := filepath.Join("..", "..")
	var found []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == "config" || d.Name() == "testdata" || d.Name() == "vendor" || strings.HasPrefix(d.Name(), ".") && rel != "." {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil && rel != "." {
				return filepath.SkipDir // another module (bench): programs building their own configuration
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		if callsDefault(t, path) {
			found = append(found, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range found {
		if _, ok := pendingDefaults[f]; !ok {
			t.Errorf("%s calls config.Default: take the loaded configuration from the caller instead", f)
		}
	}
	for f, why := range pendingDefaults {
		if !slices.Contains(found, f) {
			t.Errorf("%s (pending: %s) no longer calls config.Default: drop it from pendingDefaults", f, why)
		}
	}
}

// callsDefault reports whether the Go file at path calls config.Default.
func callsDefault(t *testing.T, path string) bool {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	var calls bool
	ast.Inspect(f, func(n ast.Node) bool {
		if c, ok := n.(*ast.CallExpr); ok {
			if sel, ok := c.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Default" {
				if id, ok := sel.X.(*ast.Ident); ok && id.Name == "config" {
					calls = true
				}
			}
		}
		return !calls
	})
	return calls
}
