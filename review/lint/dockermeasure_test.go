package lint

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/mergeguard/mergeguard/review"
)

// TestDockerfileRulesOnACheckout counts the best-practice rules' hits on
// every Dockerfile under $MERGEGUARD_DOCKERFILES_DIR (a checkout of a
// public repository), with its .hadolint.yaml honoured; it is a measuring
// tool, skipped otherwise:
//
//	MERGEGUARD_DOCKERFILES_DIR=/tmp/docker-stacks go test -run TestDockerfileRulesOnACheckout -v ./review/lint/
func TestDockerfileRulesOnACheckout(t *testing.T) {
	root := os.Getenv("MERGEGUARD_DOCKERFILES_DIR")
	if root == "" {
		t.Skip("MERGEGUARD_DOCKERFILES_DIR is not set")
	}
	var ignored []string
	if b, err := os.ReadFile(filepath.Join(root, ".hadolint.yaml")); err == nil {
		ignored = hadolintIgnoredOf(t, b)
	}
	files, hits := 0, map[string]int{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !(Dockerfile{}).Applies(strings.TrimPrefix(p, root+"/")) {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		files++
		hs, err := bestPractices(b, ignored)
		if err != nil {
			t.Logf("%s: %v", p, err)
		}
		for _, h := range hs {
			hits[h.rule.id]++
			t.Logf("%s:%d %s", strings.TrimPrefix(p, root+"/"), h.line, h.rule.id)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]string, 0, len(hits))
	for id := range hits {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	t.Logf("%d Dockerfiles", files)
	for _, id := range ids {
		t.Logf("%s: %d", id, hits[id])
	}
}

// hadolintIgnoredOf reads a .hadolint.yaml's ignored rules.
func hadolintIgnoredOf(t *testing.T, b []byte) []string {
	t.Helper()
	ignored, err := hadolintIgnored(t.Context(), fileTree{".hadolint.yaml": b})
	if err != nil {
		t.Fatal(err)
	}
	return ignored
}

// fileTree is a Tree of files in memory.
type fileTree map[string][]byte

func (f fileTree) ReadFile(_ context.Context, p string) ([]byte, error) {
	if b, ok := f[p]; ok {
		return b, nil
	}
	return nil, review.ErrNotFound
}

func (f fileTree) ListFiles(context.Context) ([]string, error) { return nil, nil }
