package lang_test

import (
	"testing"

	"github.com/mergeguard/mergeguard/review/lang"
)

func TestDetect(t *testing.T) {
	tests := map[string]string{
		"main.go":                  "go",
		"pkg/x/Y_test.go":          "go",
		"src/app.TSX":              "tsx",
		"lib/a.py":                 "python",
		"deploy/Dockerfile":        "dockerfile",
		"deploy/Dockerfile.worker": "dockerfile",
		"Makefile":                 "makefile",
		"go.mod":                   "go-module",
		".github/workflows/ci.yml": "yaml",
		"docs/日本語.md":              "markdown",
		"include/x.hpp":            "cpp",
		"LICENSE":                  "",
		"archive.tar.gz":           "",
		".env":                     "",
	}
	for p, want := range tests {
		if got := lang.Detect(p); got != want {
			t.Errorf("Detect(%q) = %q, want %q", p, got, want)
		}
	}
}
