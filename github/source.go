package github

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"

	gh "github.com/google/go-github/v60/github"
	"github.com/shurcooL/githubv4"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/diff"
)

// GitHub's listing limits.
const (
	// maxListedFiles is how many files pulls/list-files returns at most.
	maxListedFiles = 3000
	// maxListedCommits is how many commits pulls/list-commits returns.
	maxListedCommits = 250
	// perPage is the largest page GitHub serves.
	perPage = 100
)

// SourceOptions tunes a Source. Zero fields take the defaults of
// DefaultSourceOptions.
type SourceOptions struct {
	// MaxFiles caps how many changed files are listed; GitHub lists at
	// most 3,000.
	MaxFiles int
	// ArchiveMaxBytes and ArchiveMaxFiles cap the head archive Preload
	// keeps in memory (uncompressed). Above either, Preload gives up and
	// head files keep being read one by one.
	ArchiveMaxBytes int64
	ArchiveMaxFiles int
	// ArchiveClient downloads the archive from the address GitHub
	// redirects to (codeload). It must not carry GitHub credentials: the
	// address is signed.
	ArchiveClient *http.Client
}

// DefaultSourceOptions returns the defaults: 3,000 files, a 50 MB and
// 20,000 files archive cap, and an archive client with a two minute timeout.
func DefaultSourceOptions() SourceOptions {
	return SourceOptions{
		MaxFiles:        maxListedFiles,
		ArchiveMaxBytes: 50 << 20,
		ArchiveMaxFiles: 20000,
		ArchiveClient:   &http.Client{Timeout: 2 * time.Minute},
	}
}

func (o SourceOptions) withDefaults() SourceOptions {
	d := DefaultSourceOptions()
	if o.MaxFiles <= 0 || o.MaxFiles > maxListedFiles {
		o.MaxFiles = d.MaxFiles
	}
	if o.ArchiveMaxBytes <= 0 {
		o.ArchiveMaxBytes = d.ArchiveMaxBytes
	}
	if o.ArchiveMaxFiles <= 0 {
		o.ArchiveMaxFiles = d.ArchiveMaxFiles
	}
	if o.ArchiveClient == nil {
		o.ArchiveClient = d.ArchiveClient
	}
	return o
}

// Source reads one pull request through the GitHub API for a review. It
// implements review.Source and makes as few calls as it can: the pull
// request, its raw diff, its files and its commits are fetched once; each
// file is fetched at most once per revision (see ReadFile); the head tree
// is fetched only to list files, and the head archive only for Preload;
// blame is one GraphQL query per file. Everything is cached for the life
// of the Source, which is safe for concurrent use. A missing object is
// review.ErrNotFound.
type Source struct {
	client      *gh.Client
	v4          *githubv4.Client
	owner, repo string
	number      int
	opts        SourceOptions

	pr      memo[struct{}, *gh.PullRequest]
	diff    memo[struct{}, string]
	files   memo[struct{}, []*gh.CommitFile]
	commits memo[struct{}, []review.Commit]
	trees   memo[string, *tree]
	blobs   memo[string, []byte]
	reads   memo[fileAt, []byte]
	archive memo[struct{}, *archive]
	blame   memo[string, []blameRange]

	// hidden holds the files whose diff GitHub hid as binary and the
	// Source read back from both sides (hidden.go); set once by Diff.
	hiddenMu sync.Mutex
	hidden   map[string]bool
}

var _ review.Source = (*Source)(nil)

// NewSource returns a Source for pull request number of owner/repo. v4 may
// be nil: Blame then answers review.ErrUnsupported.
func NewSource(client *gh.Client, v4 *githubv4.Client, owner, repo string, number int, opts SourceOptions) *Source {
	return &Source{client: client, v4: v4, owner: owner, repo: repo, number: number, opts: opts.withDefaults()}
}

// String names the pull request, "owner/repo#number".
func (s *Source) String() string { return fmt.Sprintf("%s/%s#%d", s.owner, s.repo, s.number) }

// pull returns the pull request, fetched once.
//
// GitHub API docs: https://docs.github.com/rest/pulls/pulls#get-a-pull-request
func (s *Source) pull(ctx context.Context) (*gh.PullRequest, error) {
	return s.pr.get(ctx, struct{}{}, func() (*gh.PullRequest, error) {
		pr, _, err := s.client.PullRequests.Get(ctx, s.owner, s.repo, s.number)
		if err != nil {
			return nil, fmt.Errorf("get pull request %s: %w", s, apiError(err))
		}
		return pr, nil
	})
}

// Change returns the pull request's metadata.
func (s *Source) Change(ctx context.Context) (review.Change, error) {
	pr, err := s.pull(ctx)
	if err != nil {
		return review.Change{}, err
	}
	c := review.Change{
		Repository: s.owner + "/" + s.repo,
		Number:     pr.GetNumber(),
		URL:        pr.GetHTMLURL(),
		Title:      pr.GetTitle(),
		Body:       pr.GetBody(),
		Author:     pr.GetUser().GetLogin(),
		AuthorBot:  pr.GetUser().GetType() == "Bot",
		Draft:      pr.GetDraft(),
		BaseRef:    pr.GetBase().GetRef(),
		HeadRef:    pr.GetHead().GetRef(),
		BaseSHA:    pr.GetBase().GetSHA(),
		HeadSHA:    pr.GetHead().GetSHA(),
	}
	for _, l := range pr.Labels {
		c.Labels = append(c.Labels, l.GetName())
	}
	return c, nil
}

// Diff returns the pull request's unified diff, fetched once. When GitHub
// refuses the raw diff as too large (406; above 300 files or 20,000 lines)
// it is assembled from the per-file patches of the files list; files whose
// patch GitHub left out appear with their header only (see
// review.ChangedFile.PatchMissing).
//
// GitHub API docs: https://docs.github.com/rest/pulls/pulls#get-a-pull-request
func (s *Source) Diff(ctx context.Context) (string, error) {
	return s.diff.get(ctx, struct{}{}, func() (string, error) {
		raw, _, err := s.client.PullRequests.GetRaw(ctx, s.owner, s.repo, s.number, gh.RawOptions{Type: gh.Diff})
		if err == nil {
			return s.unhideAndRecord(ctx, raw)
		}
		if !isStatus(err, http.StatusNotAcceptable) {
			return "", fmt.Errorf("get diff of %s: %w", s, apiError(err))
		}
		files, err := s.listFiles(ctx)
		if err != nil {
			return "", err
		}
		d, err := diffFromPatches(files)
		if err != nil {
			return "", fmt.Errorf("get diff of %s from patches: %w", s, err)
		}
		return s.unhideAndRecord(ctx, diff.Format(d))
	})
}

// diffFromPatches assembles a diff from the files list's patches.
func diffFromPatches(files []*gh.CommitFile) (*diff.Diff, error) {
	d := &diff.Diff{}
	for _, cf := range files {
		f, err := diff.ParsePatch(cf.GetFilename(), cf.GetPatch())
		if err != nil {
			return nil, err
		}
		switch cf.GetStatus() {
		case "added":
			f.Status, f.OldPath = diff.Added, ""
		case "removed":
			f.Status, f.NewPath = diff.Deleted, ""
		case "renamed", "copied":
			f.Status, f.OldPath, f.Similarity = diff.Renamed, cf.GetPreviousFilename(), 100
			if cf.GetStatus() == "copied" {
				f.Status = diff.Copied
			}
			if cf.GetChanges() > 0 {
				f.Similarity = 50 // unknown: any value git would show for a changed rename
			}
		}
		f.Binary = patchMissing(cf)
		d.Files = append(d.Files, f)
	}
	return d, nil
}

// patchMissing reports whether GitHub left a file's patch out (binary or
// too large), as opposed to a file without textual changes (a pure rename
// or a mode change).
func patchMissing(cf *gh.CommitFile) bool {
	if cf.GetPatch() != "" {
		return false
	}
	switch cf.GetStatus() {
	case "renamed", "copied", "changed", "unchanged":
		return cf.GetChanges() > 0
	}
	return true
}

// listFiles returns the pull request's files, fetched once, 100 a page.
//
// GitHub API docs: https://docs.github.com/rest/pulls/pulls#list-pull-requests-files
func (s *Source) listFiles(ctx context.Context) ([]*gh.CommitFile, error) {
	return s.files.get(ctx, struct{}{}, func() ([]*gh.CommitFile, error) {
		files, err := listAll(ctx, s.opts.MaxFiles, func(opts *gh.ListOptions) ([]*gh.CommitFile, *gh.Response, error) {
			return s.client.PullRequests.ListFiles(ctx, s.owner, s.repo, s.number, opts)
		})
		if err != nil {
			return nil, fmt.Errorf("list files of %s: %w", s, apiError(err))
		}
		return files, nil
	})
}

// Files lists the changed files (at most SourceOptions.MaxFiles).
func (s *Source) Files(ctx context.Context) ([]review.ChangedFile, error) {
	files, err := s.listFiles(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]review.ChangedFile, 0, len(files))
	for _, cf := range files {
		out = append(out, review.ChangedFile{
			Path:         cf.GetFilename(),
			OldPath:      cf.GetPreviousFilename(),
			Status:       cf.GetStatus(),
			Additions:    cf.GetAdditions(),
			Deletions:    cf.GetDeletions(),
			PatchMissing: patchMissing(cf),
		})
	}
	return out, nil
}

// Commits lists the last max commits of the pull request (GitHub lists at
// most 250), oldest first; max <= 0 means all.
//
// GitHub API docs: https://docs.github.com/rest/pulls/pulls#list-commits-on-a-pull-request
func (s *Source) Commits(ctx context.Context, max int) ([]review.Commit, error) {
	all, err := s.commits.get(ctx, struct{}{}, func() ([]review.Commit, error) {
		commits, err := listAll(ctx, maxListedCommits, func(opts *gh.ListOptions) ([]*gh.RepositoryCommit, *gh.Response, error) {
			return s.client.PullRequests.ListCommits(ctx, s.owner, s.repo, s.number, opts)
		})
		if err != nil {
			return nil, fmt.Errorf("list commits of %s: %w", s, apiError(err))
		}
		out := make([]review.Commit, 0, len(commits))
		for _, c := range commits {
			author := c.GetCommit().GetAuthor()
			name := author.GetName()
			if login := c.GetAuthor().GetLogin(); login != "" {
				name = login
			}
			out = append(out, review.Commit{SHA: c.GetSHA(), Author: name, Date: author.GetDate().Time, Message: c.GetCommit().GetMessage()})
		}
		return out, nil
	})
	if err != nil {
		return nil, err
	}
	if max > 0 && len(all) > max {
		all = all[len(all)-max:]
	}
	return append([]review.Commit(nil), all...), nil
}

// tree is a revision's file listing: path → blob sha.
type tree struct {
	blobs     map[string]string
	truncated bool
}

// revisionSHA returns the commit of a revision.
func (s *Source) revisionSHA(ctx context.Context, rev review.Revision) (string, error) {
	pr, err := s.pull(ctx)
	if err != nil {
		return "", err
	}
	switch rev {
	case review.Head:
		return pr.GetHead().GetSHA(), nil
	case review.Base:
		return pr.GetBase().GetSHA(), nil
	}
	return "", fmt.Errorf("unknown revision %q", rev)
}

// tree returns the recursive tree of a commit, fetched once.
//
// GitHub API docs: https://docs.github.com/rest/git/trees#get-a-tree
func (s *Source) tree(ctx context.Context, sha string) (*tree, error) {
	return s.trees.get(ctx, sha, func() (*tree, error) {
		t, _, err := s.client.Git.GetTree(ctx, s.owner, s.repo, sha, true)
		if err != nil {
			return nil, fmt.Errorf("get tree %s of %s/%s: %w", sha, s.owner, s.repo, apiError(err))
		}
		out := &tree{blobs: make(map[string]string, len(t.Entries)), truncated: t.GetTruncated()}
		for _, e := range t.Entries {
			if e.GetType() == "blob" {
				out.blobs[e.GetPath()] = e.GetSHA()
			}
		}
		return out, nil
	})
}

// fileAt is a file at a commit.
type fileAt struct{ sha, path string }

// ReadFile returns a file's content at the base or head commit, each file
// fetched at most once per commit:
//   - at head after Preload, from the archive (no call);
//   - through the revision's tree when it is at hand — always at base,
//     whose tree is fetched once and answers the convention files
//     (.mergeguard.yml, AGENTS.md, CONTRIBUTING.md), most of which a
//     repository lacks, without a call each; at head once ListFiles
//     fetched it. A path the tree lists is one blob call (each blob at
//     most once), a path it does not list is review.ErrNotFound without a
//     call, and a truncated tree falls back to the contents API;
//   - otherwise at head, through the contents API: one call per file,
//     instead of the whole head tree for the first file read.
func (s *Source) ReadFile(ctx context.Context, path string, rev review.Revision) ([]byte, error) {
	if rev == review.Head {
		if a, ok := s.archive.peek(struct{}{}); ok && a != nil {
			if b, ok := a.files[path]; ok {
				return bytes.Clone(b), nil
			}
			return nil, fmt.Errorf("read %s at %s: %w", path, rev, review.ErrNotFound)
		}
	}
	sha, err := s.revisionSHA(ctx, rev)
	if err != nil {
		return nil, err
	}
	b, err := s.reads.get(ctx, fileAt{sha: sha, path: path}, func() ([]byte, error) {
		if _, ok := s.trees.peek(sha); ok || rev == review.Base {
			return s.readFromTree(ctx, path, rev, sha)
		}
		return s.contents(ctx, path, sha)
	})
	if err != nil {
		return nil, err
	}
	return bytes.Clone(b), nil
}

// readFromTree reads a file through the tree of commit sha and the file's
// blob.
func (s *Source) readFromTree(ctx context.Context, path string, rev review.Revision, sha string) ([]byte, error) {
	t, err := s.tree(ctx, sha)
	if err != nil {
		return nil, err
	}
	blob, ok := t.blobs[path]
	if !ok {
		if t.truncated {
			return s.contents(ctx, path, sha)
		}
		return nil, fmt.Errorf("read %s at %s: %w", path, rev, review.ErrNotFound)
	}
	return s.blobs.get(ctx, blob, func() ([]byte, error) {
		b, _, err := s.client.Git.GetBlobRaw(ctx, s.owner, s.repo, blob)
		if err != nil {
			return nil, fmt.Errorf("read %s at %s: %w", path, rev, apiError(err))
		}
		return b, nil
	})
}

// contents reads a file at commit sha through the contents API with the
// raw media type, which serves files up to 100 MB. GitHub answers a
// directory (and a submodule, or a symbolic link leaving the repository)
// with JSON instead of content: that path is not a file,
// review.ErrNotFound.
//
// GitHub API docs: https://docs.github.com/rest/repos/contents#get-repository-content
func (s *Source) contents(ctx context.Context, path, sha string) ([]byte, error) {
	u := fmt.Sprintf("repos/%s/%s/contents/%s?ref=%s", s.owner, s.repo, escapePath(path), url.QueryEscape(sha))
	req, err := s.client.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("read %s at %s: %w", path, sha, err)
	}
	req.Header.Set("Accept", "application/vnd.github.raw")
	var buf bytes.Buffer
	resp, err := s.client.Do(ctx, req, &buf)
	if err != nil {
		return nil, fmt.Errorf("read %s at %s: %w", path, sha, apiError(err))
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == "application/json" {
		return nil, fmt.Errorf("read %s at %s: not a file: %w", path, sha, review.ErrNotFound)
	}
	return buf.Bytes(), nil
}

func escapePath(p string) string {
	parts := strings.Split(p, "/")
	for i, part := range parts {
		parts[i] = url.PathEscape(part)
	}
	return strings.Join(parts, "/")
}

// ListFiles lists every file path at the head commit, sorted, from the head
// tree (symbolic links included, directories and submodules not).
func (s *Source) ListFiles(ctx context.Context) ([]string, error) {
	sha, err := s.revisionSHA(ctx, review.Head)
	if err != nil {
		return nil, err
	}
	t, err := s.tree(ctx, sha)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(t.blobs))
	for p := range t.blobs {
		out = append(out, p)
	}
	sort.Strings(out)
	return out, nil
}

// apiError marks GitHub's 404 as review.ErrNotFound, keeping the original.
func apiError(err error) error {
	if isStatus(err, http.StatusNotFound) {
		return fmt.Errorf("%w: %w", review.ErrNotFound, err)
	}
	return err
}

// isStatus reports whether err is a GitHub API error with the given status.
func isStatus(err error, status int) bool {
	var er *gh.ErrorResponse
	if errors.As(err, &er) && er.Response != nil {
		return er.Response.StatusCode == status
	}
	return false
}
