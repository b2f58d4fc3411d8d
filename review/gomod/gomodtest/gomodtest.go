// Package gomodtest gives tests the standard library of the test machine's
// Go installation, from the compiler's export data.
package gomodtest

import (
	"go/build"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/mergeguard/mergeguard/review/gomod"
)

// shared is the Std every test of a process shares, as every review of a
// server does: a new one runs `go list -export std` again (half a second)
// and imports each package again. A gomod.Std is safe for concurrent use.
var shared = sync.OnceValues(func() (*gomod.Std, error) {
	goCmd, err := exec.LookPath(filepath.Join(build.Default.GOROOT, "bin", "go"))
	if err != nil {
		return nil, err
	}
	return gomod.NewStd(goCmd, false), nil
})

// Std returns the shared standard library, and skips the test when there
// is no go command to build its export data. A test of Std itself (its
// kinds, when it lists the library) makes its own with gomod.NewStd.
func Std(tb testing.TB) *gomod.Std {
	tb.Helper()
	s, err := shared()
	if err != nil {
		tb.Skipf("no go command: %v", err)
	}
	return s
}
