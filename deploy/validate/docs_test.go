package validate

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// appEnvVars returns the environment variables the application reads, taken
// from the EnvVars function in config/load.go: the first field of each entry,
// a string literal or a string constant of that file.
func appEnvVars() ([]string, error) {
	const path = repoRoot + "/config/load.go"
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, path, nil, 0)
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, err)
	}
	consts := map[string]string{}
	var list *ast.CompositeLit
	ast.Inspect(file, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.ValueSpec:
			for i, name := range n.Names {
				if i < len(n.Values) {
					if lit, ok := n.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
						consts[name.Name], _ = strconv.Unquote(lit.Value)
					}
				}
			}
		case *ast.FuncDecl:
			if n.Name.Name != "EnvVars" {
				return false
			}
			ast.Inspect(n.Body, func(m ast.Node) bool {
				if cl, ok := m.(*ast.CompositeLit); ok && list == nil {
					list = cl
					return false
				}
				return true
			})
		}
		return true
	})
	if list == nil {
		return nil, fmt.Errorf("%s: no EnvVars list found", path)
	}
	var names []string
	for _, elt := range list.Elts {
		entry, ok := elt.(*ast.CompositeLit)
		if !ok || len(entry.Elts) == 0 {
			return nil, fmt.Errorf("%s: unexpected EnvVars entry at %s", path, fset.Position(elt.Pos()))
		}
		switch first := entry.Elts[0].(type) {
		case *ast.BasicLit:
			name, err := strconv.Unquote(first.Value)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", fset.Position(first.Pos()), err)
			}
			names = append(names, name)
		case *ast.Ident:
			name, ok := consts[first.Name]
			if !ok {
				return nil, fmt.Errorf("%s: constant %s not found", path, first.Name)
			}
			names = append(names, name)
		default:
			return nil, fmt.Errorf("%s: unexpected variable name at %s", path, fset.Position(first.Pos()))
		}
	}
	return names, nil
}

// TestOperatorGuideListsEveryVariable keeps the guide's table in step with the
// variables the code reads, and with the contract's.
func TestOperatorGuideListsEveryVariable(t *testing.T) {
	t.Parallel()
	names, err := appEnvVars()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range contractEnv() {
		if !slices.Contains(names, name) {
			t.Errorf("config/load.go does not read %s, a variable of the contract", name)
		}
	}
	guide, err := os.ReadFile("../../docs/operator-guide.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		if !strings.Contains(string(guide), "| `"+name+"` |") {
			t.Errorf("docs/operator-guide.md has no table row for %s", name)
		}
	}
	if len(names) < len(contractEnv()) {
		t.Fatalf("found only %d variables in config/load.go: %v", len(names), names)
	}
}

// TestEnvExampleDocumentsContract checks that .env.example names every
// variable of the contract, set or commented out.
func TestEnvExampleDocumentsContract(t *testing.T) {
	t.Parallel()
	example, err := os.ReadFile("../.env.example")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range contractEnv() {
		// docker-compose.yml fixes MERGEGUARD_ADDR to the container's port.
		if name != "MERGEGUARD_ADDR" && !regexp.MustCompile(`(?m)^#? ?`+name+`=`).Match(example) {
			t.Errorf(".env.example does not document %s", name)
		}
	}
}
