package lifecycle

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// maxRoleMethods is the most methods a role of the lifecycle may have
// (docs/architecture.md, The life of a pull request): small roles keep the
// fakes small and the adapters thin.
const maxRoleMethods = 8

// TestRolesAreSmall counts the methods of every interface the package
// declares, embedded interfaces' included, and logs the largest
// (go test -v -run TestRolesAreSmall ./review/lifecycle/).
func TestRolesAreSmall(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	ifaces := map[string]*ast.InterfaceType{}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if ts, ok := n.(*ast.TypeSpec); ok {
				if it, ok := ts.Type.(*ast.InterfaceType); ok {
					ifaces[ts.Name.Name] = it
				}
			}
			return true
		})
	}
	if len(ifaces) < 10 {
		t.Fatalf("found %d interfaces; the test reads the wrong files", len(ifaces))
	}
	var count func(it *ast.InterfaceType) int
	count = func(it *ast.InterfaceType) int {
		n := 0
		for _, m := range it.Methods.List {
			if id, ok := m.Type.(*ast.Ident); ok && len(m.Names) == 0 { // embedded
				if inner, ours := ifaces[id.Name]; ours {
					n += count(inner)
					continue
				}
			}
			n += max(len(m.Names), 1)
		}
		return n
	}
	largest, most := "", 0
	for name, it := range ifaces {
		n := count(it)
		if n > maxRoleMethods {
			t.Errorf("role %s has %d methods, more than %d: split it", name, n, maxRoleMethods)
		}
		if n > most || (n == most && name < largest) {
			largest, most = name, n
		}
	}
	t.Logf("%d roles; the largest, %s, has %d methods", len(ifaces), largest, most)
}
