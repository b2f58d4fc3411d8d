package web

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/mergeguard/mergeguard/review/memory"
	"github.com/mergeguard/mergeguard/server/access"
	"github.com/mergeguard/mergeguard/server/api"
	"github.com/mergeguard/mergeguard/server/store"
)

// This file is the memory of dismissals on a pull request's page
// (docs/quality.md): the findings its reviews did not post, each with the
// dismissals it matched, and the form with which a writer revives one.

// SuppressedView is a suppressed finding as the pull request page shows
// it.
type SuppressedView struct {
	store.SuppressedFinding
	Matches []MatchView
}

// MatchView is a dismissal a suppressed finding matched, with where to
// see it: its comment on GitHub, or MergeGuard's page of its pull request.
type MatchView struct {
	memory.Match
	URL     string
	Percent int
}

// suppressedViews are the pull request's suppressed findings with links to
// their dismissals.
func (u *UI) suppressedViews(ctx context.Context, repo string, number int) ([]SuppressedView, error) {
	found, err := u.d.Runs.Suppressed(ctx, repo, number)
	if err != nil {
		return nil, err
	}
	views := make([]SuppressedView, len(found))
	for i, s := range found {
		views[i] = SuppressedView{SuppressedFinding: s, Matches: make([]MatchView, len(s.Matches))}
		for j, m := range s.Matches {
			link := pullPage(repo, m.PRNumber)
			if m.CommentID > 0 {
				link = u.githubPull(repo, m.PRNumber) + "#discussion_r" + strconv.FormatInt(m.CommentID, 10)
			}
			views[i].Matches[j] = MatchView{Match: m, URL: link, Percent: int(m.Similarity*100 + 0.5)}
		}
	}
	return views, nil
}

// maxFingerprint bounds a fingerprint read from a form.
const maxFingerprint = 64

// revive revives a suppressed finding of a pull request from the page's
// form: a CSRF-protected post of a writer (the API token's holder, or a
// person signed in with GitHub who may push to the repository, asked of
// GitHub by the repository's id). From the next review on, findings
// similar to it are posted again (store.Revive).
func (u *UI) revive(w http.ResponseWriter, r *http.Request) {
	if !u.checkForm(w, r) {
		return
	}
	repo, number, err := api.ParsePullPath(r.PathValue("owner"), r.PathValue("name"), r.PathValue("number"))
	fp := r.PostFormValue("fingerprint")
	if err != nil || fp == "" || len(fp) > maxFingerprint || strings.ContainsFunc(fp, func(c rune) bool { return c <= ' ' || c > '~' }) {
		http.Error(w, "Not a suppressed finding of a pull request.", http.StatusBadRequest)
		return
	}
	v, ok := u.d.Access.Viewer(r)
	if !ok {
		http.Error(w, "Sign in to revive a finding.", http.StatusUnauthorized)
		return
	}
	r = r.WithContext(context.WithValue(r.Context(), viewerKey{}, v))
	id, yes, ok := u.canSeeName(w, r, repo, number)
	if !ok {
		return
	} else if !yes {
		u.notFound(w, r, fmt.Sprintf("MergeGuard has no runs and no findings for %s#%d.", repo, number))
		return
	}
	if writer, ok := u.canWrite(w, r, v, id); !ok {
		return
	} else if !writer {
		http.Error(w, "Only a person who may push to the repository revives a suppressed finding.", http.StatusForbidden)
		return
	}
	revived, err := u.d.Runs.Revive(r.Context(), repo, number, fp, v.Name())
	if err != nil {
		u.fail(w, err, "revive a suppressed finding")
		return
	}
	u.d.Logger.Info().Str("repository", repo).Int("pr_number", number).Str("fingerprint", fp).Str("by", v.Name()).
		Bool("revived", revived).Msg("web: revive a suppressed finding")
	http.Redirect(w, r, pullPage(repo, number)+"#suppressed", http.StatusSeeOther)
}

// canWrite reports whether viewer v may change what MergeGuard keeps of
// the repository of GitHub id repoID: the token holder always, a person
// signed in with GitHub when GitHub says they may push to it. When it
// cannot tell it answers 503 itself and returns ok false.
func (u *UI) canWrite(w http.ResponseWriter, r *http.Request, v access.Viewer, repoID int64) (yes, ok bool) {
	if v.Admin {
		return true, true
	}
	if u.d.GitHub == nil || repoID <= 0 || !v.GitHubToken.IsSet() {
		return false, true
	}
	ctx, cancel := context.WithTimeout(r.Context(), githubTimeout)
	defer cancel()
	yes, err := u.d.GitHub.CanWriteID(ctx, v.GitHubToken.Value(), repoID)
	if err != nil {
		u.d.Logger.Warn().Err(err).Int64("repository_id", repoID).Msg("web: ask GitHub whether a signed-in person may push")
		http.Error(w, "Could not ask GitHub whether you may push to this repository; try again.", http.StatusServiceUnavailable)
		return false, false
	}
	return yes, true
}
