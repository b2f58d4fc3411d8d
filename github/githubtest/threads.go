package githubtest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
)

const (
	docReply        = "https://docs.github.com/rest/pulls/comments#create-a-reply-for-a-review-comment"
	errReplyToReply = "Replies to replies are not supported: comment_id must be a top-level review comment"
)

// thread is a review thread: GitHub starts one with every top-level
// review comment of a submitted review; replies join it.
type thread struct {
	id         string
	comments   []*ReviewComment
	resolved   bool
	resolvedBy *User // nil when unresolved, or resolved by an App
}

// Thread is a review thread as the fake holds it.
type Thread struct {
	// ID is the thread's GraphQL node id.
	ID         string
	Resolved   bool
	ResolvedBy string
	// Outdated is set when the first comment's line is no longer a line
	// of the pull request's diff.
	Outdated bool
	Comments []ReviewComment
}

// nodeID returns a GraphQL node id of a kind ("PRRT", "PRRC") for an
// object id, shaped like GitHub's.
func nodeID(kind string, id int64) string {
	return kind + "_kwDO" + base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(id, 36)))
}

// submitLocked lists the comments of a submitted review and files them in
// threads.
func (s *Server) submitLocked(p *pull, rv *Review) {
	var submitted []*ReviewComment
	for i := range rv.Comments {
		submitted = append(submitted, &rv.Comments[i])
	}
	p.comments = append(p.comments, submitted...)
	s.startThreadsLocked(p, submitted)
}

// startThreadsLocked files the comments of a submitted review: a reply
// joins the thread of the comment it answers, any other comment starts a
// thread.
func (s *Server) startThreadsLocked(p *pull, comments []*ReviewComment) {
	for _, c := range comments {
		if c.InReplyTo != 0 {
			if t := p.threadOf(c.InReplyTo); t != nil {
				t.comments = append(t.comments, c)
				continue
			}
		}
		p.threads = append(p.threads, &thread{id: nodeID("PRRT", s.id()), comments: []*ReviewComment{c}})
	}
}

// threadOf returns the thread holding comment id, nil if none.
func (p *pull) threadOf(id int64) *thread {
	for _, t := range p.threads {
		for _, c := range t.comments {
			if c.ID == id {
				return t
			}
		}
	}
	return nil
}

// outdated reports whether a thread's line left the pull request's diff.
func (p *pull) outdated(t *thread) bool {
	c := t.comments[0]
	f := fileByPath(p.parsed, c.Path)
	if f == nil {
		return true
	}
	_, ok := hunkOf(f, sideOrRight(c.Side), c.Line)
	return !ok
}

// replyComment answers pulls/create-reply-for-review-comment: 201 with the
// reply, which joins the comment's thread (GitHub files it under a new
// COMMENTED review); 404 for a comment the pull request does not have; 422
// for a reply to a reply or a blank body.
func (s *Server) replyComment(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp, p, ok := s.requestPull(w, r)
	if !ok {
		return
	}
	id, _ := strconv.ParseInt(r.PathValue("comment_id"), 10, 64)
	var req struct {
		Body string `json:"body"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]any{"message": "Problems parsing JSON", "documentation_url": docReply, "status": "400"})
		return
	}
	c, msg, status := s.replyLocked(p, id, s.bot, req.Body)
	if status != http.StatusCreated {
		if status == http.StatusNotFound {
			writeNotFound(w, docReply)
		} else {
			writeUnprocessable(w, docReply, msg)
		}
		return
	}
	writeJSON(w, http.StatusCreated, s.reviewCommentJSON(rp, p, c))
}

// replyLocked adds a reply by user to comment id and returns it, or an
// error message and status.
func (s *Server) replyLocked(p *pull, id int64, user User, body string) (*ReviewComment, string, int) {
	t := p.threadOf(id)
	switch {
	case t == nil:
		return nil, "Not Found", http.StatusNotFound
	case t.comments[0].ID != id:
		return nil, errReplyToReply, http.StatusUnprocessableEntity
	case strings.TrimSpace(body) == "":
		return nil, "Body can't be blank", http.StatusUnprocessableEntity
	case len([]rune(body)) > MaxBodyLength:
		return nil, errBodyTooLong, http.StatusUnprocessableEntity
	}
	first := t.comments[0]
	rv := &Review{ID: s.id(), User: user, State: "COMMENTED", CommitID: p.pr.HeadSHA}
	c := &ReviewComment{ID: s.id(), ReviewID: rv.ID, User: user, Path: first.Path, Body: body, Line: first.Line, Side: first.Side,
		StartLine: first.StartLine, StartSide: first.StartSide, CommitID: p.pr.HeadSHA, InReplyTo: first.ID}
	rv.Comments = []ReviewComment{*c}
	p.reviews = append(p.reviews, rv)
	p.comments = append(p.comments, c)
	t.comments = append(t.comments, c)
	return c, "", http.StatusCreated
}

// Reply adds a reply by user (a person, unless it is the bot) to review
// comment id of a pull request, as GitHub's web page does, and returns its
// id; a reply to a reply or to an unknown comment fails the test.
func (s *Server) Reply(owner, repoName string, number int, id int64, user User, body string) int64 {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.pullLocked(owner, repoName, number)
	if p == nil {
		return 0
	}
	if user.Type == "" {
		user.Type = "User"
	}
	c, msg, status := s.replyLocked(p, id, user, body)
	if status != http.StatusCreated {
		s.t.Errorf("githubtest: Reply to comment %d: %d %s", id, status, msg)
		return 0
	}
	return c.ID
}

// ResolveThread resolves a review thread as a person does on GitHub's web
// page (resolvedBy is login); false when the pull request has no such
// thread.
func (s *Server) ResolveThread(owner, repoName string, number int, threadID, login string) bool {
	return s.setResolved(owner, repoName, number, threadID, &User{Login: login, Type: "User"}, true)
}

// UnresolveThread unresolves a review thread as a person does.
func (s *Server) UnresolveThread(owner, repoName string, number int, threadID string) bool {
	return s.setResolved(owner, repoName, number, threadID, nil, false)
}

func (s *Server) setResolved(owner, repoName string, number int, threadID string, by *User, resolved bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.pullLocked(owner, repoName, number)
	if p == nil {
		return false
	}
	for _, t := range p.threads {
		if t.id == threadID {
			t.resolved, t.resolvedBy = resolved, by
			return true
		}
	}
	return false
}

// Threads returns the review threads of a pull request, oldest first.
func (s *Server) Threads(owner, repoName string, number int) []Thread {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.pullLocked(owner, repoName, number)
	if p == nil {
		return nil
	}
	out := make([]Thread, 0, len(p.threads))
	for _, t := range p.threads {
		th := Thread{ID: t.id, Resolved: t.resolved, Outdated: p.outdated(t)}
		if t.resolvedBy != nil {
			th.ResolvedBy = t.resolvedBy.Login
		}
		for _, c := range t.comments {
			th.Comments = append(th.Comments, *c)
		}
		out = append(out, th)
	}
	return out
}

// ThreadOf returns the node id of the thread holding review comment id,
// "" if none.
func (s *Server) ThreadOf(owner, repoName string, number int, id int64) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.pullLocked(owner, repoName, number)
	if p == nil {
		return ""
	}
	if t := p.threadOf(id); t != nil {
		return t.id
	}
	return ""
}

// GraphQL: pullRequest.reviewThreads and the resolve mutations.

var (
	threadsArgsRE  = regexp.MustCompile(`reviewThreads\(([^)]*)\)`)
	commentsArgsRE = regexp.MustCompile(`comments\(([^)]*)\)`)
	mutationRE     = regexp.MustCompile(`^\s*mutation\b`)
)

// gqlArgs reads the arguments of a field call ("first: 100, after:
// $cursor"), resolving variables.
func gqlArgs(call string, vars map[string]any) map[string]any {
	out := map[string]any{}
	for arg := range strings.SplitSeq(call, ",") {
		k, v, ok := strings.Cut(arg, ":")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if name, isVar := strings.CutPrefix(v, "$"); isVar {
			out[k] = vars[name]
			continue
		}
		if n, err := strconv.Atoi(v); err == nil {
			out[k] = float64(n)
			continue
		}
		out[k] = strings.Trim(v, `"`)
	}
	return out
}

// gqlError is one GraphQL error, in GitHub's shape.
func gqlError(typ, msg string, path ...any) map[string]any {
	e := map[string]any{"message": msg, "locations": []any{map[string]any{"line": 1, "column": 1}}}
	if typ != "" {
		e["type"] = typ
	}
	if len(path) > 0 {
		e["path"] = path
	}
	return e
}

// connectionFirst checks a connection's first argument as GitHub does.
func connectionFirst(args map[string]any, name string) (int, map[string]any) {
	first, ok := args["first"].(float64)
	switch {
	case !ok:
		return 0, gqlError("", fmt.Sprintf("You must provide a `first` or `last` value to properly paginate the `%s` connection.", name))
	case first < 0 || first > 100:
		return 0, gqlError("", fmt.Sprintf("Requesting %d records on the `%s` connection exceeds the `first` limit of 100 records.", int(first), name))
	}
	return int(first), nil
}

func cursorOf(i int) string {
	return base64.StdEncoding.EncodeToString([]byte("cursor:v2:" + strconv.Itoa(i)))
}

func indexOfCursor(c string) int {
	b, err := base64.StdEncoding.DecodeString(c)
	if err != nil {
		return -1
	}
	n, err := strconv.Atoi(strings.TrimPrefix(string(b), "cursor:v2:"))
	if err != nil {
		return -1
	}
	return n
}

// threadsData answers repository.pullRequest.reviewThreads: the full data
// and the GraphQL errors.
func (s *Server) threadsData(query string, vars map[string]any) (map[string]any, []any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	owner, _ := vars["owner"].(string)
	name, _ := vars["name"].(string)
	rp := s.lookup(owner, name)
	if rp == nil {
		return map[string]any{"repository": nil}, []any{gqlError("NOT_FOUND", fmt.Sprintf("Could not resolve to a Repository with the name '%s/%s'.", owner, name), "repository")}
	}
	number, _ := vars["number"].(float64)
	p := rp.pulls[int(number)]
	if p == nil {
		return map[string]any{"repository": map[string]any{"pullRequest": nil}},
			[]any{gqlError("NOT_FOUND", fmt.Sprintf("Could not resolve to a PullRequest with the number of %d.", int(number)), "repository", "pullRequest")}
	}
	var targs, cargs map[string]any
	if m := threadsArgsRE.FindStringSubmatch(query); m != nil {
		targs = gqlArgs(m[1], vars)
	}
	first, gerr := connectionFirst(targs, "reviewThreads")
	if gerr != nil {
		return nil, []any{gerr}
	}
	ncomments := -1
	if m := commentsArgsRE.FindStringSubmatch(query); m != nil {
		cargs = gqlArgs(m[1], vars)
		if ncomments, gerr = connectionFirst(cargs, "comments"); gerr != nil {
			return nil, []any{gerr}
		}
	}
	start := 0
	if after, ok := targs["after"].(string); ok && after != "" {
		if start = indexOfCursor(after) + 1; start <= 0 {
			return nil, []any{gqlError("", fmt.Sprintf("`%s` does not appear to be a valid cursor.", after))}
		}
	}
	start = min(start, len(p.threads))
	end := min(start+first, len(p.threads))
	nodes := []any{}
	for _, t := range p.threads[start:end] {
		nodes = append(nodes, s.threadJSON(p, t, ncomments))
	}
	info := map[string]any{"hasNextPage": end < len(p.threads), "hasPreviousPage": start > 0, "startCursor": nil, "endCursor": nil}
	if end > start {
		info["startCursor"], info["endCursor"] = cursorOf(start), cursorOf(end-1)
	}
	return map[string]any{"repository": map[string]any{"pullRequest": map[string]any{"reviewThreads": map[string]any{
		"totalCount": len(p.threads), "nodes": nodes, "pageInfo": info,
	}}}}, nil
}

// actorJSON is a GraphQL actor: a bot's login has no "[bot]" there.
func actorJSON(u User) map[string]any {
	if u.Type == "Bot" {
		return map[string]any{"__typename": "Bot", "login": strings.TrimSuffix(u.Login, "[bot]")}
	}
	return map[string]any{"__typename": "User", "login": u.Login}
}

// threadJSON is one PullRequestReviewThread with its first n comments
// (all when n < 0).
func (s *Server) threadJSON(p *pull, t *thread, n int) map[string]any {
	first := t.comments[0]
	comments := t.comments
	if n >= 0 {
		comments = comments[:min(n, len(comments))]
	}
	nodes := []any{}
	for _, c := range comments {
		node := map[string]any{
			"id": nodeID("PRRC", c.ID), "databaseId": c.ID, "fullDatabaseId": strconv.FormatInt(c.ID, 10),
			"body": c.Body, "author": actorJSON(c.User), "path": c.Path, "line": c.Line, "originalLine": c.Line,
			"createdAt": time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC).Format(time.RFC3339), "outdated": p.outdated(t),
			"replyTo": nil, "state": "SUBMITTED", "subjectType": "LINE",
		}
		if c.InReplyTo != 0 {
			node["replyTo"] = map[string]any{"id": nodeID("PRRC", c.InReplyTo), "databaseId": c.InReplyTo}
		}
		nodes = append(nodes, node)
	}
	var resolvedBy any
	if t.resolvedBy != nil {
		resolvedBy = map[string]any{"login": t.resolvedBy.Login}
	}
	return map[string]any{
		"id": t.id, "isResolved": t.resolved, "isCollapsed": t.resolved, "isOutdated": p.outdated(t),
		"path": first.Path, "line": first.Line, "originalLine": first.Line, "diffSide": sideOrRight(first.Side),
		"startLine": nilIfZero(first.StartLine), "subjectType": "LINE", "resolvedBy": resolvedBy,
		"viewerCanReply": true, "viewerCanResolve": !t.resolved, "viewerCanUnresolve": t.resolved,
		"comments": map[string]any{"totalCount": len(t.comments), "nodes": nodes,
			"pageInfo": map[string]any{"hasNextPage": len(comments) < len(t.comments), "hasPreviousPage": false}},
	}
}

func nilIfZero(n int) any {
	if n == 0 {
		return nil
	}
	return n
}

// resolveData answers resolveReviewThread and unresolveReviewThread, as
// the App (resolvedBy stays null: it is typed User, and an App is not
// one).
func (s *Server) resolveData(field string, vars map[string]any) (map[string]any, []any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	input, _ := vars["input"].(map[string]any)
	id, _ := input["threadId"].(string)
	for _, rp := range s.repos {
		for _, p := range rp.pulls {
			for _, t := range p.threads {
				if t.id != id {
					continue
				}
				t.resolved, t.resolvedBy = field == "resolveReviewThread", nil
				return map[string]any{field: map[string]any{"clientMutationId": input["clientMutationId"], "thread": s.threadJSON(p, t, -1)}}, nil
			}
		}
	}
	return map[string]any{field: nil}, []any{gqlError("NOT_FOUND", fmt.Sprintf("Could not resolve to a node with the global id of '%s'", id), field)}
}

// ThreadEvent returns the pull_request_review_thread payload GitHub sends
// when a thread is resolved or unresolved (action), built from the real
// example with the fake's pull request, thread, comments and sender; the
// installation id is set when not 0. Pair it with ResolveThread to play
// a person resolving a thread.
func (s *Server) ThreadEvent(owner, repoName string, number int, threadID, action, sender string, installationID int64) []byte {
	s.t.Helper()
	s.mu.Lock()
	rp := s.lookup(owner, repoName)
	p := s.pullLocked(owner, repoName, number)
	var fields map[string]any
	if p != nil {
		for _, t := range p.threads {
			if t.id != threadID {
				continue
			}
			comments := make([]any, 0, len(t.comments))
			for _, c := range t.comments {
				comments = append(comments, s.reviewCommentJSON(rp, p, c))
			}
			fields = map[string]any{
				"action": action, "thread.node_id": t.id, "thread.comments": comments,
				"pull_request.number": number, "pull_request.head.sha": p.pr.HeadSHA, "pull_request.base.sha": p.pr.BaseSHA,
				"repository.name": rp.name, "repository.full_name": rp.owner + "/" + rp.name, "repository.owner.login": rp.owner,
				"sender": s.userJSON(User{Login: sender, ID: 4242, Type: "User"}),
			}
		}
	}
	s.mu.Unlock()
	if fields == nil {
		s.t.Fatalf("githubtest: ThreadEvent: no thread %s on %s/%s#%d", threadID, owner, repoName, number)
		return nil
	}
	if installationID != 0 {
		fields["installation.id"] = installationID
	}
	return SetFields(s.t, Payload(s.t, "pull_request_review_thread/resolved.payload.json"), fields)
}
