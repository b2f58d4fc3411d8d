package codectx

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

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
// snippet, for judging by hand, and checks it is the same on a loaded
// machine: MERGEGUARD_CTX_REAL is a space-separated list of GITDIR@COMMIT
// (fetched mirrors). Without it the test is skipped.
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
		res, err := Collect(t.Context(), gitRepo{dir, commit}, d.Files, goOptions(t))
		if err != nil {
			t.Fatal(err)
		}
		if loaded := collectLoaded(t, gitRepo{dir, commit}, d); prompt(loaded) != prompt(res) {
			t.Errorf("%s: the context differs on a loaded machine (-idle +loaded):\n%s", dc, cmp.Diff(prompt(res), prompt(loaded)))
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

// collectLoaded collects d's context as a loaded machine would: one core,
// busy with other work, and every read slowed down.
func collectLoaded(t *testing.T, r gitRepo, d *diff.Diff) Result {
	t.Helper()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	var stop atomic.Bool
	defer stop.Store(true)
	for range 4 {
		go func() { // busy work competing for the core
			for !stop.Load() {
				runtime.Gosched()
			}
		}()
	}
	res, err := Collect(t.Context(), slowGit{r, 2 * time.Millisecond}, d.Files, goOptions(t))
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// slowGit is a gitRepo whose reads take delay more each.
type slowGit struct {
	gitRepo
	delay time.Duration
}

func (s slowGit) ReadFile(ctx context.Context, p string, rev review.Revision) ([]byte, error) {
	time.Sleep(s.delay)
	return s.gitRepo.ReadFile(ctx, p, rev)
}
