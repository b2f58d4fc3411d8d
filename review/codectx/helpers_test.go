package codectx

import (
	"os"
	"slices"
	"testing"

	"github.com/mergeguard/mergeguard/review/gomod/gomodtest"
)

func writeFile(path, s string) error { return os.WriteFile(path, []byte(s), 0o600) }

func sortStrings(s []string) []string { slices.Sort(s); return s }

// testLimits are the limits of the determinism test: the defaults.
func testLimits() Limits { return Limits{} }

// goOptions resolve Go with go/types, the standard library's types from
// this Go installation's export data (shared by the tests).
func goOptions(t testing.TB) Options {
	return Options{Std: gomodtest.Std(t)}
}
