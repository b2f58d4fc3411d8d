package githubtest

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	udiff "github.com/aymanbagabas/go-udiff"

	"github.com/mergeguard/mergeguard/review/diff"
)

const docCompare = "https://docs.github.com/rest/commits/commits#compare-two-commits"

// The fake's commit history: every commit the fake makes has its parents
// (repo.parents), so that compare can tell ahead, behind, diverged and
// identical the way git does, from the merge base. AddPR chains the pull
// request's commits on its base; Push, ForcePush and MoveBase change a pull
// request as pushes to its branches do.

// ancestors returns sha and every commit reachable from it. s.mu must be
// held.
func (rp *repo) ancestors(sha string) map[string]bool {
	seen := map[string]bool{}
	queue := []string{sha}
	for len(queue) > 0 {
		c := queue[0]
		queue = queue[1:]
		if seen[c] {
			continue
		}
		seen[c] = true
		queue = append(queue, rp.parents[c]...)
	}
	return seen
}

// mergeBase returns the best common ancestor of a and b, "" when their
// histories are unrelated. s.mu must be held.
func (rp *repo) mergeBase(a, b string) string {
	ofA, ofB := rp.ancestors(a), rp.ancestors(b)
	var common []string
	for c := range ofA {
		if ofB[c] {
			common = append(common, c)
		}
	}
	slices.Sort(common) // deterministic
	for _, c := range common {
		best := true
		for _, d := range common {
			if d != c && rp.ancestors(d)[c] {
				best = false // c is an ancestor of another common commit
				break
			}
		}
		if best {
			return c
		}
	}
	return ""
}

// files returns the contents of a commit's files, nil when the fake has
// no tree for it. s.mu must be held.
func (rp *repo) files(sha string) map[string]string {
	tree, ok := rp.commits[sha]
	if !ok {
		return nil
	}
	out := make(map[string]string, len(tree))
	for p, blob := range tree {
		out[p] = rp.blobs[blob]
	}
	return out
}

// newCommitLocked stores a commit with its files and parents and returns
// its sha, derived from all three and the message.
func (rp *repo) newCommitLocked(files map[string]string, message string, parents ...string) string {
	parts := append([]string{"commit", message}, parents...)
	for _, p := range slices.Sorted(maps.Keys(files)) {
		parts = append(parts, p, files[p])
	}
	sha := rp.addCommitLocked(hashOf(parts...), files)
	rp.parents[sha] = parents
	return sha
}

// GitDiff renders the git-style unified diff ("diff --git" sections, three
// lines of context) that turns the files old into the files cur, as GitHub
// serves diffs: paths in order, added and deleted files with /dev/null.
func GitDiff(old, cur map[string]string) string {
	paths := slices.Sorted(maps.Keys(maps.Collect(func(yield func(string, bool) bool) {
		for p := range old {
			yield(p, true)
		}
		for p := range cur {
			yield(p, true)
		}
	})))
	var b strings.Builder
	for _, p := range paths {
		a, inOld := old[p]
		c, inCur := cur[p]
		if inOld && inCur && a == c {
			continue
		}
		fmt.Fprintf(&b, "diff --git a/%s b/%s\n", p, p)
		from, to := "a/"+p, "b/"+p
		switch {
		case !inOld:
			fmt.Fprintf(&b, "new file mode 100644\nindex 0000000..%s\n", BlobSHA(c)[:7])
			from = "/dev/null"
		case !inCur:
			fmt.Fprintf(&b, "deleted file mode 100644\nindex %s..0000000\n", BlobSHA(a)[:7])
			to = "/dev/null"
		default:
			fmt.Fprintf(&b, "index %s..%s 100644\n", BlobSHA(a)[:7], BlobSHA(c)[:7])
		}
		unified := udiff.Unified("a", "b", a, c)
		_, hunks, _ := strings.Cut(unified, "\n+++ b\n")
		fmt.Fprintf(&b, "--- %s\n+++ %s\n%s", from, to, hunks)
	}
	return b.String()
}

// prDiffLocked recomputes a pull request's diff from the merge base of its
// base and head to its head, as GitHub does after a push. s.mu must be held.
func (rp *repo) prDiffLocked(p *pull) (string, error) {
	mb := rp.mergeBase(p.pr.BaseSHA, p.pr.HeadSHA)
	old, cur := rp.files(mb), rp.files(p.pr.HeadSHA)
	if old == nil || cur == nil {
		return "", fmt.Errorf("no files for the merge base %s or the head %s", mb, p.pr.HeadSHA)
	}
	return GitDiff(old, cur), nil
}

// setDiff replaces a pull request's diff and the files list cut from it.
func (p *pull) setDiff(text string) error {
	parsed, err := diff.ParseString(text)
	if err != nil {
		return err
	}
	sections := splitSections(text)
	if len(sections) != len(parsed.Files) {
		return fmt.Errorf("%d diff --git sections for %d files (use git-style diffs)", len(sections), len(parsed.Files))
	}
	missing := make(map[string]bool)
	for _, m := range p.pr.MissingPatches {
		missing[m] = true
	}
	p.pr.Diff, p.parsed, p.files, p.diffLines = text, parsed, nil, 0
	for i, f := range parsed.Files {
		e := fileEntry{path: f.Path(), status: fileStatus(f), additions: f.Additions, deletions: f.Deletions}
		if f.Status == diff.Renamed || f.Status == diff.Copied {
			e.previous = f.OldPath
		}
		switch content, ok := p.pr.Head[e.path]; {
		case ok:
			e.sha = BlobSHA(content)
		case f.Status == diff.Deleted:
			e.sha = BlobSHA(p.pr.Base[e.path])
		default:
			e.sha = hashOf("blob", e.path)
		}
		if patch, ok := patchOf(sections[i]); ok && !f.Binary && !missing[e.path] {
			e.patch, e.hasPatch = patch, true
			p.diffLines += strings.Count(patch, "\n") + 1
		}
		p.files = append(p.files, e)
	}
	return nil
}

// change applies a change of a pull request under s.mu and recomputes its
// diff; a failure fails the test.
func (s *Server) change(owner, repoName string, number int, what string, apply func(rp *repo, p *pull) string) string {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	rp := s.lookup(owner, repoName)
	if rp == nil || rp.pulls[number] == nil {
		s.t.Fatalf("githubtest: %s: no pull request %s/%s#%d", what, owner, repoName, number)
		return ""
	}
	p := rp.pulls[number]
	sha := apply(rp, p)
	text, err := rp.prDiffLocked(p)
	if err == nil {
		err = p.setDiff(text)
	}
	if err != nil {
		s.t.Fatalf("githubtest: %s %s/%s#%d: %v", what, owner, repoName, number, err)
	}
	return sha
}

// Push adds a commit on top of a pull request's head, as a push to its
// branch does, and returns the new head. files are all the files of the
// new head. The pull request's diff and files list are recomputed from the
// files (merge base...head), so a test that pushes gives whole files.
func (s *Server) Push(owner, repoName string, number int, files map[string]string, message string) string {
	s.t.Helper()
	return s.change(owner, repoName, number, "Push", func(rp *repo, p *pull) string {
		sha := rp.newCommitLocked(files, message, p.pr.HeadSHA)
		p.pr.HeadSHA, p.pr.Head = sha, maps.Clone(files)
		p.pr.Commits = append(p.pr.Commits, Commit{SHA: sha, Message: message, Author: p.pr.User.Login, Date: pushDate(len(p.pr.Commits))})
		return sha
	})
}

// ForcePush replaces a pull request's commits with one commit on its
// base, as a rebase and force-push do, and returns the new head: the old
// head is no longer its ancestor (compare says diverged).
func (s *Server) ForcePush(owner, repoName string, number int, files map[string]string, message string) string {
	s.t.Helper()
	return s.change(owner, repoName, number, "ForcePush", func(rp *repo, p *pull) string {
		sha := rp.newCommitLocked(files, message, p.pr.BaseSHA)
		p.pr.HeadSHA, p.pr.Head = sha, maps.Clone(files)
		p.pr.Commits = []Commit{{SHA: sha, Message: message, Author: p.pr.User.Login, Date: pushDate(len(p.pr.Commits))}}
		return sha
	})
}

// MoveBase adds a commit with files on top of a pull request's base
// branch (someone merged into it) and returns the new base: the pull
// request's base sha moves, its diff stays from the merge base.
func (s *Server) MoveBase(owner, repoName string, number int, files map[string]string, message string) string {
	s.t.Helper()
	return s.change(owner, repoName, number, "MoveBase", func(rp *repo, p *pull) string {
		sha := rp.newCommitLocked(files, message, p.pr.BaseSHA)
		p.pr.BaseSHA = sha
		return sha
	})
}

func pushDate(n int) time.Time { return time.Date(2024, 3, 2, 12, n, 0, 0, time.UTC) }

// compare answers repos/compare-commits: the status, ahead_by and
// behind_by of head against base from their merge base, the commits of
// head not in base (paginated with per_page and page; the files only on
// the first page), the files changed from the merge base to head, and
// with the diff media type the diff itself (406 above GitHub's limits, as
// for a pull request). Unknown commits and unrelated histories are 404.
func (s *Server) compare(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp, ok := s.requestRepo(w, r, docCompare)
	if !ok {
		return
	}
	baseRef, headRef, ok := strings.Cut(r.PathValue("basehead"), "...")
	base, okBase := rp.resolve(baseRef)
	head, okHead := rp.resolve(headRef)
	if !ok || !okBase || !okHead {
		writeNotFound(w, docCompare)
		return
	}
	mb := rp.mergeBase(base, head)
	if mb == "" {
		writeJSON(w, http.StatusNotFound, map[string]any{"message": fmt.Sprintf("No common ancestor between %s and %s.", baseRef, headRef), "documentation_url": docCompare, "status": "404"})
		return
	}
	old, cur := rp.files(mb), rp.files(head)
	if old == nil || cur == nil {
		s.t.Errorf("githubtest: compare %s...%s: the fake has no files for %s or %s", baseRef, headRef, mb, head)
		writeJSON(w, http.StatusInternalServerError, map[string]any{"message": "Server Error"})
		return
	}
	text := GitDiff(old, cur)
	parsed, err := diff.ParseString(text)
	if err != nil {
		s.t.Errorf("githubtest: compare %s...%s: %v", baseRef, headRef, err)
		writeJSON(w, http.StatusInternalServerError, map[string]any{"message": "Server Error"})
		return
	}
	if accept := r.Header.Get("Accept"); strings.Contains(accept, ".diff") || strings.Contains(accept, ".patch") {
		lines := strings.Count(text, "\n")
		if len(parsed.Files) > MaxDiffFiles || lines > MaxDiffLines {
			writeJSON(w, http.StatusNotAcceptable, map[string]any{
				"message": "Sorry, this diff is taking too long to generate.", "documentation_url": docCompare, "status": "406",
				"errors": []any{map[string]any{"resource": "Comparison", "field": "diff", "code": "too_large"}},
			})
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte(text))
		return
	}
	writeJSON(w, http.StatusOK, s.comparisonJSON(w, r, rp, compared{base: base, head: head, mergeBase: mb, old: old, cur: cur, diff: text}))
}

// compared is what compare computed.
type compared struct {
	base, head, mergeBase string
	old, cur              map[string]string // files of the merge base and the head
	diff                  string
}

// comparisonJSON renders a comparison from the example commit-comparison.
func (s *Server) comparisonJSON(w http.ResponseWriter, r *http.Request, rp *repo, c compared) map[string]any {
	base, head := c.base, c.head
	ofBase, ofHead := rp.ancestors(base), rp.ancestors(head)
	ahead := rp.chronological(head, func(sha string) bool { return !ofBase[sha] })
	behind := 0
	for c := range ofBase {
		if !ofHead[c] {
			behind++
		}
	}
	status := "diverged"
	switch {
	case base == head:
		status = "identical"
	case behind == 0:
		status = "ahead"
	case len(ahead) == 0:
		status = "behind"
	}
	m := s.example("commit-comparison.json")
	m["status"], m["ahead_by"], m["behind_by"], m["total_commits"] = status, len(ahead), behind, len(ahead)
	m["base_commit"] = s.commitJSON(rp, base)
	m["merge_base_commit"] = s.commitJSON(rp, c.mergeBase)
	basehead := r.PathValue("basehead")
	m["url"] = fmt.Sprintf("%srepos/%s/%s/compare/%s", s.URL(), rp.owner, rp.name, basehead)
	m["html_url"] = fmt.Sprintf("https://github.com/%s/%s/compare/%s", rp.owner, rp.name, basehead)
	m["permalink_url"], m["diff_url"], m["patch_url"] = m["html_url"], m["html_url"].(string)+".diff", m["html_url"].(string)+".patch"
	commits := jsonOf(ahead, func(sha string) map[string]any { return s.commitJSON(rp, sha) })
	if q := r.URL.Query(); q.Has("per_page") || q.Has("page") {
		start, end := pageBounds(w, r, len(commits))
		commits = commits[start:end]
		if start > 0 {
			m["commits"], m["files"] = commits, []any{}
			return m
		}
	}
	m["commits"] = commits
	p := &pull{pr: PR{Base: c.old, Head: c.cur}}
	if err := p.setDiff(c.diff); err != nil {
		s.t.Errorf("githubtest: compare: %v", err)
	}
	m["files"] = jsonOf(p.files[:min(len(p.files), MaxDiffFiles)], func(f fileEntry) map[string]any { return s.fileJSON(rp, head, f) })
	return m
}

// chronological lists the commits reachable from sha that keep holds,
// parents before children.
func (rp *repo) chronological(sha string, keep func(string) bool) []string {
	var out []string
	seen := map[string]bool{}
	var visit func(c string)
	visit = func(c string) {
		if seen[c] || !keep(c) {
			return
		}
		seen[c] = true
		for _, parent := range rp.parents[c] {
			visit(parent)
		}
		out = append(out, c)
	}
	visit(sha)
	return out
}

// commitJSON renders a commit as the commits API does.
func (s *Server) commitJSON(rp *repo, sha string) map[string]any {
	c := rp.commitInfo(sha)
	person := map[string]any{"name": c.Author, "email": c.Author + "@users.noreply.github.com", "date": c.Date.Format(time.RFC3339)}
	parents := []any{}
	for _, p := range rp.parents[sha] {
		parents = append(parents, map[string]any{"sha": p, "url": fmt.Sprintf("%srepos/%s/%s/commits/%s", s.URL(), rp.owner, rp.name, p)})
	}
	return map[string]any{
		"sha":      sha,
		"url":      fmt.Sprintf("%srepos/%s/%s/commits/%s", s.URL(), rp.owner, rp.name, sha),
		"html_url": fmt.Sprintf("https://github.com/%s/%s/commit/%s", rp.owner, rp.name, sha),
		"commit": map[string]any{
			"author": person, "committer": person, "message": c.Message,
			"tree": map[string]any{"sha": treeSHA(sha, "")},
		},
		"author":    s.userJSON(User{Login: c.Author, ID: 1}),
		"committer": s.userJSON(User{Login: c.Author, ID: 1}),
		"parents":   parents,
	}
}
