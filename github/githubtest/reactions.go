package githubtest

import (
	"net/http"
	"strconv"
)

// docReviewReactions documents the reactions of a review comment.
const docReviewReactions = "https://docs.github.com/rest/reactions/reactions#list-reactions-for-a-pull-request-review-comment"

// RouteListReviewCommentReactions lists the reactions of a review comment.
const RouteListReviewCommentReactions = "GET /repos/{owner}/{repo}/pulls/comments/{comment_id}/reactions"

// reviewCommentLocked reports whether the repository has review comment id.
func (rp *repo) hasReviewComment(id int64) bool {
	for _, p := range rp.pulls {
		if p.threadOf(id) != nil {
			return true
		}
	}
	return false
}

// React adds user's reaction (+1, -1, ...) to review comment id, as a
// person clicking it does (GitHub sends no webhook for it).
func (s *Server) React(owner, repoName string, commentID int64, user User, content string) {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	rp := s.lookup(owner, repoName)
	if rp == nil || !rp.hasReviewComment(commentID) {
		s.t.Fatalf("githubtest: React: no review comment %d in %s/%s", commentID, owner, repoName)
		return
	}
	rp.reviewReactions = append(rp.reviewReactions, &Reaction{ID: s.id(), CommentID: commentID, User: user, Content: content})
}

// listReviewReactions answers reactions/list-for-pull-request-comment:
// the reactions of a review comment, oldest first, paginated; 404 for a
// comment the repository does not have.
func (s *Server) listReviewReactions(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp, ok := s.requestRepo(w, r, docReviewReactions)
	if !ok {
		return
	}
	id, _ := strconv.ParseInt(r.PathValue("comment_id"), 10, 64)
	if !rp.hasReviewComment(id) {
		writeNotFound(w, docReviewReactions)
		return
	}
	items := []map[string]any{}
	for _, x := range rp.reviewReactions {
		if x.CommentID != id {
			continue
		}
		m := s.example("reaction.json")
		m["id"], m["user"], m["content"] = x.ID, s.userJSON(x.User), x.Content
		items = append(items, m)
	}
	paginate(w, r, items)
}
