package localgit_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/source/localgit"
)

// repo is a scratch git repository for one test.
type repo struct {
	t   *testing.T
	dir string
}

func newRepo(t *testing.T) *repo {
	t.Helper()
	r := &repo{t: t, dir: t.TempDir()}
	r.git("", "init", "-q", "-b", "main")
	return r
}

// git runs git in the repository as author at date (RFC 3339), isolated
// from the machine's configuration.
func (r *repo) git(date string, args ...string) string {
	r.t.Helper()
	cmd := exec.Command("git", append([]string{"-C", r.dir, "-c", "user.name=Ada", "-c", "user.email=ada@example.com",
		"-c", "commit.gpgsign=false"}, args...)...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=" + os.DevNull}
	if date != "" {
		cmd.Env = append(cmd.Env, "GIT_AUTHOR_DATE="+date, "GIT_COMMITTER_DATE="+date)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func (r *repo) write(path, content string) {
	r.t.Helper()
	full := filepath.Join(r.dir, path)
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
		r.t.Fatal(err)
	}
}

func (r *repo) commit(author, date, msg string) string {
	r.t.Helper()
	r.git(date, "add", "-A")
	r.git(date, "-c", "user.name="+author, "commit", "-q", "-m", msg)
	return r.git("", "rev-parse", "HEAD")
}

func lines(prefix string, n int, change map[int]string) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		if c, ok := change[i]; ok {
			b.WriteString(c)
		} else {
			b.WriteString(prefix + " " + string(rune('0'+i/10)) + string(rune('0'+i%10)))
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// fixture is a repository with main: A, D and feature (from A): B, C.
type fixture struct {
	*repo
	a, b, c, d string
}

func newFixture(t *testing.T) fixture {
	r := newRepo(t)
	r.write("a.go", lines("line", 30, nil))
	r.write("old.txt", lines("text", 20, nil))
	r.write("gone.txt", "bye\n")
	r.write("logo.png", "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x01")
	r.write("docs/readme.md", "# Readme\n")
	f := fixture{repo: r}
	f.a = r.commit("Ada", "2024-01-01T10:00:00Z", "Initial commit")

	r.git("", "checkout", "-q", "-b", "feature")
	r.write("a.go", lines("line", 30, map[int]string{15: "changed 15"}))
	r.git("", "mv", "old.txt", "new.txt")
	r.write("new.txt", lines("text", 20, map[int]string{20: "text twenty"}))
	r.git("", "rm", "-q", "gone.txt")
	r.write("logo.png", "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x02")
	r.write("dir/ünï cödé.go", "package dir\n")
	f.b = r.commit("Bob", "2024-01-02T11:00:00+02:00", "Change a.go and rename\n\nBody text.")
	r.write("a.go", lines("line", 30, map[int]string{15: "changed 15", 25: "changed 25"}))
	f.c = r.commit("Cy", "2024-01-03T12:00:00Z", "Second change")

	r.git("", "checkout", "-q", "main")
	r.write("docs/readme.md", "# Readme\n\nMore.\n")
	f.d = r.commit("Dee", "2024-01-04T13:00:00Z", "Docs on main")
	r.git("", "checkout", "-q", "feature")
	return f
}

func TestFeatureBranch(t *testing.T) {
	f := newFixture(t)
	// Configuration in the repository that would change git's output.
	f.git("", "config", "diff.noprefix", "true")
	f.git("", "config", "core.quotepath", "true")
	f.git("", "config", "color.ui", "always")
	f.git("", "config", "diff.renames", "false")

	ctx := t.Context()
	src, err := localgit.New(ctx, filepath.Join(f.dir, "dir"), "", "")
	if err != nil {
		t.Fatal(err)
	}

	change, err := src.Change(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := review.Change{
		Repository: filepath.Base(f.dir), BaseRef: "main", HeadRef: "feature", BaseSHA: f.a, HeadSHA: f.c,
		Title: "Second change", Author: "Cy",
	}
	if d := cmp.Diff(want, change); d != "" {
		t.Errorf("Change (-want +got):\n%s", d)
	}

	files, err := src.Files(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wantFiles := []review.ChangedFile{
		{Path: "a.go", Status: "modified", Additions: 2, Deletions: 2},
		{Path: "dir/ünï cödé.go", Status: "added", Additions: 1},
		{Path: "gone.txt", Status: "removed", Deletions: 1},
		{Path: "logo.png", Status: "modified", Additions: 1, Deletions: 1, PatchMissing: true}, // the lines --text printed
		{Path: "new.txt", OldPath: "old.txt", Status: "renamed", Additions: 1, Deletions: 1},
	}
	if d := cmp.Diff(wantFiles, files); d != "" {
		t.Errorf("Files (-want +got):\n%s", d)
	}
	text, err := src.Diff(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text, "diff --git a/a.go b/a.go\n") || strings.Contains(text, "\x1b[") {
		t.Errorf("diff is not plain git format:\n%s", text)
	}

	commits, err := src.Commits(ctx, 20)
	if err != nil {
		t.Fatal(err)
	}
	wantCommits := []review.Commit{
		{SHA: f.b, Author: "Bob", Date: time.Date(2024, 1, 2, 11, 0, 0, 0, time.FixedZone("", 2*3600)),
			Message: "Change a.go and rename\n\nBody text."},
		{SHA: f.c, Author: "Cy", Date: time.Date(2024, 1, 3, 12, 0, 0, 0, time.UTC), Message: "Second change"},
	}
	if d := cmp.Diff(wantCommits, commits, cmp.Comparer(time.Time.Equal)); d != "" {
		t.Errorf("Commits (-want +got):\n%s", d)
	}
	if last, err := src.Commits(ctx, 1); err != nil || len(last) != 1 || last[0].SHA != f.c {
		t.Errorf("Commits(1) = %v, %v; want the last commit", last, err)
	}

	list, err := src.ListFiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"a.go", "dir/ünï cödé.go", "docs/readme.md", "logo.png", "new.txt"}, list); d != "" {
		t.Errorf("ListFiles (-want +got):\n%s", d)
	}
}

func TestReadFile(t *testing.T) {
	f := newFixture(t)
	src, err := localgit.New(t.Context(), f.dir, "", "")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path     string
		rev      review.Revision
		contains string
		err      error // review.ErrNotFound, or errAny for a rejected path
	}{
		{path: "a.go", rev: review.Head, contains: "changed 15\n"},
		{path: "a.go", rev: review.Base, contains: "line 15\n"},
		{path: "old.txt", rev: review.Base, contains: "text 20\n"},
		{path: "new.txt", rev: review.Head, contains: "text twenty\n"},
		{path: "dir/ünï cödé.go", rev: review.Head, contains: "package dir"},
		{path: "logo.png", rev: review.Head, contains: "IHDR\x00\x02"},
		{path: "gone.txt", rev: review.Head, err: review.ErrNotFound},
		{path: "new.txt", rev: review.Base, err: review.ErrNotFound},
		{path: "docs", rev: review.Head, err: review.ErrNotFound},
		{path: "missing.go", rev: review.Head, err: review.ErrNotFound},
		{path: "../etc/passwd", rev: review.Head, err: errAny},
		{path: "/etc/passwd", rev: review.Head, err: errAny},
		{path: "a.go\x00", rev: review.Head, err: errAny},
		{path: "./a.go", rev: review.Head, err: errAny},
		{path: "a.go", rev: "tip", err: errAny},
	}
	for _, tt := range tests {
		b, err := src.ReadFile(t.Context(), tt.path, tt.rev)
		switch {
		case tt.err == nil && err != nil:
			t.Errorf("ReadFile(%q, %s): %v", tt.path, tt.rev, err)
		case tt.err == nil && !strings.Contains(string(b), tt.contains):
			t.Errorf("ReadFile(%q, %s) = %q, want it to contain %q", tt.path, tt.rev, b, tt.contains)
		case errors.Is(tt.err, errAny) && (err == nil || errors.Is(err, review.ErrNotFound)):
			t.Errorf("ReadFile(%q, %s) err = %v, want a rejection", tt.path, tt.rev, err)
		case errors.Is(tt.err, review.ErrNotFound) && !errors.Is(err, review.ErrNotFound):
			t.Errorf("ReadFile(%q, %s) err = %v, want ErrNotFound", tt.path, tt.rev, err)
		}
	}

	// What was read, found or not, is cached: reading it again runs no git,
	// so even a canceled context gets the same answer.
	canceled, cancel := context.WithCancel(t.Context())
	cancel()
	if b, err := src.ReadFile(canceled, "a.go", review.Head); err != nil || !strings.Contains(string(b), "changed 15\n") {
		t.Errorf("cached ReadFile(a.go) = %q, %v", b, err)
	}
	if _, err := src.ReadFile(canceled, "missing.go", review.Head); !errors.Is(err, review.ErrNotFound) {
		t.Errorf("cached ReadFile(missing.go) err = %v, want ErrNotFound", err)
	}

	// Concurrent reads share the cache.
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if _, err := src.ReadFile(t.Context(), "a.go", review.Head); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
}

// errAny marks a test case expecting an error other than ErrNotFound.
var errAny = errors.New("any error")

func TestBlame(t *testing.T) {
	f := newFixture(t)
	src, err := localgit.New(t.Context(), f.dir, "", "")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path string
		line int
		want review.BlameLine
		err  error
	}{
		{path: "a.go", line: 15, want: review.BlameLine{Author: "Bob", CommitSHA: f.b, Message: "Change a.go and rename",
			Date: time.Date(2024, 1, 2, 9, 0, 0, 0, time.UTC)}},
		{path: "a.go", line: 25, want: review.BlameLine{Author: "Cy", CommitSHA: f.c, Message: "Second change",
			Date: time.Date(2024, 1, 3, 12, 0, 0, 0, time.UTC)}},
		{path: "a.go", line: 1, want: review.BlameLine{Author: "Ada", CommitSHA: f.a, Message: "Initial commit",
			Date: time.Date(2024, 1, 1, 10, 0, 0, 0, time.UTC)}},
		{path: "new.txt", line: 3, want: review.BlameLine{Author: "Ada", CommitSHA: f.a, Message: "Initial commit",
			Date: time.Date(2024, 1, 1, 10, 0, 0, 0, time.UTC)}},
		{path: "a.go", line: 31, err: review.ErrNotFound},
		{path: "a.go", line: 0, err: review.ErrNotFound},
		{path: "missing.go", line: 1, err: review.ErrNotFound},
		{path: "../a.go", line: 1, err: errAny},
	}
	for _, tt := range tests {
		got, err := src.Blame(t.Context(), tt.path, tt.line)
		switch {
		case tt.err == nil:
			if err != nil {
				t.Errorf("Blame(%s, %d): %v", tt.path, tt.line, err)
			} else if d := cmp.Diff(tt.want, got, cmp.Comparer(time.Time.Equal)); d != "" {
				t.Errorf("Blame(%s, %d) (-want +got):\n%s", tt.path, tt.line, d)
			}
		case errors.Is(tt.err, errAny) && (err == nil || errors.Is(err, review.ErrNotFound)):
			t.Errorf("Blame(%s, %d) err = %v, want a rejection", tt.path, tt.line, err)
		case errors.Is(tt.err, review.ErrNotFound) && !errors.Is(err, review.ErrNotFound):
			t.Errorf("Blame(%s, %d) err = %v, want ErrNotFound", tt.path, tt.line, err)
		}
	}
}

func TestBaseSelection(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()

	// Explicit revisions.
	src, err := localgit.New(ctx, f.dir, "main", "feature")
	if err != nil {
		t.Fatal(err)
	}
	if c, _ := src.Change(ctx); c.BaseSHA != f.d || c.HeadSHA != f.c || c.BaseRef != "main" || c.HeadRef != "feature" {
		t.Errorf("explicit: %+v", c)
	}

	// On the default branch the last commit is reviewed.
	f.git("", "checkout", "-q", "main")
	src, err = localgit.New(ctx, f.dir, "", "")
	if err != nil {
		t.Fatal(err)
	}
	c, _ := src.Change(ctx)
	files, _ := src.Files(ctx)
	if c.BaseSHA != f.a || c.HeadSHA != f.d || c.BaseRef != "HEAD^" || len(files) != 1 || files[0].Path != "docs/readme.md" {
		t.Errorf("on main: change %+v, files %+v", c, files)
	}

	// origin/HEAD names the default branch when there is one.
	f.git("", "update-ref", "refs/remotes/origin/trunk", f.b)
	f.git("", "symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/trunk")
	src, err = localgit.New(ctx, f.dir, "", "feature")
	if err != nil {
		t.Fatal(err)
	}
	if c, _ := src.Change(ctx); c.BaseRef != "origin/trunk" || c.BaseSHA != f.b {
		t.Errorf("with origin/HEAD: %+v", c)
	}

	for _, bad := range []struct{ base, head string }{{"", "nope"}, {"nope", ""}, {"--output=/tmp/x", ""}} {
		if _, err := localgit.New(ctx, f.dir, bad.base, bad.head); err == nil {
			t.Errorf("New(base %q, head %q) succeeded", bad.base, bad.head)
		}
	}
}

func TestRootCommit(t *testing.T) {
	r := newRepo(t)
	r.write("main.go", "package main\n")
	r.write("README", "hi\n")
	sha := r.commit("Ada", "2024-01-01T10:00:00Z", "First")
	src, err := localgit.New(t.Context(), r.dir, "", "")
	if err != nil {
		t.Fatal(err)
	}
	c, _ := src.Change(t.Context())
	if c.BaseSHA != "" || c.BaseRef != "" || c.HeadSHA != sha {
		t.Errorf("Change = %+v, want no base", c)
	}
	files, _ := src.Files(t.Context())
	want := []review.ChangedFile{{Path: "README", Status: "added", Additions: 1}, {Path: "main.go", Status: "added", Additions: 1}}
	if d := cmp.Diff(want, files); d != "" {
		t.Errorf("Files (-want +got):\n%s", d)
	}
	if commits, err := src.Commits(t.Context(), 20); err != nil || len(commits) != 1 {
		t.Errorf("Commits = %v, %v", commits, err)
	}
	if _, err := src.ReadFile(t.Context(), "main.go", review.Base); !errors.Is(err, review.ErrNotFound) {
		t.Errorf("base read err = %v, want ErrNotFound", err)
	}
}

func TestErrors(t *testing.T) {
	if _, err := localgit.New(t.Context(), t.TempDir(), "", ""); err == nil {
		t.Error("New succeeded outside a repository")
	}
	f := newFixture(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := localgit.New(ctx, f.dir, "", ""); !errors.Is(err, context.Canceled) {
		t.Errorf("New with a canceled context: err = %v", err)
	}
	src, err := localgit.New(t.Context(), f.dir, "", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := src.ReadFile(ctx, "a.go", review.Head); !errors.Is(err, context.Canceled) {
		t.Errorf("ReadFile with a canceled context: err = %v", err)
	}
	if _, err := src.ListFiles(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("ListFiles with a canceled context: err = %v", err)
	}
	// A failed listing is not cached.
	if list, err := src.ListFiles(t.Context()); err != nil || len(list) != 5 {
		t.Errorf("ListFiles after a canceled one = %v, %v", list, err)
	}
}
