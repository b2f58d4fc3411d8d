package eval

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// materialize makes a case's tree into a git repository under tempDir: a
// commit of base/, then a commit with head/ copied over it, whose message
// is the case's title and body. It returns the directory, the two
// commits and a cleanup that removes the directory.
func materialize(ctx context.Context, c Case, tempDir string) (dir, base, head string, cleanup func(), err error) {
	dir, err = os.MkdirTemp(tempDir, "mergeguard-eval-")
	if err != nil {
		return "", "", "", func() {}, fmt.Errorf("make repository: %w", err)
	}
	cleanup = func() { _ = os.RemoveAll(dir) }
	fail := func(err error) (string, string, string, func(), error) {
		cleanup()
		return "", "", "", func() {}, err
	}
	if err := git(ctx, dir, "init", "-q", "-b", "main"); err != nil {
		return fail(err)
	}
	if base, err = commitTree(ctx, dir, filepath.Join(c.Tree, "base"), "base"); err != nil {
		return fail(err)
	}
	msg := strings.TrimSpace(c.Title + "\n\n" + c.Body)
	if msg == "" {
		msg = "change"
	}
	if head, err = commitTree(ctx, dir, filepath.Join(c.Tree, "head"), msg); err != nil {
		return fail(err)
	}
	return dir, base, head, cleanup, nil
}

// commitTree copies the files of from over dir and commits them all.
func commitTree(ctx context.Context, dir, from, msg string) (string, error) {
	if err := copyTree(from, dir); err != nil {
		return "", err
	}
	if err := git(ctx, dir, "add", "-A"); err != nil {
		return "", err
	}
	if err := git(ctx, dir, "commit", "-q", "--allow-empty", "--no-verify", "-m", msg); err != nil {
		return "", err
	}
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, "git", "rev-parse", "HEAD")
	cmd.Dir, cmd.Env, cmd.Stdout = dir, gitEnv(), &out
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("git rev-parse: %w", err)
	}
	return strings.TrimSpace(out.String()), nil
}

// copyTree copies the regular files under from to the same paths under
// to; a missing from copies nothing.
func copyTree(from, to string) error {
	if _, err := os.Stat(from); os.IsNotExist(err) {
		return nil
	}
	err := filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(from, p)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		dst := filepath.Join(to, rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		return os.WriteFile(dst, data, 0o644)
	})
	if err != nil {
		return fmt.Errorf("copy %s: %w", from, err)
	}
	return nil
}

// git runs a git command in dir with no user configuration and a fixed
// identity and date, so that the commits are the same on every run.
func git(ctx context.Context, dir string, args ...string) error {
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir, cmd.Env, cmd.Stderr = dir, gitEnv(), &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("git %s: %w: %s", args[0], err, strings.TrimSpace(stderr.String()))
	}
	return nil
}

func gitEnv() []string {
	return []string{
		"PATH=" + os.Getenv("PATH"),
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=" + os.DevNull,
		"GIT_TERMINAL_PROMPT=0",
		"GIT_AUTHOR_NAME=eval", "GIT_AUTHOR_EMAIL=eval@example.invalid",
		"GIT_COMMITTER_NAME=eval", "GIT_COMMITTER_EMAIL=eval@example.invalid",
		"GIT_AUTHOR_DATE=2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE=2026-01-01T00:00:00Z",
		"LC_ALL=C",
	}
}
