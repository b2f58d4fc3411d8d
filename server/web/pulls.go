package web

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/server/api"
	"github.com/mergeguard/mergeguard/server/store"
)

// FindingView is a ledger entry as the pull request page shows it, with the
// states it went through, oldest first.
type FindingView struct {
	review.LedgerEntry
	History []store.LedgerChange
}

// pullPage is the UI's page of pull request number of repo (owner/name).
func pullPage(repo string, number int) string {
	return "/repos/" + repo + "/pulls/" + strconv.Itoa(number)
}

// githubPull is the pull request's address on GitHub.
func (u *UI) githubPull(repo string, number int) string {
	return strings.TrimSuffix(u.d.GitHubURL, "/") + "/" + repo + "/pull/" + strconv.Itoa(number)
}

// pull is a pull request's page: its runs and its finding ledger.
func (u *UI) pull(w http.ResponseWriter, r *http.Request) {
	repo, number, err := api.ParsePullPath(r.PathValue("owner"), r.PathValue("name"), r.PathValue("number"))
	if err != nil {
		u.notFound(w, r, "That is not a pull request: "+err.Error()+".")
		return
	}
	missing := fmt.Sprintf("MergeGuard has no runs and no findings for %s#%d.", repo, number)
	id, yes, ok := u.canSeeName(w, r, repo, number)
	if !ok {
		return
	} else if !yes {
		u.notFound(w, r, missing)
		return
	}
	ctx := r.Context()
	runs, err := u.d.Runs.ListRuns(ctx, store.RunFilter{Repository: repo, PRNumber: number, Limit: api.MaxPullRuns})
	if err != nil {
		u.fail(w, err, "list runs of a pull request")
		return
	}
	if !viewerOf(r).Admin {
		// Runs without the repository's id are for admins only.
		runs = slices.DeleteFunc(runs, func(run store.Run) bool { return run.RepositoryID != id })
	}
	entries, err := u.d.Runs.Ledger(ctx, repo, number)
	if err != nil {
		u.fail(w, err, "read a pull request's ledger")
		return
	}
	if len(runs) == 0 && len(entries) == 0 {
		u.notFound(w, r, missing)
		return
	}
	changes, err := u.d.Runs.LedgerHistory(ctx, repo, number)
	if err != nil {
		u.fail(w, err, "read a pull request's ledger history")
		return
	}
	views := make([]RunView, len(runs))
	var answers []RunView
	for i, run := range runs {
		views[i] = u.view(run)
		if run.Mode == store.ModeAnswer {
			answers = append(answers, views[i])
		}
	}
	suppressed, err := u.suppressedViews(ctx, repo, number)
	if err != nil {
		u.fail(w, err, "read a pull request's suppressed findings")
		return
	}
	history := api.HistoryByFingerprint(changes)
	findings := make([]FindingView, len(entries))
	counts := make(map[review.FindingState]int)
	for i, e := range entries {
		findings[i] = FindingView{LedgerEntry: e, History: history[e.Finding.Fingerprint]}
		counts[e.State]++
	}
	u.render(w, r, "pull", map[string]any{
		"Title":         fmt.Sprintf("%s#%d", repo, number),
		"Repository":    repo,
		"Number":        number,
		"PRURL":         u.githubPull(repo, number),
		"LearningsPage": learningsPage(repo),
		"QualityPage":   qualityPage(repo),
		"Runs":          views,
		"Answers":       answers,
		"Findings":      findings,
		"Counts":        counts,
		"Suppressed":    suppressed,
		"RevivePath":    pullPage(repo, number) + "/revive",
		"States":        []review.FindingState{review.FindingOpen, review.FindingExposed, review.FindingFixed, review.FindingDismissed, review.FindingOutdated},
	})
}
