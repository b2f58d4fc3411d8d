package githubtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

const (
	docIssueComment = "https://docs.github.com/rest/issues/comments#create-an-issue-comment"
	docReaction     = "https://docs.github.com/rest/reactions/reactions#create-reaction-for-an-issue-comment"
	docPermission   = "https://docs.github.com/rest/collaborators/collaborators#get-repository-permissions-for-a-user"
)

// reactionContents are the reactions GitHub accepts.
var reactionContents = []string{"+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes"}

func (s *Server) issueCommentJSON(rp *repo, number int, c *IssueComment) map[string]any {
	m := s.example("issue-comment.json")
	m["id"], m["body"], m["user"] = c.ID, c.Body, s.userJSON(c.User)
	m["url"] = fmt.Sprintf("%srepos/%s/%s/issues/comments/%d", s.URL(), rp.owner, rp.name, c.ID)
	m["html_url"] = fmt.Sprintf("https://github.com/%s/%s/pull/%d#issuecomment-%d", rp.owner, rp.name, number, c.ID)
	m["issue_url"] = fmt.Sprintf("%srepos/%s/%s/issues/%d", s.URL(), rp.owner, rp.name, number)
	return m
}

func (s *Server) listIssueComments(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp, ok := s.requestRepo(w, r, docIssueComment)
	if !ok {
		return
	}
	n, err := strconv.Atoi(r.PathValue("issue_number"))
	if err != nil {
		writeNotFound(w, docIssueComment)
		return
	}
	paginate(w, r, jsonOf(rp.issueComments[n], func(c *IssueComment) map[string]any { return s.issueCommentJSON(rp, n, c) }))
}

func (s *Server) createIssueComment(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp, ok := s.requestRepo(w, r, docIssueComment)
	if !ok {
		return
	}
	n, _ := strconv.Atoi(r.PathValue("issue_number"))
	if rp.pulls[n] == nil {
		writeNotFound(w, docIssueComment)
		return
	}
	var req struct {
		Body string `json:"body"`
	}
	if json.NewDecoder(r.Body).Decode(&req) != nil || strings.TrimSpace(req.Body) == "" {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]any{
			"message": "Validation Failed", "documentation_url": docIssueComment, "status": "422",
			"errors": []any{map[string]any{"resource": "IssueComment", "code": "missing_field", "field": "body"}},
		})
		return
	}
	if len([]rune(req.Body)) > MaxBodyLength {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]any{
			"message": "Validation Failed", "documentation_url": docIssueComment, "status": "422",
			"errors": []any{map[string]any{"resource": "IssueComment", "code": "custom", "field": "body", "message": "body is too long (maximum is 65536 characters)"}},
		})
		return
	}
	c := &IssueComment{ID: s.id(), User: s.bot, Body: req.Body}
	rp.issueComments[n] = append(rp.issueComments[n], c)
	writeJSON(w, http.StatusCreated, s.issueCommentJSON(rp, n, c))
}

func (s *Server) createReaction(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp, ok := s.requestRepo(w, r, docReaction)
	if !ok {
		return
	}
	id, _ := strconv.ParseInt(r.PathValue("comment_id"), 10, 64)
	if !rp.hasIssueComment(id) {
		writeNotFound(w, docReaction)
		return
	}
	var req struct {
		Content string `json:"content"`
	}
	if json.NewDecoder(r.Body).Decode(&req) != nil || !slices.Contains(reactionContents, req.Content) {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]any{
			"message": "Validation Failed", "documentation_url": docReaction, "status": "422",
			"errors": []any{map[string]any{"resource": "Reaction", "code": "invalid", "field": "content"}},
		})
		return
	}
	status := http.StatusCreated
	var x *Reaction
	for _, old := range rp.reactions {
		if old.CommentID == id && old.Content == req.Content && old.User.Login == s.bot.Login {
			x, status = old, http.StatusOK // an identical reaction is returned as is
		}
	}
	if x == nil {
		x = &Reaction{ID: s.id(), CommentID: id, User: s.bot, Content: req.Content}
		rp.reactions = append(rp.reactions, x)
	}
	m := s.example("reaction.json")
	m["id"], m["user"], m["content"] = x.ID, s.userJSON(x.User), x.Content
	writeJSON(w, status, m)
}

func (rp *repo) hasIssueComment(id int64) bool {
	for _, cs := range rp.issueComments {
		for _, c := range cs {
			if c.ID == id {
				return true
			}
		}
	}
	return false
}

// permission answers the collaborator permission of a user: permission is
// admin, write, read or none (maintain counts as write, triage as read) and
// role_name the role itself. Users without a role answer 404.
func (s *Server) permission(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp, ok := s.requestRepo(w, r, docPermission)
	if !ok {
		return
	}
	login := r.PathValue("username")
	role, ok := rp.roles[strings.ToLower(login)]
	if !ok {
		writeNotFound(w, docPermission)
		return
	}
	perm := role
	switch role {
	case "maintain":
		perm = "write"
	case "triage":
		perm = "read"
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"permission": perm,
		"role_name":  role,
		"user":       s.userJSON(User{Login: login, ID: 1}),
	})
}
