package codectx

import (
	"go/build"
	"os"
	"path/filepath"
	"slices"

	"github.com/mergeguard/mergeguard/review/gomod"
)

func writeFile(path, s string) error { return os.WriteFile(path, []byte(s), 0o600) }

func sortStrings(s []string) []string { slices.Sort(s); return s }

// testLimits are the limits of the determinism test: the defaults.
func testLimits() Limits { return Limits{} }

// goOptions resolve Go with go/types, the standard library's types from
// this Go installation.
func goOptions() Options {
	return Options{Std: gomod.NewStd(filepath.Join(build.Default.GOROOT, "bin", "go"), true)}
}
