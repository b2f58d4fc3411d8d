package web

import (
	"context"
	"sync"
	"time"

	"github.com/mergeguard/mergeguard/server/access"
)

// Readers answers, with a person's GitHub user token, what they may read
// (oauth.Flow).
type Readers interface {
	// CanReadID reports whether the person can read the repository of
	// GitHub id id, whatever its name now.
	CanReadID(ctx context.Context, token string, id int64) (bool, error)
}

// Visibility bounds: answers are kept VisibilityTTL, at most
// visibilityEntries of them; one page asks about at most
// visibilityParallel repositories at once.
const (
	VisibilityTTL      = time.Minute
	visibilityEntries  = 10000
	visibilityParallel = 8
)

// visibility decides which repositories a viewer sees: an admin all, a
// person signed in with GitHub those GitHub lets them read, asked by
// GitHub's repository id (an organisation's owners read all of its
// repositories), nobody a run without one. A name is never asked about:
// it passes from one repository to another when one is renamed,
// transferred or deleted and another takes it (docs/security.md).
// GitHub's answers are cached briefly per person.
type visibility struct {
	gh      Readers
	now     func() time.Time
	mu      sync.Mutex
	entries map[visKey]visEntry
}

type visKey struct {
	user int64
	repo int64 // GitHub's repository id
}

type visEntry struct {
	yes     bool
	expires time.Time
}

func newVisibility(gh Readers) *visibility {
	return &visibility{gh: gh, now: time.Now, entries: make(map[visKey]visEntry)}
}

// canSee reports whether v may see the runs, pull requests and learnings
// of the repository of GitHub id repoID (0 when unknown: a diff run, or a
// run stored before MergeGuard kept ids, which only admins see).
func (c *visibility) canSee(ctx context.Context, v access.Viewer, repoID int64) (bool, error) {
	if v.Admin {
		return true, nil
	}
	if repoID <= 0 || c == nil || !v.GitHubToken.IsSet() || v.UserID <= 0 {
		return false, nil
	}
	tok := v.GitHubToken.Value()
	return c.ask(visKey{v.UserID, repoID}, func() (bool, error) {
		return c.gh.CanReadID(ctx, tok, repoID)
	})
}

// ask answers k from the cache or from q, keeping q's answer (not its
// errors) for VisibilityTTL.
func (c *visibility) ask(k visKey, q func() (bool, error)) (bool, error) {
	now := c.now()
	c.mu.Lock()
	e, ok := c.entries[k]
	c.mu.Unlock()
	if ok && now.Before(e.expires) {
		return e.yes, nil
	}
	yes, err := q()
	if err != nil {
		return false, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) >= visibilityEntries {
		c.evictLocked(now)
	}
	c.entries[k] = visEntry{yes: yes, expires: now.Add(VisibilityTTL)}
	return yes, nil
}

// evictLocked drops expired entries and, if the cache is still full, a
// tenth of it (Go's map order: arbitrary entries).
func (c *visibility) evictLocked(now time.Time) {
	for k, e := range c.entries {
		if !now.Before(e.expires) {
			delete(c.entries, k)
		}
	}
	for k := range c.entries {
		if len(c.entries) < visibilityEntries*9/10 {
			break
		}
		delete(c.entries, k)
	}
}

// visibleRepos returns which of the repositories of ids repos v may see,
// asking about at most visibilityParallel at once. A repository GitHub
// could not be asked about is left out (its error is returned with the
// answer).
func (c *visibility) visibleRepos(ctx context.Context, v access.Viewer, repos []int64) (map[int64]bool, error) {
	out := make(map[int64]bool, len(repos))
	var (
		mu       sync.Mutex
		wg       sync.WaitGroup
		firstErr error
	)
	sem := make(chan struct{}, visibilityParallel)
	for _, repo := range repos {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			yes, err := c.canSee(ctx, v, repo)
			mu.Lock()
			defer mu.Unlock()
			out[repo] = yes
			if err != nil && firstErr == nil {
				firstErr = err
			}
		})
	}
	wg.Wait()
	return out, firstErr
}
