package codectx

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/diff"
)

// gitRepo reads a commit of a bare git directory.
type gitRepo struct{ dir, commit string }

func (g gitRepo) ReadFile(_ context.Context, p string, _ review.Revision) ([]byte, error) {
	out, err := exec.Command("git", "--git-dir", g.dir, "show", g.commit+":"+p).Output()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, review.ErrNotFound)
	}
	return out, nil
}

func (g gitRepo) ListFiles(context.Context) ([]string, error) {
	out, err := exec.Command("git", "--git-dir", g.dir, "ls-tree", "-r", "--name-only", g.commit).Output()
	if err != nil {
		return nil, fmt.Errorf("ls-tree: %w", err)
	}
	return strings.Fields(string(out)), nil
}

// TestRealCommits lists the code context of real commits, one line per
// snippet, for judging by hand: MERGEGUARD_CTX_REAL is a space-separated
// list of GITDIR@COMMIT (fetched mirrors). Without it the test is skipped.
func TestRealCommits(t *testing.T) {
	spec := os.Getenv("MERGEGUARD_CTX_REAL")
	if spec == "" || !Available {
		t.Skip("set MERGEGUARD_CTX_REAL=GITDIR@COMMIT ...")
	}
	for _, dc := range strings.Fields(spec) {
		dir, commit, _ := strings.Cut(dc, "@")
		out, err := exec.Command("git", "--git-dir", dir, "diff", commit+"^", commit).Output()
		if err != nil {
			t.Fatalf("%s: %v", dc, err)
		}
		d, err := diff.ParseString(string(out))
		if err != nil {
			t.Fatal(err)
		}
		res, err := Collect(t.Context(), gitRepo{dir, commit}, d.Files, goOptions())
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range sortedPaths(res.ByFile) {
			for _, s := range res.ByFile[p] {
				if s.Kind != Enclosing {
					t.Logf("%s %.10s %s %s %s:%d-%d | %s", dir[strings.LastIndex(dir[:len(dir)-5], "/")+1:len(dir)-5], commit, s.Kind, s.Name, s.Path, s.Start, s.End, strings.TrimSpace(s.Lines[0]))
				}
			}
		}
	}
}
