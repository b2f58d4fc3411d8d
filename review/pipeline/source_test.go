package pipeline

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/mergeguard/mergeguard/review"
)

// memSource is a review.Source over a diff text and file contents held in
// memory, for tests of the stages; the end-to-end tests use the real
// localgit and difftext sources.
type memSource struct {
	change review.Change
	diff   string
	head   map[string]string
	base   map[string]string
}

func (s *memSource) Change(context.Context) (review.Change, error) { return s.change, nil }
func (s *memSource) Diff(context.Context) (string, error)          { return s.diff, nil }
func (s *memSource) Files(context.Context) ([]review.ChangedFile, error) {
	return nil, review.ErrUnsupported
}
func (s *memSource) Commits(context.Context, int) ([]review.Commit, error) {
	return nil, review.ErrUnsupported
}
func (s *memSource) ReadFile(_ context.Context, path string, rev review.Revision) ([]byte, error) {
	m := s.head
	if rev == review.Base {
		m = s.base
	}
	if m == nil {
		return nil, review.ErrUnsupported
	}
	c, ok := m[path]
	if !ok {
		return nil, review.ErrNotFound
	}
	return []byte(c), nil
}
func (s *memSource) Blame(context.Context, string, int) (review.BlameLine, error) {
	return review.BlameLine{}, review.ErrUnsupported
}
func (s *memSource) ListFiles(context.Context) ([]string, error) { return nil, review.ErrUnsupported }

// readTestdata returns a file of testdata/ as a string.
func readTestdata(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// diffFixture returns a real diff of review/diff/testdata, which holds the
// one copy of the fixtures the review packages share.
func diffFixture(t testing.TB, name string) string {
	t.Helper()
	return readTestdata(t, "../../diff/testdata/"+name) // testdata/../../diff: review/diff
}

// plantedHead is the head content of the files of testdata/planted.diff.
func plantedHead() map[string]string {
	return map[string]string{
		"main.go": strings.Join([]string{"package main", "", `import "fmt"`, "", "func main() {", "<<<<<<< HEAD",
			`	fmt.Println("hello")`, "=======", `	fmt.Println("hello, world")`, ">>>>>>> feature", "}", ""}, "\n"),
		"config/aws.go": strings.Join([]string{"package config", "", "// Credentials for the uploader.", "const (",
			`	awsAccessKeyID = "AKIAZ7VRSQ5TJN2XMY4W"`, `	region         = "eu-west-1"`, ")", ""}, "\n"),
	}
}
