package analyzer

import (
	"path"
	"strings"
)

// fixtureDirs are directories whose files are test fixtures by convention
// (Go's testdata, the fixture folders of JavaScript, Ruby and Python test
// suites).
var fixtureDirs = []string{"testdata", "test-data", "test_data", "fixtures", "fixture", "__fixtures__", "__snapshots__", "__mocks__"}

// fixtureSuffixes end the names of test files by convention.
var fixtureSuffixes = []string{
	"_test.go", "_test.py", "_spec.rb", "_test.rb",
	".spec.ts", ".spec.js", ".spec.tsx", ".spec.jsx", ".spec.mjs", ".spec.cjs",
	".test.ts", ".test.js", ".test.tsx", ".test.jsx", ".test.mjs", ".test.cjs",
	"Test.java", "Tests.java", "Test.kt", "Tests.cs", "Test.php", ".bats",
}

// IsTestFixture reports whether path (slash-separated, from the repository
// root) is a test fixture or a test file by convention: a file under a
// fixture directory (testdata/, fixtures/, __fixtures__/, test/fixtures/,
// spec/fixtures/, ...), or a test file by name (*_test.go, test_*.py,
// *_test.py, *.spec.ts, *.test.js, ...). A secret there is most likely a
// planted sample: it is reported without blocking unless the repository's
// secrets.block_in_tests says otherwise.
func IsTestFixture(p string) bool {
	p = strings.ToLower(path.Clean("/" + strings.TrimSpace(p)))
	dir, base := path.Split(p)
	for _, d := range fixtureDirs {
		if strings.Contains(dir, "/"+d+"/") {
			return true
		}
	}
	if strings.HasPrefix(base, "test_") && strings.HasSuffix(base, ".py") {
		return true
	}
	for _, s := range fixtureSuffixes {
		if strings.HasSuffix(base, strings.ToLower(s)) && len(base) > len(s) {
			return true
		}
	}
	return false
}
