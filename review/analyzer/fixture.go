package analyzer

import (
	"path"
	"regexp"
	"slices"
	"strings"
)

// fixtureDirs are the directories that hold test data by convention.
func fixtureDirs() []string {
	return []string{"testdata", "test-data", "test_data", "fixtures", "fixture", "__fixtures__", "__tests__", "__snapshots__", "__mocks__"}
}

// fixtureName matches the names of test files by convention: Go's
// *_test.go, Python's test_*.py and *_test.py, JavaScript's and
// TypeScript's *.spec.* and *.test.*, Ruby's *_spec.rb, Java's *Test.java.
var fixtureName = regexp.MustCompile(`(_test\.go|^test_.*\.py|_test\.py|\.(spec|test)\.[cm]?[jt]sx?|_spec\.rb|Tests?\.(java|kt)|^conftest\.py)$`)

// InTestFixture reports whether a path is test code or test data by
// convention: under a directory such as testdata/, fixtures/ or
// __fixtures__/, or named as a test file (*_test.go, test_*.py, *.spec.ts,
// ...). A secret there is almost always a fake one (a scanner's own test
// data, a sample key), so the pipeline does not let it block unless the
// repository asks (secrets.block_in_tests).
func InTestFixture(p string) bool {
	dirs := strings.Split(path.Dir(p), "/")
	if slices.ContainsFunc(dirs, func(d string) bool { return slices.Contains(fixtureDirs(), strings.ToLower(d)) }) {
		return true
	}
	return fixtureName.MatchString(path.Base(p))
}
