package codectx

import (
	"os"
	"slices"
)

func writeFile(path, s string) error { return os.WriteFile(path, []byte(s), 0o600) }

func sortStrings(s []string) []string { slices.Sort(s); return s }

// testLimits are the limits of the determinism test: the defaults.
func testLimits() Limits { return Limits{} }
