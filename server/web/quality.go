package web

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/mergeguard/mergeguard/review/quality"
	"github.com/mergeguard/mergeguard/server/api"
)

// maxQualityRepos bounds the repositories whose visibility the
// installation-wide Quality page asks about for a person signed in with
// GitHub; the others are left out of their report (and counted).
const maxQualityRepos = 200

// qualityPage is the UI's Quality page of repo, or ("") of every
// repository.
func qualityPage(repo string) string {
	if repo == "" {
		return "/quality"
	}
	return "/repos/" + repo + "/quality"
}

// QualityView is what the Quality page shows: the API's report and its
// charts.
type QualityView struct {
	api.QualityResponse
	Over WeekChart
	Bars []BarChart
	// Repositories lists the installation-wide page's repositories;
	// HiddenRepositories counts those left out past RepositoryBound
	// (maxQualityRepos).
	Repositories                        []RepoLink
	HiddenRepositories, RepositoryBound int
	// Arms are the arms of a model comparison (llm.experiments) when
	// the window has two or more; the "By experiment arm" chart draws
	// their addressed rates.
	Arms []quality.Arm
	// SinceDate is the window's start; Closed says a pull request closed
	// in it, HasFindings that a finding of a merged one counts.
	SinceDate           string
	Closed, HasFindings bool
}

// RepoLink is a repository in the installation-wide page's list.
type RepoLink struct {
	Repository, Page, Rate string
	N                      int
}

// allQuality is the installation-wide Quality page: every repository for
// admins, those GitHub lets a signed-in person read for them.
func (u *UI) allQuality(w http.ResponseWriter, r *http.Request) {
	u.quality(w, r, "")
}

// repoQuality is one repository's Quality page, seen by whoever may see
// its pull requests (canSeeName).
func (u *UI) repoQuality(w http.ResponseWriter, r *http.Request) {
	if repo, ok := u.visibleRepo(w, r, "MergeGuard has no quality report of "); ok {
		u.quality(w, r, repo)
	}
}

func (u *UI) quality(w http.ResponseWriter, r *http.Request, repo string) {
	since, err := api.ParseSince(r.URL.Query().Get("since"), time.Now())
	if err != nil {
		u.renderStatus(w, r, http.StatusBadRequest, "notfound", map[string]any{"Title": "Quality",
			"Message": "That is not a window to report on: " + err.Error() + "."})
		return
	}
	var (
		rep    api.QualityResponse
		hidden int
	)
	if repo != "" || viewerOf(r).Admin {
		rep, err = api.Quality(r.Context(), u.d.Runs, repo, since)
	} else {
		rep, hidden, err = u.visibleQuality(r, since)
	}
	if err != nil {
		u.fail(w, err, "read the quality report")
		return
	}
	title := "Quality"
	if repo != "" {
		title = "Quality of " + repo
	}
	u.render(w, r, "quality", map[string]any{
		"Title":      title,
		"Repository": repo,
		"Q":          qualityView(rep, hidden),
	})
}

// qualityView lays out rep's charts.
func qualityView(rep api.QualityResponse, hidden int) QualityView {
	q := QualityView{QualityResponse: rep, HiddenRepositories: hidden, RepositoryBound: maxQualityRepos,
		SinceDate: rep.Since.UTC().Format(time.DateOnly),
		Closed:    rep.Merged+rep.ClosedUnmerged > 0, HasFindings: rep.AddressedRate.N > 0,
		Over: Weeks("chart-week", "Addressed rate by week", rep.ByWeek)}
	// Each breakdown of the report (a []quality.Group) is one chart.
	q.Bars = []BarChart{
		Bars("chart-category", "By category", rep.ByCategory),
		Bars("chart-source", "By source (model or analyzer)", rep.BySource),
		Bars("chart-severity", "By severity", rep.BySeverity),
	}
	if len(rep.ByArm) > 1 {
		arms := make([]quality.Group, len(rep.ByArm))
		for i, a := range rep.ByArm {
			arms[i] = quality.Group{Key: a.Name, Rate: a.AddressedRate}
		}
		q.Bars = append(q.Bars, Bars("chart-arm", "By experiment arm", arms))
		q.Arms = rep.ByArm
	}
	if rep.Repository == "" {
		q.Bars = append(q.Bars, Bars("chart-repository", "By repository", rep.ByRepository))
		for _, g := range rep.ByRepository {
			q.Repositories = append(q.Repositories, RepoLink{Repository: g.Key, Page: qualityPage(g.Key), Rate: Percent(g.Rate.Rate), N: g.N})
		}
	}
	return q
}

// visibleQuality is the installation-wide report of a person signed in
// with GitHub: of the repositories they may see (canSeeName's rule, asked
// for the first maxQualityRepos repositories of the window by name
// order). hidden counts the repositories left out past that bound.
func (u *UI) visibleQuality(r *http.Request, since time.Time) (api.QualityResponse, int, error) {
	ctx := r.Context()
	data, err := u.d.Runs.Quality(ctx, "", since)
	if err != nil {
		return api.QualityResponse{}, 0, err
	}
	names := map[string]bool{}
	for _, f := range data.Findings {
		names[f.Repository] = true
	}
	for _, p := range data.PullRequests {
		names[p.Repository] = true
	}
	sorted := slices.Sorted(func(yield func(string) bool) {
		for n := range names {
			if !yield(n) {
				return
			}
		}
	})
	hidden := max(0, len(sorted)-maxQualityRepos)
	keep, err := u.visibleNames(ctx, r, sorted[:len(sorted)-hidden])
	if err != nil {
		return api.QualityResponse{}, 0, err
	}
	data.Findings = slices.DeleteFunc(data.Findings, func(f quality.Finding) bool { return !keep[f.Repository] })
	data.PullRequests = slices.DeleteFunc(data.PullRequests, func(p quality.PullRequest) bool { return !keep[p.Repository] })
	return api.QualityResponse{Truncated: data.Truncated, Report: quality.Compute(since, data.Findings, data.PullRequests)}, hidden, nil
}

// visibleNames returns which of the repositories named names the request's
// viewer may see: those whose runs were of exactly one repository id that
// GitHub lets them read. A repository GitHub could not be asked about is
// left out (and logged).
func (u *UI) visibleNames(ctx context.Context, r *http.Request, names []string) (map[string]bool, error) {
	all, err := u.d.Runs.RepositoryIDsOf(ctx, names)
	if err != nil {
		return nil, fmt.Errorf("read the repositories' ids: %w", err)
	}
	idOf := make(map[string]int64, len(all))
	var ids []int64
	for n, got := range all {
		if len(got) == 1 {
			idOf[n] = got[0]
			ids = append(ids, got[0])
		}
	}
	vctx, cancel := context.WithTimeout(ctx, githubTimeout)
	defer cancel()
	visible, err := u.vis.visibleRepos(vctx, viewerOf(r), ids)
	if err != nil {
		u.d.Logger.Warn().Err(err).Msg("web: ask GitHub what a signed-in person may read; those repositories are left out")
	}
	keep := make(map[string]bool, len(idOf))
	for n, id := range idOf {
		keep[n] = visible[id]
	}
	return keep, nil
}

// dollars writes a cost as the CLI's report does: "$0.0150".
func dollars(x float64) string { return fmt.Sprintf("$%.4f", x) }

// fixed2 writes a mean with two decimals: "2.50".
func fixed2(x float64) string { return fmt.Sprintf("%.2f", x) }
