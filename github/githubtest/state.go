package githubtest

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/mergeguard/mergeguard/review/diff"
)

// Limits GitHub applies and the fake copies.
const (
	// MaxListedFiles is how many files pulls/list-files returns at most.
	MaxListedFiles = 3000
	// MaxDiffFiles and MaxDiffLines bound the raw diff GitHub returns;
	// beyond them it answers 406 too_large.
	MaxDiffFiles = 300
	MaxDiffLines = 20000
	// MaxBodyLength is the longest review, comment or issue comment body.
	MaxBodyLength = 65536
)

// User is a GitHub account.
type User struct {
	Login string
	ID    int64
	// Type is "User" (the default) or "Bot".
	Type string
}

// Commit is one commit of a pull request.
type Commit struct {
	SHA     string
	Message string
	Author  string
	Date    time.Time
}

// PR describes a pull request for AddPR. Zero fields get defaults.
type PR struct {
	Owner, Repo string
	Number      int
	Title, Body string
	User        User // default octocat, a User
	Draft       bool
	State       string // default "open"
	Labels      []string
	BaseRef     string // default "main"
	HeadRef     string // default "feature"
	// Base and Head are the repository's files (path → content) at the
	// base and head commits; they back trees, blobs, contents, tarballs
	// and blame.
	Base, Head map[string]string
	// BaseSHA and HeadSHA default to hashes of the file sets.
	BaseSHA, HeadSHA string
	// Diff is the pull request's git-style unified diff (base...head). The
	// files list and each file's patch are cut from it, as GitHub does.
	Diff string
	// MissingPatches lists files whose patch the files list leaves out, as
	// GitHub does for large files.
	MissingPatches []string
	// DiffTooLarge makes the raw diff answer 406 too_large, as GitHub does
	// above MaxDiffFiles files or MaxDiffLines lines (also applied).
	DiffTooLarge bool
	// Commits default to one commit, the head.
	Commits []Commit
}

// Review is a pull-request review as the fake holds it.
type Review struct {
	ID       int64
	User     User
	Body     string
	State    string // PENDING, COMMENTED, APPROVED, CHANGES_REQUESTED, DISMISSED
	CommitID string
	Comments []ReviewComment
}

// ReviewComment is an inline review comment.
type ReviewComment struct {
	ID        int64
	ReviewID  int64
	User      User
	Path      string
	Body      string
	Line      int
	Side      string
	StartLine int
	StartSide string
	CommitID  string
	// InReplyTo is the first comment of the thread a reply joins; 0 for
	// a comment that starts a thread.
	InReplyTo int64
}

// IssueComment is a comment on a pull request's conversation.
type IssueComment struct {
	ID   int64
	User User
	Body string
}

// Reaction is a reaction to an issue comment.
type Reaction struct {
	ID        int64
	CommentID int64
	User      User
	Content   string
}

// BlameRange attributes lines StartingLine..EndingLine of a file to a commit.
type BlameRange struct {
	StartingLine, EndingLine int
	Commit                   Commit
}

type repo struct {
	owner, name   string
	id            int64
	commits       map[string]map[string]string // commit sha → path → blob sha
	parents       map[string][]string          // commit sha → its parents (history.go)
	treeDirs      map[string]treeDir           // tree sha → commit and directory
	blobs         map[string]string            // blob sha → content
	pulls         map[int]*pull
	roles         map[string]string // lower(login) → role
	issueComments map[int][]*IssueComment
	reactions     []*Reaction
	// reviewReactions are the reactions of review comments.
	reviewReactions []*Reaction
	blame           map[string][]BlameRange // sha + "\x00" + path
	checkRuns       []*CheckRun
}

type treeDir struct {
	commit, dir string
}

type pull struct {
	pr        PR
	id        int64
	files     []fileEntry
	diffLines int
	reviews   []*Review
	comments  []*ReviewComment // of submitted reviews and seeded ones
	threads   []*thread        // started by the comments (threads.go)
	parsed    *diff.Diff
}

type fileEntry struct {
	path, previous, status string
	sha                    string
	additions, deletions   int
	patch                  string
	hasPatch               bool
}

func repoKey(owner, name string) string { return strings.ToLower(owner + "/" + name) }

// repoLocked returns the repository, creating it. s.mu must be held.
func (s *Server) repoLocked(owner, name string) *repo {
	k := repoKey(owner, name)
	r, ok := s.repos[k]
	if !ok {
		r = &repo{
			owner: owner, name: name, id: s.id(),
			commits:       make(map[string]map[string]string),
			parents:       make(map[string][]string),
			treeDirs:      make(map[string]treeDir),
			blobs:         make(map[string]string),
			pulls:         make(map[int]*pull),
			roles:         make(map[string]string),
			issueComments: make(map[int][]*IssueComment),
			blame:         make(map[string][]BlameRange),
		}
		s.repos[k] = r
	}
	return r
}

// lookup returns an existing repository, or nil.
func (s *Server) lookup(owner, name string) *repo {
	return s.repos[repoKey(owner, name)]
}

// BlobSHA returns git's blob id of content, as GitHub reports it.
func BlobSHA(content string) string {
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(content))
	h.Write([]byte(content))
	return hex.EncodeToString(h.Sum(nil))
}

func hashOf(parts ...string) string {
	h := sha1.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// addCommitLocked stores a commit's files and returns its sha.
func (r *repo) addCommitLocked(sha string, files map[string]string) string {
	if sha == "" {
		parts := []string{"commit"}
		for _, p := range slices.Sorted(maps.Keys(files)) {
			parts = append(parts, p, files[p])
		}
		sha = hashOf(parts...)
	}
	tree := make(map[string]string, len(files))
	for p, content := range files {
		b := BlobSHA(content)
		r.blobs[b] = content
		tree[p] = b
	}
	r.commits[sha] = tree
	for _, dir := range dirsOf(tree) {
		r.treeDirs[treeSHA(sha, dir)] = treeDir{commit: sha, dir: dir}
	}
	return sha
}

func treeSHA(commit, dir string) string { return hashOf("tree", commit, dir) }

// dirsOf returns every directory of the paths, "" (the root) included.
func dirsOf(tree map[string]string) []string {
	set := map[string]bool{"": true}
	for p := range tree {
		for i := strings.LastIndex(p, "/"); i > 0; i = strings.LastIndex(p[:i], "/") {
			set[p[:i]] = true
		}
	}
	return slices.Sorted(maps.Keys(set))
}

// AddPR adds a pull request (and its repository, base and head commits)
// and returns it with its defaults filled in. The diff must be git style
// ("diff --git" headers); a diff that does not parse fails the test.
func (s *Server) AddPR(pr PR) PR {
	s.t.Helper()
	if pr.User.Login == "" {
		pr.User = User{Login: "octocat", ID: 1, Type: "User"}
	}
	if pr.User.Type == "" {
		pr.User.Type = "User"
	}
	if pr.State == "" {
		pr.State = "open"
	}
	if pr.Title == "" {
		pr.Title = fmt.Sprintf("Pull request #%d", pr.Number)
	}
	if pr.BaseRef == "" {
		pr.BaseRef = "main"
	}
	if pr.HeadRef == "" {
		pr.HeadRef = "feature"
	}
	p := &pull{pr: pr}
	if err := p.setDiff(pr.Diff); err != nil {
		s.t.Fatalf("githubtest: AddPR %s/%s#%d: %v", pr.Owner, pr.Repo, pr.Number, err)
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repoLocked(pr.Owner, pr.Repo)
	pr.BaseSHA = r.addCommitLocked(pr.BaseSHA, pr.Base)
	if pr.HeadSHA == "" && maps.Equal(pr.Base, pr.Head) {
		pr.HeadSHA = hashOf("head", pr.BaseSHA)
	}
	pr.HeadSHA = r.addCommitLocked(pr.HeadSHA, pr.Head)
	if len(pr.Commits) == 0 {
		pr.Commits = []Commit{{Message: pr.Title, Author: pr.User.Login}}
	}
	for i := range pr.Commits {
		c := &pr.Commits[i]
		switch {
		case c.SHA != "":
		case i == len(pr.Commits)-1:
			c.SHA = pr.HeadSHA
		default:
			c.SHA = hashOf("commit", pr.HeadSHA, fmt.Sprint(i), c.Message)
		}
		if c.Date.IsZero() {
			c.Date = time.Date(2024, 3, 1, 12, i, 0, 0, time.UTC)
		}
		if c.Author == "" {
			c.Author = pr.User.Login
		}
	}

	// The history: the base, then each commit on the one before.
	parent := pr.BaseSHA
	for _, c := range pr.Commits {
		if _, known := r.parents[c.SHA]; !known && c.SHA != parent {
			r.parents[c.SHA] = []string{parent}
		}
		parent = c.SHA
	}
	if _, known := r.parents[pr.HeadSHA]; !known && pr.HeadSHA != parent {
		r.parents[pr.HeadSHA] = []string{parent}
	}
	p.pr, p.id = pr, s.id()
	r.pulls[pr.Number] = p
	return pr
}

func fileStatus(f *diff.File) string {
	switch f.Status {
	case diff.Added:
		return "added"
	case diff.Deleted:
		return "removed"
	case diff.Renamed:
		return "renamed"
	case diff.Copied:
		return "copied"
	}
	if len(f.Hunks) == 0 && !f.Binary {
		return "changed" // a mode change
	}
	return "modified"
}

// splitSections cuts a git diff at its "diff --git" lines.
func splitSections(d string) []string {
	var out []string
	start := -1
	for i := 0; i < len(d); {
		end := strings.IndexByte(d[i:], '\n')
		next := len(d)
		if end >= 0 {
			next = i + end + 1
		}
		if strings.HasPrefix(d[i:], "diff --git ") {
			if start >= 0 {
				out = append(out, d[start:i])
			}
			start = i
		}
		i = next
	}
	if start >= 0 {
		out = append(out, d[start:])
	}
	return out
}

// patchOf returns a section's hunks, the files[].patch GitHub returns: from
// the first "@@" line, without the final newline.
func patchOf(section string) (string, bool) {
	i := strings.Index(section, "\n@@ ")
	if i < 0 {
		return "", false
	}
	return strings.TrimSuffix(section[i+1:], "\n"), true
}

// SetHeadSHA moves a pull request's head to sha, as a push does; it keeps
// the files of the old head.
func (s *Server) SetHeadSHA(owner, repoName string, number int, sha string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.lookup(owner, repoName)
	if r == nil || r.pulls[number] == nil {
		s.t.Errorf("githubtest: SetHeadSHA: no pull request %s/%s#%d", owner, repoName, number)
		return
	}
	p := r.pulls[number]
	r.commits[sha] = r.commits[p.pr.HeadSHA]
	r.parents[sha] = []string{p.pr.HeadSHA}
	p.pr.HeadSHA = sha
	p.pr.Commits = append(p.pr.Commits, Commit{SHA: sha, Message: "push", Author: p.pr.User.Login, Date: time.Date(2024, 3, 2, 0, 0, 0, 0, time.UTC)})
}

// SetPermission gives login a role on the repository: admin, maintain,
// write, triage, read or none. Users without a role are unknown (404).
func (s *Server) SetPermission(owner, repoName, login, role string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.repoLocked(owner, repoName).roles[strings.ToLower(login)] = role
}

// SetBlame sets the blame of path at commit sha. Without it, blame
// attributes every line of the file to sha.
func (s *Server) SetBlame(owner, repoName, sha, path string, ranges []BlameRange) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.repoLocked(owner, repoName).blame[sha+"\x00"+path] = ranges
}

// AddReview stores a review (with its comments) as if posted earlier and
// returns its id. Comments of a review that is not PENDING are listed.
func (s *Server) AddReview(owner, repoName string, number int, rv Review) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.pullLocked(owner, repoName, number)
	if p == nil {
		return 0
	}
	rv.ID = s.id()
	if rv.User.Login == "" {
		rv.User = s.bot
	}
	if rv.CommitID == "" {
		rv.CommitID = p.pr.HeadSHA
	}
	for i := range rv.Comments {
		c := &rv.Comments[i]
		c.ID, c.ReviewID = s.id(), rv.ID
		if c.User.Login == "" {
			c.User = rv.User
		}
		if c.CommitID == "" {
			c.CommitID = rv.CommitID
		}
	}
	if rv.State != "PENDING" {
		s.submitLocked(p, &rv)
	}
	p.reviews = append(p.reviews, &rv)
	return rv.ID
}

// AddIssueComment stores a comment on the pull request's conversation and
// returns its id.
func (s *Server) AddIssueComment(owner, repoName string, number int, c IssueComment) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repoLocked(owner, repoName)
	c.ID = s.id()
	r.issueComments[number] = append(r.issueComments[number], &c)
	return c.ID
}

func (s *Server) pullLocked(owner, repoName string, number int) *pull {
	r := s.lookup(owner, repoName)
	if r == nil || r.pulls[number] == nil {
		s.t.Errorf("githubtest: no pull request %s/%s#%d", owner, repoName, number)
		return nil
	}
	return r.pulls[number]
}

// Reviews returns the reviews of a pull request, oldest first, pending and
// dismissed ones included.
func (s *Server) Reviews(owner, repoName string, number int) []Review {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.pullLocked(owner, repoName, number)
	if p == nil {
		return nil
	}
	out := make([]Review, 0, len(p.reviews))
	for _, rv := range p.reviews {
		c := *rv
		c.Comments = slices.Clone(rv.Comments)
		out = append(out, c)
	}
	return out
}

// ReviewComments returns the listed review comments of a pull request.
func (s *Server) ReviewComments(owner, repoName string, number int) []ReviewComment {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.pullLocked(owner, repoName, number)
	if p == nil {
		return nil
	}
	out := make([]ReviewComment, 0, len(p.comments))
	for _, c := range p.comments {
		out = append(out, *c)
	}
	return out
}

// IssueComments returns the conversation comments of a pull request.
func (s *Server) IssueComments(owner, repoName string, number int) []IssueComment {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.lookup(owner, repoName)
	if r == nil {
		return nil
	}
	var out []IssueComment
	for _, c := range r.issueComments[number] {
		out = append(out, *c)
	}
	return out
}

// Reactions returns the reactions made in the repository.
func (s *Server) Reactions(owner, repoName string) []Reaction {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.lookup(owner, repoName)
	if r == nil {
		return nil
	}
	var out []Reaction
	for _, x := range r.reactions {
		out = append(out, *x)
	}
	return out
}
