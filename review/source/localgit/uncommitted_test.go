package localgit_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/source/localgit"
)

// TestUncommitted: the working tree and the index against HEAD, their head
// files (the index, or the working tree without following links out of
// the repository), and no commits.
func TestUncommitted(t *testing.T) {
	r := newRepo(t)
	r.write("a.txt", "one\n")
	r.write("b.txt", "one\n")
	if err := os.Symlink("/etc", filepath.Join(r.dir, "etc")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/hostname", filepath.Join(r.dir, "host")); err != nil {
		t.Fatal(err)
	}
	head := r.commit("Ada", "2026-01-01T00:00:00Z", "start")
	r.write("a.txt", "staged\n")
	r.git("", "add", "a.txt")
	r.write("b.txt", "unstaged\n")
	r.write("new.txt", "untracked\n")

	tests := map[string]struct {
		which     localgit.Uncommitted
		files     []string
		headA     string
		headB     string
		headTitle string
	}{
		"work tree": {localgit.WorkTree, []string{"a.txt", "b.txt"}, "staged\n", "unstaged\n", "Uncommitted changes"},
		"staged":    {localgit.Staged, []string{"a.txt"}, "staged\n", "one\n", "Staged changes"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			s, err := localgit.NewUncommitted(ctx, r.dir, tc.which)
			if err != nil {
				t.Fatal(err)
			}
			files, err := s.Files(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var paths []string
			for _, f := range files {
				paths = append(paths, f.Path)
			}
			change, _ := s.Change(ctx)
			commits, err := s.Commits(ctx, 0)
			if err != nil {
				t.Fatal(err)
			}
			got := []any{paths, read(t, s, "a.txt", review.Head), read(t, s, "b.txt", review.Head),
				read(t, s, "a.txt", review.Base), change.BaseSHA, change.Title, len(commits)}
			want := []any{tc.files, tc.headA, tc.headB, "one\n", head, tc.headTitle, 0}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			// A link reads as its target's name; a path through a link
			// leaving the repository is not there.
			if got := read(t, s, "host", review.Head); got != "/etc/hostname" {
				t.Errorf("host = %q, want the link's target", got)
			}
			if _, err := s.ReadFile(ctx, "etc/passwd", review.Head); !errors.Is(err, review.ErrNotFound) {
				t.Errorf("etc/passwd: err = %v, want ErrNotFound", err)
			}
		})
	}
}

func read(t *testing.T, s *localgit.Source, p string, rev review.Revision) string {
	t.Helper()
	b, err := s.ReadFile(t.Context(), p, rev)
	if err != nil {
		t.Fatalf("read %s at %s: %v", p, rev, err)
	}
	return string(b)
}

// TestHasUncommitted: untracked files do not count; a staged or unstaged
// change does; a repository without commits has none.
func TestHasUncommitted(t *testing.T) {
	r := newRepo(t)
	ctx := t.Context()
	check := func(want bool) {
		t.Helper()
		got, err := localgit.HasUncommitted(ctx, r.dir)
		if err != nil || got != want {
			t.Errorf("HasUncommitted = %v, %v; want %v", got, err, want)
		}
	}
	r.write("a.txt", "one\n")
	check(false) // no commit yet
	r.commit("Ada", "2026-01-01T00:00:00Z", "start")
	r.write("new.txt", "untracked\n")
	check(false)
	r.write("a.txt", "two\n")
	check(true)
	if _, err := localgit.HasUncommitted(ctx, t.TempDir()); err == nil {
		t.Error("outside a repository: no error")
	}
}

// TestReadFileAt: a file as committed at a revision, never the working
// tree's; a missing file, a revision naming no commit and a path leaving
// the repository are told apart.
func TestReadFileAt(t *testing.T) {
	r := newRepo(t)
	r.write(".mergeguard.yml", "severity_threshold: warning\n")
	first := r.commit("Ada", "2026-01-01T00:00:00Z", "start")
	r.git("", "rm", "-q", ".mergeguard.yml")
	r.write("a.txt", "one\n")
	second := r.commit("Ada", "2026-01-02T00:00:00Z", "drop the configuration")
	r.write(".mergeguard.yml", "enabled: false\n") // the working tree's, never read
	tests := []struct {
		name, rev, path string
		want            string
		wantCommit      string
		wantErr         error
	}{
		{"committed at the revision", "HEAD~1", ".mergeguard.yml", "severity_threshold: warning\n", first, nil},
		{"absent at the revision", "main", ".mergeguard.yml", "", second, review.ErrNotFound},
		{"no such branch", "origin/main", ".mergeguard.yml", "", "", localgit.ErrUnknownRevision},
		{"an option, not a revision", "--output=x", ".mergeguard.yml", "", "", localgit.ErrUnknownRevision},
		{"a path leaving the repository", "main", "../x", "", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, commit, err := localgit.ReadFileAt(t.Context(), r.dir, tt.rev, tt.path)
			switch {
			case tt.path == "../x":
				if err == nil {
					t.Fatal("no error for a path outside the repository")
				}
			case !errors.Is(err, tt.wantErr):
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if string(got) != tt.want || commit != tt.wantCommit {
				t.Errorf("ReadFileAt = %q at %q, want %q at %q", got, commit, tt.want, tt.wantCommit)
			}
		})
	}
}
