package githubtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/mergeguard/mergeguard/review/diff"
)

const (
	docPulls         = "https://docs.github.com/rest/pulls/pulls#get-a-pull-request"
	docListFiles     = "https://docs.github.com/rest/pulls/pulls#list-pull-requests-files"
	docCreateReview  = "https://docs.github.com/rest/pulls/reviews#create-a-review-for-a-pull-request"
	docDismissReview = "https://docs.github.com/rest/pulls/reviews#dismiss-a-review-for-a-pull-request"
	docDeleteReview  = "https://docs.github.com/rest/pulls/reviews#delete-a-pending-review-for-a-pull-request"
)

// Review-thread errors, in GitHub's current wording (REVIEW_RULES.md §2).
const (
	errLineNotInDiff = "Pull request review thread line must be part of the diff and Pull request review thread diff hunk can't be blank"
	errStartAfterEnd = "Pull request review thread start line must precede the end line."
	errOtherHunk     = "Pull request review thread start line must be part of the same hunk as the line."
	errPathInvalid   = "Pull request review thread path is invalid and Pull request review thread diff hunk can't be blank"
	errOnePending    = "User can only have one pending review per pull request"
	errBodyTooLong   = "Body is too long (maximum is 65536 characters)"
)

// requestPull finds the pull request of a request, answering 404 if none.
// s.mu must be held.
func (s *Server) requestPull(w http.ResponseWriter, r *http.Request) (*repo, *pull, bool) {
	rp, ok := s.requestRepo(w, r, docPulls)
	if !ok {
		return nil, nil, false
	}
	n, err := strconv.Atoi(r.PathValue("pull_number"))
	if err != nil || rp.pulls[n] == nil {
		writeNotFound(w, docPulls)
		return nil, nil, false
	}
	return rp, rp.pulls[n], true
}

// requestRepo returns the repository the request's path names, or answers
// 404 (pointing at doc) when the fake has none. s.mu must be held.
func (s *Server) requestRepo(w http.ResponseWriter, r *http.Request, doc string) (*repo, bool) {
	rp := s.lookup(r.PathValue("owner"), r.PathValue("repo"))
	if rp == nil {
		writeNotFound(w, doc)
		return nil, false
	}
	return rp, true
}

func (s *Server) pull(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp, p, ok := s.requestPull(w, r)
	if !ok {
		return
	}
	accept := r.Header.Get("Accept")
	if strings.Contains(accept, ".diff") || strings.Contains(accept, ".patch") {
		s.rawDiff(w, p)
		return
	}
	writeJSON(w, http.StatusOK, s.pullJSON(rp, p))
}

// rawDiff answers application/vnd.github.diff, or 406 when GitHub would
// refuse the diff as too large.
func (s *Server) rawDiff(w http.ResponseWriter, p *pull) {
	var msg string
	switch {
	case len(p.files) > MaxDiffFiles:
		msg = fmt.Sprintf("Sorry, the diff exceeded the maximum number of files (%d). Consider using 'List pull requests files' API or locally cloning the repository instead.", MaxDiffFiles)
	case p.diffLines > MaxDiffLines || p.pr.DiffTooLarge:
		msg = fmt.Sprintf("Sorry, the diff exceeded the maximum number of lines (%d). Consider using 'List pull requests files' API or locally cloning the repository instead.", MaxDiffLines)
	}
	if msg != "" {
		writeJSON(w, http.StatusNotAcceptable, map[string]any{
			"message":           msg,
			"errors":            []any{map[string]any{"resource": "PullRequest", "field": "diff", "code": "too_large"}},
			"documentation_url": docListFiles,
			"status":            "406",
		})
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write([]byte(p.pr.Diff))
}

func (s *Server) userJSON(u User) map[string]any {
	m := copyJSON(s.examples["pull-request.json"]["user"].(map[string]any))
	typ := u.Type
	if typ == "" {
		typ = "User"
	}
	m["login"], m["id"], m["type"] = u.Login, u.ID, typ
	m["url"] = s.URL() + "users/" + u.Login
	m["html_url"] = "https://github.com/" + u.Login
	return m
}

func (s *Server) repoJSON(rp *repo) map[string]any {
	return map[string]any{
		"id":        rp.id,
		"name":      rp.name,
		"full_name": rp.owner + "/" + rp.name,
		"owner":     s.userJSON(User{Login: rp.owner, ID: rp.id + 1, Type: "Organization"}),
		"private":   false,
		"html_url":  "https://github.com/" + rp.owner + "/" + rp.name,
		"url":       s.URL() + "repos/" + rp.owner + "/" + rp.name,
	}
}

func (s *Server) pullJSON(rp *repo, p *pull) map[string]any {
	pr := p.pr
	m := s.example("pull-request.json")
	m["id"], m["number"], m["state"], m["title"], m["draft"] = p.id, pr.Number, pr.State, pr.Title, pr.Draft
	m["body"] = nilIfEmpty(pr.Body)
	m["url"] = fmt.Sprintf("%srepos/%s/%s/pulls/%d", s.URL(), rp.owner, rp.name, pr.Number)
	m["html_url"] = fmt.Sprintf("https://github.com/%s/%s/pull/%d", rp.owner, rp.name, pr.Number)
	m["user"] = s.userJSON(pr.User)
	labels := make([]any, 0, len(pr.Labels))
	for i, l := range pr.Labels {
		labels = append(labels, map[string]any{"id": i + 1, "name": l, "color": "ededed", "default": false})
	}
	m["labels"] = labels
	for _, side := range []struct{ key, ref, sha string }{{"head", pr.HeadRef, pr.HeadSHA}, {"base", pr.BaseRef, pr.BaseSHA}} {
		b := m[side.key].(map[string]any)
		b["ref"], b["sha"], b["label"] = side.ref, side.sha, rp.owner+":"+side.ref
		b["repo"] = s.repoJSON(rp)
		b["user"] = s.userJSON(User{Login: rp.owner, ID: rp.id + 1, Type: "Organization"})
	}
	adds, dels := 0, 0
	for _, f := range p.files {
		adds += f.additions
		dels += f.deletions
	}
	m["commits"], m["additions"], m["deletions"], m["changed_files"] = len(pr.Commits), adds, dels, len(p.files)
	m["merged"], m["merged_at"], m["merged_by"] = false, nil, nil
	return m
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func (s *Server) pullFiles(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp, p, ok := s.requestPull(w, r)
	if !ok {
		return
	}
	files := p.files[:min(len(p.files), MaxListedFiles)]
	paginate(w, r, jsonOf(files, func(f fileEntry) map[string]any { return s.fileJSON(rp, p.pr.HeadSHA, f) }))
}

// fileJSON renders one changed file as pulls/list-files and compare do.
func (s *Server) fileJSON(rp *repo, headSHA string, f fileEntry) map[string]any {
	m := s.example("diff-entry-items.json")
	m["sha"], m["filename"], m["status"] = f.sha, f.path, f.status
	m["additions"], m["deletions"], m["changes"] = f.additions, f.deletions, f.additions+f.deletions
	m["blob_url"] = fmt.Sprintf("https://github.com/%s/%s/blob/%s/%s", rp.owner, rp.name, headSHA, f.path)
	m["raw_url"] = fmt.Sprintf("https://github.com/%s/%s/raw/%s/%s", rp.owner, rp.name, headSHA, f.path)
	m["contents_url"] = fmt.Sprintf("%srepos/%s/%s/contents/%s?ref=%s", s.URL(), rp.owner, rp.name, f.path, headSHA)
	delete(m, "patch")
	if f.hasPatch {
		m["patch"] = f.patch
	}
	if f.previous != "" {
		m["previous_filename"] = f.previous
	}
	return m
}

// maxListedCommits is how many commits pulls/list-commits returns at most.
const maxListedCommits = 250

func (s *Server) pullCommits(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp, p, ok := s.requestPull(w, r)
	if !ok {
		return
	}
	commits := p.pr.Commits[:min(len(p.pr.Commits), maxListedCommits)]
	out := make([]map[string]any, 0, len(commits))
	parent := p.pr.BaseSHA
	for _, c := range commits {
		person := map[string]any{"name": c.Author, "email": c.Author + "@users.noreply.github.com", "date": c.Date.Format(time.RFC3339)}
		out = append(out, map[string]any{
			"sha":      c.SHA,
			"url":      fmt.Sprintf("%srepos/%s/%s/commits/%s", s.URL(), rp.owner, rp.name, c.SHA),
			"html_url": fmt.Sprintf("https://github.com/%s/%s/commit/%s", rp.owner, rp.name, c.SHA),
			"commit": map[string]any{
				"author":    person,
				"committer": person,
				"message":   c.Message,
				"tree":      map[string]any{"sha": treeSHA(c.SHA, "")},
			},
			"author":    s.userJSON(User{Login: c.Author, ID: 1}),
			"committer": s.userJSON(User{Login: c.Author, ID: 1}),
			"parents":   []any{map[string]any{"sha": parent}},
		})
		parent = c.SHA
	}
	paginate(w, r, out)
}

func (s *Server) reviewJSON(rp *repo, p *pull, rv *Review) map[string]any {
	m := s.example("pull-request-review.json")
	m["id"], m["user"], m["body"], m["state"], m["commit_id"] = rv.ID, s.userJSON(rv.User), rv.Body, rv.State, rv.CommitID
	m["html_url"] = fmt.Sprintf("https://github.com/%s/%s/pull/%d#pullrequestreview-%d", rp.owner, rp.name, p.pr.Number, rv.ID)
	m["pull_request_url"] = fmt.Sprintf("%srepos/%s/%s/pulls/%d", s.URL(), rp.owner, rp.name, p.pr.Number)
	if rv.State == "PENDING" {
		delete(m, "submitted_at")
	}
	return m
}

func (s *Server) reviewCommentJSON(rp *repo, p *pull, c *ReviewComment) map[string]any {
	m := s.example("pull-request-review-comment-items.json")
	m["id"], m["pull_request_review_id"], m["user"], m["body"], m["path"] = c.ID, c.ReviewID, s.userJSON(c.User), c.Body, c.Path
	m["commit_id"], m["original_commit_id"] = c.CommitID, c.CommitID
	m["line"], m["original_line"], m["side"] = c.Line, c.Line, c.Side
	m["position"], m["original_position"] = nil, nil
	m["start_line"], m["original_start_line"], m["start_side"] = nil, nil, nil
	if c.StartLine > 0 {
		m["start_line"], m["original_start_line"], m["start_side"] = c.StartLine, c.StartLine, c.StartSide
	}
	delete(m, "in_reply_to_id")
	if c.InReplyTo != 0 {
		m["in_reply_to_id"] = c.InReplyTo
	}
	m["node_id"] = nodeID("PRRC", c.ID)
	m["diff_hunk"] = diffHunk(p.parsed, c.Path, c.Side, c.Line)
	m["url"] = fmt.Sprintf("%srepos/%s/%s/pulls/comments/%d", s.URL(), rp.owner, rp.name, c.ID)
	m["html_url"] = fmt.Sprintf("https://github.com/%s/%s/pull/%d#discussion_r%d", rp.owner, rp.name, p.pr.Number, c.ID)
	return m
}

// servePullList answers a paginated list of a pull request. items returns
// the list, or false when it has answered the request itself (a 404).
func (s *Server) servePullList(w http.ResponseWriter, r *http.Request, items func(rp *repo, p *pull) ([]map[string]any, bool)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp, p, ok := s.requestPull(w, r)
	if !ok {
		return
	}
	if out, ok := items(rp, p); ok {
		paginate(w, r, out)
	}
}

func (s *Server) listReviews(w http.ResponseWriter, r *http.Request) {
	s.servePullList(w, r, func(rp *repo, p *pull) ([]map[string]any, bool) {
		return jsonOf(p.reviews, func(rv *Review) map[string]any { return s.reviewJSON(rp, p, rv) }), true
	})
}

func (s *Server) listReviewComments(w http.ResponseWriter, r *http.Request) {
	s.servePullList(w, r, func(rp *repo, p *pull) ([]map[string]any, bool) {
		return jsonOf(p.comments, func(c *ReviewComment) map[string]any { return s.reviewCommentJSON(rp, p, c) }), true
	})
}

func (s *Server) listCommentsOfReview(w http.ResponseWriter, r *http.Request) {
	s.servePullList(w, r, func(rp *repo, p *pull) ([]map[string]any, bool) {
		rv, ok := s.requestReview(w, r, p)
		if !ok {
			return nil, false
		}
		return jsonOf(rv.Comments, func(c ReviewComment) map[string]any { return s.reviewCommentJSON(rp, p, &c) }), true
	})
}

// jsonOf renders each item with toJSON; an empty list is [], not null.
func jsonOf[T any](items []T, toJSON func(T) map[string]any) []map[string]any {
	out := make([]map[string]any, 0, len(items))
	for _, it := range items {
		out = append(out, toJSON(it))
	}
	return out
}

// draftComment is one comments[] element of pulls/create-review.
type draftComment struct {
	Path      string `json:"path"`
	Position  *int   `json:"position"`
	Body      string `json:"body"`
	Line      *int   `json:"line"`
	Side      string `json:"side"`
	StartLine *int   `json:"start_line"`
	StartSide string `json:"start_side"`
}

type reviewRequest struct {
	CommitID string         `json:"commit_id"`
	Body     string         `json:"body"`
	Event    string         `json:"event"`
	Comments []draftComment `json:"comments"`
}

var reviewStates = map[string]string{
	"":                "PENDING",
	"APPROVE":         "APPROVED",
	"REQUEST_CHANGES": "CHANGES_REQUESTED",
	"COMMENT":         "COMMENTED",
}

// createReview validates a review as GitHub does — one bad comment rejects
// the whole review with 422 — and stores it.
func (s *Server) createReview(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp, p, ok := s.requestPull(w, r)
	if !ok {
		return
	}
	var req reviewRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]any{"message": "Problems parsing JSON", "documentation_url": docCreateReview, "status": "400"})
		return
	}
	if msg := s.validateReview(p, req); msg != "" {
		writeUnprocessable(w, docCreateReview, msg)
		return
	}
	rv := &Review{ID: s.id(), User: s.bot, Body: req.Body, State: reviewStates[req.Event], CommitID: req.CommitID}
	if rv.CommitID == "" {
		rv.CommitID = p.pr.HeadSHA
	}
	for _, dc := range req.Comments {
		c := ReviewComment{ID: s.id(), ReviewID: rv.ID, User: s.bot, Path: dc.Path, Body: dc.Body, Side: sideOrRight(dc.Side), CommitID: rv.CommitID}
		if dc.Line != nil {
			c.Line = *dc.Line
		}
		if dc.StartLine != nil {
			c.StartLine, c.StartSide = *dc.StartLine, dc.StartSide
			if c.StartSide == "" {
				c.StartSide = c.Side
			}
		}
		rv.Comments = append(rv.Comments, c)
	}
	if rv.State != "PENDING" {
		s.submitLocked(p, rv)
	}
	p.reviews = append(p.reviews, rv)
	writeJSON(w, http.StatusOK, s.reviewJSON(rp, p, rv))
}

func sideOrRight(side string) string {
	if side == "" {
		return "RIGHT"
	}
	return side
}

// validateReview returns GitHub's error for the first problem of a review,
// or "".
func (s *Server) validateReview(p *pull, req reviewRequest) string {
	state, ok := reviewStates[req.Event]
	switch {
	case !ok:
		return "Event is not included in the list"
	case state != "APPROVED" && state != "PENDING" && strings.TrimSpace(req.Body) == "":
		return "Body can't be blank" // body is required for REQUEST_CHANGES and COMMENT
	case len([]rune(req.Body)) > MaxBodyLength:
		return errBodyTooLong
	}
	// A pending review of the user blocks every new review, pending or
	// not (REVIEW_RULES.md §2.6).
	for _, rv := range p.reviews {
		if rv.State == "PENDING" && rv.User.Login == s.bot.Login {
			return errOnePending
		}
	}
	if req.CommitID != "" && !p.hasCommit(req.CommitID) {
		return "commit_id is not part of the pull request"
	}
	for _, c := range req.Comments {
		if msg := validateComment(p.parsed, c); msg != "" {
			return msg
		}
	}
	return ""
}

func (p *pull) hasCommit(sha string) bool {
	for _, c := range p.pr.Commits {
		if c.SHA == sha {
			return true
		}
	}
	return sha == p.pr.HeadSHA
}

// validateComment checks one review comment against the diff by walking the
// file's hunks (independently of review/diff's Index, so that the fake
// checks the code under test rather than mirrors it).
func validateComment(d *diff.Diff, c draftComment) string {
	switch {
	case c.Path == "":
		return "Path can't be blank"
	case strings.TrimSpace(c.Body) == "":
		return "Body can't be blank"
	case len([]rune(c.Body)) > MaxBodyLength:
		return errBodyTooLong
	}
	f := fileByPath(d, c.Path)
	if f == nil {
		return errPathInvalid
	}
	if c.Position != nil {
		if c.Line != nil || c.StartLine != nil {
			return "Position and line can't be used together"
		}
		if *c.Position < 1 || *c.Position > patchPositions(f) {
			return errLineNotInDiff
		}
		return ""
	}
	if c.Line == nil {
		return errLineNotInDiff
	}
	side, startSide := sideOrRight(c.Side), c.StartSide
	if startSide == "" {
		startSide = side
	}
	if !validSide(side) || !validSide(startSide) {
		return "Pull request review thread side is not included in the list"
	}
	if f.DiffBytes > diff.MaxCommentableDiffBytes {
		return errLineNotInDiff
	}
	hunk, ok := hunkOf(f, side, *c.Line)
	if !ok {
		return errLineNotInDiff
	}
	if c.StartLine == nil {
		if c.StartSide != "" {
			return "Pull request review thread start line can't be blank"
		}
		return ""
	}
	if *c.StartLine >= *c.Line && startSide == side {
		return errStartAfterEnd
	}
	startHunk, ok := hunkOf(f, startSide, *c.StartLine)
	if !ok {
		return errLineNotInDiff
	}
	if startHunk != hunk {
		return errOtherHunk
	}
	return ""
}

func validSide(s string) bool { return s == "LEFT" || s == "RIGHT" }

func fileByPath(d *diff.Diff, path string) *diff.File {
	for _, f := range d.Files {
		if f.Path() == path {
			return f
		}
	}
	return nil
}

// hunkOf returns the hunk holding line on side: added and context lines by
// their new number on RIGHT, deleted and context lines by their old number
// on LEFT.
func hunkOf(f *diff.File, side string, line int) (int, bool) {
	for i, h := range f.Hunks {
		for _, l := range h.Lines {
			if side == "RIGHT" && l.Kind != diff.Delete && int(l.NewLine) == line {
				return i, true
			}
			if side == "LEFT" && l.Kind != diff.Add && int(l.OldLine) == line {
				return i, true
			}
		}
	}
	return 0, false
}

// patchPositions counts the positions of a file's patch: every line below
// the first hunk header, later headers included.
func patchPositions(f *diff.File) int {
	n := 0
	for _, h := range f.Hunks {
		n += len(h.Lines) + 1
	}
	return n - 1
}

// diffHunk renders the diff_hunk GitHub returns with a review comment: the
// hunk's header and its lines up to the commented one.
func diffHunk(d *diff.Diff, path, side string, line int) string {
	f := fileByPath(d, path)
	if f == nil {
		return ""
	}
	i, ok := hunkOf(f, side, line)
	if !ok {
		return ""
	}
	h := f.Hunks[i]
	var b strings.Builder
	fmt.Fprintf(&b, "@@ -%d,%d +%d,%d @@", h.OldStart, h.OldLines, h.NewStart, h.NewLines)
	for _, l := range h.Lines {
		b.WriteString("\n" + string(rune(l.Kind)) + l.Text)
		if (side == "RIGHT" && l.Kind != diff.Delete && int(l.NewLine) == line) || (side == "LEFT" && l.Kind != diff.Add && int(l.OldLine) == line) {
			break
		}
	}
	return b.String()
}

func (s *Server) requestReview(w http.ResponseWriter, r *http.Request, p *pull) (*Review, bool) {
	id, _ := strconv.ParseInt(r.PathValue("review_id"), 10, 64)
	for _, rv := range p.reviews {
		if rv.ID == id {
			return rv, true
		}
	}
	writeNotFound(w, docCreateReview)
	return nil, false
}

func (s *Server) deleteReview(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp, p, ok := s.requestPull(w, r)
	if !ok {
		return
	}
	rv, ok := s.requestReview(w, r, p)
	if !ok {
		return
	}
	if rv.State != "PENDING" {
		writeUnprocessable(w, docDeleteReview, "Can not delete a non-pending pull request review")
		return
	}
	for i, x := range p.reviews {
		if x == rv {
			p.reviews = append(p.reviews[:i:i], p.reviews[i+1:]...)
			break
		}
	}
	writeJSON(w, http.StatusOK, s.reviewJSON(rp, p, rv))
}

func (s *Server) dismissReview(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp, p, ok := s.requestPull(w, r)
	if !ok {
		return
	}
	rv, ok := s.requestReview(w, r, p)
	if !ok {
		return
	}
	var req struct {
		Message string `json:"message"`
	}
	_ = json.NewDecoder(r.Body).Decode(&req)
	switch {
	case strings.TrimSpace(req.Message) == "":
		writeUnprocessable(w, docDismissReview, "Message can't be blank")
		return
	case rv.State == "PENDING":
		writeUnprocessable(w, docDismissReview, "Can not dismiss a pending pull request review")
		return
	case rv.State != "APPROVED" && rv.State != "CHANGES_REQUESTED":
		writeUnprocessable(w, docDismissReview, "Can not dismiss a "+strings.ToLower(rv.State)+" pull request review")
		return
	}
	rv.State = "DISMISSED"
	writeJSON(w, http.StatusOK, s.reviewJSON(rp, p, rv))
}

const docUpdatePull = "https://docs.github.com/rest/pulls/pulls#update-a-pull-request"

// updatePull answers pulls/update: title, body, state (open or closed),
// base and maintainer_can_modify, each optional; other keys are ignored,
// as GitHub does. A value of the wrong type, a state other than open or
// closed, an empty title and a body over MaxBodyLength characters are
// refused with GitHub's 422s; a base branch change is not supported.
func (s *Server) updatePull(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp, p, ok := s.requestPull(w, r)
	if !ok {
		return
	}
	var req map[string]json.RawMessage
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]any{"message": "Problems parsing JSON", "documentation_url": docUpdatePull, "status": "400"})
		return
	}
	upd, msg := decodePullUpdate(req)
	if msg != "" {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"message": msg, "documentation_url": docUpdatePull, "status": "422"})
		return
	}
	switch {
	case upd.title != nil && strings.TrimSpace(*upd.title) == "":
		writePullInvalid(w, "missing_field", "title", "")
		return
	case upd.body != nil && len([]rune(*upd.body)) > MaxBodyLength:
		writePullInvalid(w, "custom", "body", "body is too long (maximum is 65536 characters)")
		return
	}
	if upd.title != nil {
		p.pr.Title = *upd.title
	}
	if upd.body != nil {
		p.pr.Body = *upd.body
	}
	if upd.state != nil {
		p.pr.State = *upd.state
	}
	writeJSON(w, http.StatusOK, s.pullJSON(rp, p))
}

// pullUpdate is what a pulls/update request changes; nil leaves a field.
type pullUpdate struct {
	title, body, state *string
}

// decodePullUpdate checks each key of a pulls/update request against the
// operation's schema and returns GitHub's message for the first key that
// fails it, "" when all pass. A null body clears the description.
func decodePullUpdate(req map[string]json.RawMessage) (pullUpdate, string) {
	var upd pullUpdate
	for _, key := range []string{"title", "body", "state", "base", "maintainer_can_modify"} {
		raw, ok := req[key]
		if !ok {
			continue
		}
		if key == "maintainer_can_modify" {
			var b bool
			if json.Unmarshal(raw, &b) != nil {
				return upd, fmt.Sprintf("Invalid request.\n\nFor 'properties/%s', %s is not a boolean.", key, raw)
			}
			continue
		}
		var v *string
		if json.Unmarshal(raw, &v) != nil || (v == nil && key != "body") {
			return upd, fmt.Sprintf("Invalid request.\n\nFor 'properties/%s', %s is not a string.", key, raw)
		}
		switch key {
		case "title":
			upd.title = v
		case "body":
			upd.body = v
			if v == nil {
				upd.body = new(string)
			}
		case "state":
			if *v != "open" && *v != "closed" {
				return upd, fmt.Sprintf("Invalid request.\n\nFor 'properties/state', %s is not one of [\"open\", \"closed\"].", raw)
			}
			upd.state = v
		}
	}
	return upd, ""
}

// writePullInvalid answers pulls/update's 422 Validation Failed.
func writePullInvalid(w http.ResponseWriter, code, field, message string) {
	e := map[string]any{"resource": "PullRequest", "code": code, "field": field}
	if message != "" {
		e["message"] = message
	}
	writeJSON(w, http.StatusUnprocessableEntity, map[string]any{
		"message": "Validation Failed", "errors": []any{e}, "documentation_url": docUpdatePull, "status": "422",
	})
}

// PullBody returns the description of a pull request as it stands.
func (s *Server) PullBody(owner, repoName string, number int) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.pullLocked(owner, repoName, number); p != nil {
		return p.pr.Body
	}
	return ""
}

// SetPullBody sets the description of a pull request, as its author
// editing it does.
func (s *Server) SetPullBody(owner, repoName string, number int, body string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.pullLocked(owner, repoName, number); p != nil {
		p.pr.Body = body
	}
}

// SetPullTitle sets the title of a pull request, as its author editing it
// does (GitHub then delivers pull_request edited with changes.title.from).
func (s *Server) SetPullTitle(owner, repoName string, number int, title string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.pullLocked(owner, repoName, number); p != nil {
		p.pr.Title = title
	}
}
