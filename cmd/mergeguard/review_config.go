package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/source/localgit"
)

// baseRev is a revision .mergeguard.yml may be read at: rev as git takes
// it, name as the output shows it.
type baseRev struct{ rev, name string }

// diffBases are the revisions a --diff review reads .mergeguard.yml at,
// the first that exists wins: --base; else, in GitHub Actions on a pull
// request (GITHUB_BASE_REF), the base branch as fetched
// (origin/$GITHUB_BASE_REF), then the base commit GITHUB_SHA names (the
// base branch's tip for pull_request_target; the first parent of GitHub's
// merge commit for pull_request, there when fetch-depth is 2 or more).
// None when no base is known.
func diffBases(f reviewFlags, getenv func(string) string) []baseRev {
	if f.base != "" {
		return []baseRev{{f.base, f.base}}
	}
	ref := getenv("GITHUB_BASE_REF")
	if ref == "" {
		return nil
	}
	revs := []baseRev{{"refs/remotes/origin/" + ref, "origin/" + ref}}
	switch sha := getenv("GITHUB_SHA"); {
	case sha == "":
	case getenv("GITHUB_EVENT_NAME") == "pull_request_target":
		revs = append(revs, baseRev{sha, sha + " (GITHUB_SHA)"})
	case getenv("GITHUB_EVENT_NAME") == "pull_request":
		revs = append(revs, baseRev{sha + "^1", sha + "^1 (GITHUB_SHA's base parent)"})
	}
	return revs
}

// diffRepoFile reads the .mergeguard.yml that applies to a --diff review
// of the repository at f.dir, and says in note which one it is. In a CI
// job the working folder holds the pull request's own file, which could
// turn its review off (enabled: false, path_filters: ["!**"]): so whenever
// a base revision is known (diffBases) the file is read there, and a file
// absent there means the defaults. When GITHUB_BASE_REF names a base that
// is not in the repository, the defaults apply too, never the working
// folder's file. Only without any base is the working folder's file read.
func diffRepoFile(ctx context.Context, f reviewFlags, getenv func(string) string) (yml []byte, note string, err error) {
	bases := diffBases(f, getenv)
	if len(bases) == 0 {
		return workFolderRepoFile(f.dir)
	}
	var lastErr error
	for _, b := range bases {
		yml, commit, err := localgit.ReadFileAt(ctx, f.dir, b.rev, config.RepoFileName)
		switch {
		case errors.Is(err, localgit.ErrUnknownRevision):
			continue
		case err != nil && f.base == "" && !errors.Is(err, review.ErrNotFound):
			lastErr = err // GITHUB_BASE_REF's base unreadable, e.g. no repository at f.dir: the defaults below
			continue
		case errors.Is(err, review.ErrNotFound):
			return nil, fmt.Sprintf("configuration: no %s at %s (%.12s): review defaults (the working folder's is not read)",
				config.RepoFileName, b.name, commit), nil
		case err != nil:
			return nil, "", fmt.Errorf("review: %w", err)
		}
		return yml, fmt.Sprintf("configuration: %s at %s (%.12s)", config.RepoFileName, b.name, commit), nil
	}
	if f.base != "" {
		return nil, "", usageError{fmt.Errorf("review: --base %q is not a commit of the repository at %s", f.base, f.dir)}
	}
	ref := getenv("GITHUB_BASE_REF")
	why := "origin/" + ref + " is not in this repository"
	if lastErr != nil {
		why = lastErr.Error()
	}
	return nil, fmt.Sprintf("configuration: review defaults: %s could not be read from the base branch (%s); "+
		"the working folder's is the pull request's own and is not read. Fetch the base: actions/checkout with fetch-depth: 0, or git fetch origin %s",
		config.RepoFileName, why, ref), nil
}

// workFolderRepoFile reads the .mergeguard.yml of dir, for a --diff review
// with no base revision known; note names it.
func workFolderRepoFile(dir string) (yml []byte, note string, err error) {
	path := filepath.Join(dir, config.RepoFileName)
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	yml, err = os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, fmt.Sprintf("configuration: review defaults: no %s in the working folder (%s) and no base revision known (--base)", config.RepoFileName, filepath.Dir(path)), nil
	case err != nil:
		return nil, "", fmt.Errorf("review: read %s: %w", config.RepoFileName, err)
	}
	return yml, fmt.Sprintf("configuration: %s of the working folder (%s), not of a base revision: pass --base to read it from the base branch", config.RepoFileName, path), nil
}
