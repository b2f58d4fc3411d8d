// Package localgit is a review.Source reading a local git repository
// through the git command line (the `mergeguard review` CLI). It reviews
// the committed change between two revisions (New), or the uncommitted
// changes of the working tree or the index against HEAD (NewUncommitted).
//
// git runs without a shell, with `-C <repository>`, isolated from the
// user's and the system's configuration (GIT_CONFIG_NOSYSTEM=1,
// GIT_CONFIG_GLOBAL=/dev/null, no HOME), with explicit flags where the
// repository's own configuration or the reviewed commit's .gitattributes
// could change the output (prefixes, renames, colours, external diff and
// textconv drivers, binary detection, quoted paths): see pinnedConfig and
// New's diff flags.
package localgit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/diff"
	"github.com/mergeguard/mergeguard/review/source/difftext"
)

// Output limits: a read past them is an error rather than memory
// exhaustion.
const (
	maxFileBytes = 10 << 20  // one file's content
	maxDiffBytes = 100 << 20 // the whole diff, commit log or file list
)

// Source reads a change from a local repository. It caches what it reads
// and is safe for concurrent use.
type Source struct {
	root    string // the repository's top directory
	gitBin  string // the git binary, found on PATH once
	env     []string
	change  review.Change
	baseRev string // base SHA; an empty-tree id when head is a root commit (BaseSHA "")
	mode    mode   // what the head is: a commit, the working tree or the index

	diff *difftext.Source

	mu    sync.Mutex
	list  []string        // nil until listed
	files map[string]blob // "rev\x00path" → content, or not there
}

// blob is a file read at a revision; found is false when it is not there.
type blob struct {
	data  []byte
	found bool
}

var _ review.Source = (*Source)(nil)

// New opens the repository containing dir and resolves the change.
//
// head is a revision (branch, tag, SHA, "HEAD~2"...), "HEAD" when empty.
// base is a revision too; when empty it is the merge-base of head and the
// default branch — origin/HEAD, else the first of main, master,
// origin/main, origin/master that exists — so that a feature branch is
// reviewed against where it forked. When head is on the default branch
// (the merge-base is head itself) or no default branch exists, base is
// head's first parent: the last commit is reviewed. A root commit is
// reviewed against the empty tree.
func New(ctx context.Context, dir, base, head string) (*Source, error) {
	s := &Source{env: gitEnv(), files: map[string]blob{}}
	if err := s.open(ctx, dir); err != nil {
		return nil, err
	}

	if head == "" {
		head = "HEAD"
	}
	headSHA, err := s.resolve(ctx, head)
	if err != nil {
		return nil, fmt.Errorf("localgit: head %q: %w", head, err)
	}
	baseSHA := ""
	if base != "" {
		if baseSHA, err = s.resolve(ctx, base); err != nil {
			return nil, fmt.Errorf("localgit: base %q: %w", base, err)
		}
	} else if base, baseSHA, err = s.defaultBase(ctx, head, headSHA); err != nil {
		return nil, fmt.Errorf("localgit: default base of %s: %w", head, err)
	}
	s.change = review.Change{
		Repository: filepath.Base(s.root),
		BaseRef:    base,
		HeadRef:    head,
		BaseSHA:    baseSHA,
		HeadSHA:    headSHA,
	}
	s.baseRev = baseSHA
	if baseSHA == "" {
		if s.baseRev, err = s.emptyTree(ctx); err != nil {
			return nil, fmt.Errorf("localgit: empty tree: %w", err)
		}
	}
	if head == "HEAD" {
		if branch, err := s.git(ctx, maxDiffBytes, "symbolic-ref", "--quiet", "--short", "HEAD"); err == nil {
			s.change.HeadRef = strings.TrimSpace(string(branch))
		}
	}
	out, err := s.git(ctx, maxDiffBytes, "log", "-1", "--no-show-signature", "--format=%an%x00%s%x00%b", headSHA)
	if err != nil {
		return nil, fmt.Errorf("localgit: head commit: %w", err)
	}
	if parts := strings.SplitN(string(out), "\x00", 3); len(parts) == 3 {
		s.change.Author, s.change.Title, s.change.Body = parts[0], parts[1], strings.TrimSpace(parts[2])
	}

	// --text: the reviewed commit's .gitattributes (-diff, binary, a
	// driver's binary=true) and core.bigFileThreshold must not turn a text
	// file into "Binary files differ"; review/diff decides binary by
	// content. The other flags pin what configuration could change.
	text, err := s.gitText(ctx, maxDiffBytes, append(append([]string{"diff"}, diffFlags()...), s.baseRev, headSHA, "--")...)
	if err != nil {
		return nil, fmt.Errorf("localgit: diff: %w", err)
	}
	if s.diff, err = difftext.New(text); err != nil {
		return nil, fmt.Errorf("localgit: %w", err)
	}
	return s, nil
}

// diffFlags are the flags of every `git diff` a Source runs (see New).
func diffFlags() []string {
	return []string{"--text", "--no-color", "--no-ext-diff", "--no-textconv",
		"--no-relative", "-M", "--unified=3", "--inter-hunk-context=0", "--submodule=short",
		"--src-prefix=a/", "--dst-prefix=b/"}
}

// defaultBase finds the base of head as New describes; name and baseSHA
// are empty when head is a root commit reviewed against the empty tree.
func (s *Source) defaultBase(ctx context.Context, head, headSHA string) (name, baseSHA string, err error) {
	candidates := []string{"main", "master", "origin/main", "origin/master"}
	if ref, err := s.git(ctx, maxDiffBytes, "symbolic-ref", "--quiet", "refs/remotes/origin/HEAD"); err == nil {
		candidates = append([]string{strings.TrimPrefix(strings.TrimSpace(string(ref)), "refs/remotes/")}, candidates...)
	}
	for _, c := range candidates {
		mb, err := s.git(ctx, maxDiffBytes, "merge-base", c, headSHA)
		if err != nil {
			continue // no such branch, or unrelated histories
		}
		if sha := strings.TrimSpace(string(mb)); sha != headSHA {
			return c, sha, nil
		}
		break
	}
	parent, err := s.resolve(ctx, headSHA+"^")
	if err != nil {
		// A root commit, unless the lookups failed because ctx ended.
		return "", "", ctx.Err()
	}
	return head + "^", parent, nil
}

// resolve turns a revision into a commit SHA.
func (s *Source) resolve(ctx context.Context, rev string) (string, error) {
	if strings.HasPrefix(rev, "-") {
		return "", fmt.Errorf("revision %q starts with '-'", rev)
	}
	out, err := s.git(ctx, maxDiffBytes, "rev-parse", "--verify", "--quiet", "--end-of-options", rev+"^{commit}")
	if err != nil {
		return "", fmt.Errorf("not a commit: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// emptyTree is the id of the empty tree in the repository's hash format.
func (s *Source) emptyTree(ctx context.Context) (string, error) {
	out, err := s.git(ctx, maxDiffBytes, "hash-object", "-t", "tree", os.DevNull)
	return strings.TrimSpace(string(out)), err
}

// Change returns the change's revisions and the head commit's author,
// subject (as Title) and body. Repository is the directory's name. BaseRef
// and BaseSHA are empty when a root commit is reviewed.
func (s *Source) Change(context.Context) (review.Change, error) { return s.change, nil }

// Diff returns `git diff -M base head` with a/ and b/ prefixes and three
// lines of context, computed by New.
func (s *Source) Diff(ctx context.Context) (string, error) { return s.diff.Diff(ctx) }

// Files lists the changed files, from the diff.
func (s *Source) Files(ctx context.Context) ([]review.ChangedFile, error) { return s.diff.Files(ctx) }

// ParsedDiff returns the diff as parsed when the Source was opened, so
// that a review does not parse it again. The caller must not modify it.
func (s *Source) ParsedDiff(ctx context.Context) (*diff.Diff, error) { return s.diff.ParsedDiff(ctx) }

// Commits lists up to max commits reachable from head and not from base,
// the most recent ones, oldest first; max <= 0 lists them all.
func (s *Source) Commits(ctx context.Context, max int) ([]review.Commit, error) {
	if s.mode != modeCommit {
		return nil, nil // uncommitted changes have no commits
	}
	args := []string{"log", "-z", "--no-show-signature", "--format=%H%n%an%n%aI%n%B"}
	if max > 0 {
		args = append(args, "-n", strconv.Itoa(max))
	}
	if s.change.BaseSHA == "" { // a root commit: all its history
		args = append(args, s.change.HeadSHA)
	} else {
		args = append(args, s.baseRev+".."+s.change.HeadSHA)
	}
	out, err := s.git(ctx, maxDiffBytes, append(args, "--")...)
	if err != nil {
		return nil, fmt.Errorf("localgit: commits: %w", err)
	}
	var commits []review.Commit
	for _, rec := range strings.Split(string(out), "\x00") {
		f := strings.SplitN(rec, "\n", 4)
		if len(f) < 4 {
			continue
		}
		date, err := time.Parse(time.RFC3339, f[2])
		if err != nil {
			return nil, fmt.Errorf("localgit: commits: date of %s: %w", f[0], err)
		}
		commits = append(commits, review.Commit{SHA: f[0], Author: f[1], Date: date, Message: strings.TrimSpace(f[3])})
	}
	slices.Reverse(commits)
	return commits, nil
}

// ReadFile returns a file's content at the base or head commit, or
// review.ErrNotFound when it does not exist there or is not a file.
// Files over 10 MiB are an error.
func (s *Source) ReadFile(ctx context.Context, p string, rev review.Revision) ([]byte, error) {
	if err := checkPath(p); err != nil {
		return nil, fmt.Errorf("localgit: read %q: %w", p, err)
	}
	sha := s.change.HeadSHA
	switch rev {
	case review.Head:
		if s.mode == modeStaged {
			sha = "" // "blob :path" reads the index
		}
	case review.Base:
		sha = s.baseRev
	default:
		return nil, fmt.Errorf("localgit: read %s: unknown revision %q", p, rev)
	}
	key := string(rev) + "\x00" + p
	s.mu.Lock()
	f, ok := s.files[key]
	s.mu.Unlock()
	if !ok {
		b, err := s.readAt(ctx, sha, p, rev)
		var ge *gitError
		switch {
		case errors.Is(err, review.ErrNotFound):
			f = blob{}
		case errors.As(err, &ge) && ge.notFound():
			f = blob{}
		case err != nil:
			return nil, fmt.Errorf("localgit: read %s at %s: %w", p, rev, err) // not cached: it may work next time
		default:
			f = blob{data: b, found: true}
		}
		s.mu.Lock()
		s.files[key] = f
		s.mu.Unlock()
	}
	if !f.found {
		return nil, fmt.Errorf("localgit: read %s at %s: %w", p, rev, review.ErrNotFound)
	}
	return f.data, nil
}

// readAt reads p at sha, or in the working tree for the head of a
// working-tree Source.
func (s *Source) readAt(ctx context.Context, sha, p string, rev review.Revision) ([]byte, error) {
	if rev == review.Head && s.mode == modeWorkTree {
		return s.readWorkTree(p)
	}
	return s.git(ctx, maxFileBytes, "cat-file", "blob", sha+":"+p)
}

// Blame tells who last changed a line at the head commit, from
// `git blame --porcelain`; Message is the commit's subject. A path or line
// that does not exist is review.ErrNotFound.
func (s *Source) Blame(ctx context.Context, p string, line int) (review.BlameLine, error) {
	if err := checkPath(p); err != nil {
		return review.BlameLine{}, fmt.Errorf("localgit: blame %q: %w", p, err)
	}
	if line < 1 {
		return review.BlameLine{}, fmt.Errorf("localgit: blame %s:%d: %w", p, line, review.ErrNotFound)
	}
	n := strconv.Itoa(line)
	args := []string{"blame", "--porcelain", "--no-textconv", "-L", n + "," + n}
	if s.mode == modeCommit {
		args = append(args, s.change.HeadSHA) // else the working tree's lines
	}
	out, err := s.git(ctx, maxFileBytes, append(args, "--", p)...)
	if err != nil {
		var ge *gitError
		if errors.As(err, &ge) && ge.notFound() {
			return review.BlameLine{}, fmt.Errorf("localgit: blame %s:%d: %w", p, line, review.ErrNotFound)
		}
		return review.BlameLine{}, fmt.Errorf("localgit: blame %s:%d: %w", p, line, err)
	}
	bl, err := parsePorcelain(string(out))
	if err != nil {
		return review.BlameLine{}, fmt.Errorf("localgit: blame %s:%d: %w", p, line, err)
	}
	return bl, nil
}

// parsePorcelain reads the one-line output of `git blame --porcelain`.
func parsePorcelain(out string) (review.BlameLine, error) {
	lines := strings.Split(out, "\n")
	first := strings.Fields(lines[0])
	if len(first) < 3 {
		return review.BlameLine{}, fmt.Errorf("unexpected blame output %q", lines[0])
	}
	bl := review.BlameLine{CommitSHA: first[0]}
	var unix int64
	tz := "+0000"
	for _, l := range lines[1:] {
		if strings.HasPrefix(l, "\t") {
			break
		}
		key, val, _ := strings.Cut(l, " ")
		switch key {
		case "author":
			bl.Author = val
		case "author-time":
			unix, _ = strconv.ParseInt(val, 10, 64)
		case "author-tz":
			tz = val
		case "summary":
			bl.Message = val
		}
	}
	bl.Date = time.Unix(unix, 0).UTC()
	if zone, err := time.Parse("-0700", tz); err == nil {
		bl.Date = bl.Date.In(zone.Location())
	}
	return bl, nil
}

// ListFiles lists every file path at the head commit.
func (s *Source) ListFiles(ctx context.Context) ([]string, error) {
	s.mu.Lock()
	list := s.list
	s.mu.Unlock()
	if list != nil {
		return slices.Clone(list), nil
	}
	args := []string{"ls-tree", "-r", "-z", "--name-only", "--full-tree", s.change.HeadSHA}
	if s.mode != modeCommit {
		args = []string{"ls-files", "-z", "--cached", "--full-name"} // the index: tracked files
	}
	out, err := s.git(ctx, maxDiffBytes, args...)
	if err != nil {
		return nil, fmt.Errorf("localgit: list files: %w", err)
	}
	list = []string{}
	for _, p := range strings.Split(string(out), "\x00") {
		if p != "" {
			list = append(list, p)
		}
	}
	s.mu.Lock()
	s.list = list
	s.mu.Unlock()
	return slices.Clone(list), nil
}

// checkPath rejects paths that are not clean, relative, inside the
// repository.
func checkPath(p string) error {
	switch {
	case p == "":
		return errors.New("empty path")
	case strings.ContainsRune(p, 0):
		return errors.New("path contains a NUL byte")
	case path.IsAbs(p) || filepath.IsAbs(p):
		return errors.New("absolute path")
	case path.Clean(p) != p:
		return errors.New("path is not clean")
	case p == ".." || strings.HasPrefix(p, "../"):
		return errors.New("path outside the repository")
	}
	return nil
}

// gitEnv is the environment git runs in: PATH, and nothing else that could
// bring the user's configuration or attributes, a pager or a prompt.
func gitEnv() []string {
	return []string{
		"PATH=" + os.Getenv("PATH"),
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=" + os.DevNull,
		"GIT_ATTR_NOSYSTEM=1",
		"GIT_TERMINAL_PROMPT=0",
		"GIT_OPTIONAL_LOCKS=0",
		"GIT_PAGER=cat",
		"LC_ALL=C",
	}
}

// gitError is a git command that failed, with its stderr.
type gitError struct {
	args   []string
	err    error
	stderr string
}

func (e *gitError) Error() string {
	msg := strings.TrimSpace(e.stderr)
	if msg == "" {
		return fmt.Sprintf("git %s: %v", e.args[0], e.err)
	}
	return fmt.Sprintf("git %s: %v: %s", e.args[0], e.err, msg)
}

func (e *gitError) Unwrap() error { return e.err }

// notFound reports whether git failed because an object, path or line
// does not exist.
func (e *gitError) notFound() bool {
	for _, m := range []string{
		"does not exist", "Not a valid object name", "exists on disk, but not in",
		"bad file", "no such path", "has only", "not a blob", "invalid object type",
	} {
		if strings.Contains(e.stderr, m) {
			return true
		}
	}
	return false
}

// pinnedConfig overrides, on every git invocation, the repository's own
// configuration (.git/config) where it would change what MergeGuard reads:
// the diff's format and content, log encodings and signatures, blame's
// ignored revisions. Attributes committed in the reviewed tree cannot be
// overridden by configuration; the diff's flags (--text, --no-textconv,
// --no-ext-diff) neutralise them.
var pinnedConfig = []string{
	"-c", "core.quotepath=false",
	"-c", "core.attributesFile=" + os.DevNull,
	"-c", "core.bigFileThreshold=2g",
	"-c", "diff.external=",
	"-c", "diff.noprefix=false",
	"-c", "diff.mnemonicPrefix=false",
	"-c", "diff.suppressBlankEmpty=false",
	"-c", "diff.relative=false",
	"-c", "color.ui=false",
	"-c", "i18n.logOutputEncoding=UTF-8",
	"-c", "log.showSignature=false",
	"-c", "blame.ignoreRevsFile=",
	"--no-pager", "--literal-pathspecs",
}

func (s *Source) git(ctx context.Context, limit int64, args ...string) ([]byte, error) {
	return s.gitIn(ctx, s.root, limit, args...)
}

// ErrNotRepository is the error of opening a directory outside any git
// repository.
var ErrNotRepository = errors.New("not in a git repository")

// TopLevel returns the root of the work tree that holds dir;
// ErrNotRepository when dir is in none.
func TopLevel(ctx context.Context, dir string) (string, error) {
	s := &Source{env: gitEnv()}
	if err := s.open(ctx, dir); err != nil {
		return "", err
	}
	return s.root, nil
}

// open sets the repository's root: the top level of the work tree that
// holds dir. A dir outside any repository is ErrNotRepository.
func (s *Source) open(ctx context.Context, dir string) error {
	git, err := exec.LookPath("git")
	if err != nil {
		return fmt.Errorf("localgit: %w", err)
	}
	s.gitBin = git
	out, err := s.gitIn(ctx, dir, maxDiffBytes, "rev-parse", "--show-toplevel")
	var ge *gitError
	if errors.As(err, &ge) && strings.Contains(ge.stderr, "not a git repository") {
		return fmt.Errorf("localgit: %s is %w", dir, ErrNotRepository)
	}
	if err != nil {
		return fmt.Errorf("localgit: open %s: %w", dir, err)
	}
	s.root = strings.TrimSuffix(string(out), "\n") // a directory name may end in a space
	return nil
}

// gitIn runs git in dir and returns its stdout, at most limit bytes.
func (s *Source) gitIn(ctx context.Context, dir string, limit int64, args ...string) ([]byte, error) {
	var out bytes.Buffer
	if err := s.gitInto(ctx, dir, &out, limit, args...); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// gitText runs git in the repository and returns its stdout as a string,
// at most limit bytes, read once into the string (a diff is the largest
// thing a review holds: it is not copied from bytes).
func (s *Source) gitText(ctx context.Context, limit int64, args ...string) (string, error) {
	var out strings.Builder
	if err := s.gitInto(ctx, s.root, &out, limit, args...); err != nil {
		return "", err
	}
	return out.String(), nil
}

// gitInto runs git in dir and writes its stdout, at most limit bytes, to
// out.
func (s *Source) gitInto(ctx context.Context, dir string, out interface {
	io.Writer
	Len() int
}, limit int64, args ...string) error {
	full := append(append([]string{"-C", dir}, pinnedConfig...), args...)
	// The binary found when the Source opened: every command of a review
	// runs the same git, without a PATH search each (hundreds per review).
	cmd := exec.CommandContext(ctx, s.gitBin, full...) //nolint:gosec // git found on PATH at open, arguments passed without a shell
	cmd.Env = s.env
	cmd.WaitDelay = 5 * time.Second
	var stderr bytes.Buffer
	cmd.Stderr = &limitedWriter{w: &stderr, n: 64 << 10}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("git %s: %w", args[0], err)
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("git %s: %w", args[0], err)
	}
	_, readErr := io.Copy(out, io.LimitReader(stdout, limit+1))
	if int64(out.Len()) > limit {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return fmt.Errorf("git %s: output larger than %d MiB", args[0], limit>>20)
	}
	if err := cmd.Wait(); err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return fmt.Errorf("git %s: %w", args[0], ctxErr)
		}
		return &gitError{args: args, err: err, stderr: stderr.String()}
	}
	if readErr != nil {
		return fmt.Errorf("git %s: read output: %w", args[0], readErr)
	}
	return nil
}

// limitedWriter keeps the first n bytes written to it and drops the rest.
type limitedWriter struct {
	w io.Writer
	n int
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	if l.n > 0 {
		k := min(len(p), l.n)
		l.n -= k
		if _, err := l.w.Write(p[:k]); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}
