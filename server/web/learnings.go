package web

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/server/api"
)

// LearningView is a learning as the learnings page shows it, with links to
// where it came from.
type LearningView struct {
	review.Learning
	// API is the learning's address in the API, which the page's forms
	// change it through.
	API string
	// PRPage and ThreadURL are the UI's page of the pull request it came
	// from and its review thread on GitHub; "" when unknown.
	PRPage, ThreadURL string
}

// learningsPage is the UI's page of a repository's learnings.
func learningsPage(repo string) string { return "/repos/" + repo + "/learnings" }

// learnings is a repository's learnings page: each learning with its
// provenance, and for admins forms to edit, (de)activate and delete it
// through the API (the page's script sends the CSRF token).
func (u *UI) learnings(w http.ResponseWriter, r *http.Request) {
	repo, ok := u.visibleRepo(w, r, "MergeGuard has no learnings of ")
	if !ok {
		return
	}
	ls, err := u.d.Runs.Learnings(r.Context(), repo, "")
	if err != nil {
		u.fail(w, err, "list learnings")
		return
	}
	views := make([]LearningView, len(ls))
	counts := make(map[review.LearningStatus]int)
	for i, l := range ls {
		views[i] = u.learningView(repo, l)
		counts[l.Status]++
	}
	u.render(w, r, "learnings", map[string]any{
		"Title":      "Learnings of " + repo,
		"Repository": repo,
		"Learnings":  views,
		"Counts":     counts,
		"Statuses":   []review.LearningStatus{review.LearningActive, review.LearningProposed, review.LearningInactive},
		// People signed in with GitHub read learnings; token holders
		// change them (through the API).
		"ReadOnly": !viewerOf(r).Admin,
	})
}

// visibleRepo reads the repository the request's path names and checks
// that the viewer may see what MergeGuard keeps under its name
// (canSeeName); otherwise it answers itself (the 404 page saying missing
// and the name) and returns false.
func (u *UI) visibleRepo(w http.ResponseWriter, r *http.Request, missing string) (string, bool) {
	repo, err := api.ParseRepoPath(r.PathValue("owner"), r.PathValue("name"))
	if err != nil {
		u.notFound(w, r, "That is not a repository: "+err.Error()+".")
		return "", false
	}
	if _, yes, ok := u.canSeeName(w, r, repo, 0); !ok {
		return "", false
	} else if !yes {
		u.notFound(w, r, missing+repo+".")
		return "", false
	}
	return repo, true
}

func (u *UI) learningView(repo string, l review.Learning) LearningView {
	v := LearningView{Learning: l, API: fmt.Sprintf("/api/repos/%s/learnings/%d", repo, l.ID)}
	if l.PRNumber > 0 {
		v.PRPage = pullPage(l.Repository, l.PRNumber)
		if l.ThreadCommentID > 0 {
			v.ThreadURL = u.githubPull(l.Repository, l.PRNumber) + "#discussion_r" + strconv.FormatInt(l.ThreadCommentID, 10)
		}
	}
	return v
}
