package api

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/mergeguard/mergeguard/review/quality"
	"github.com/mergeguard/mergeguard/server/store"
)

// DefaultQualityWindow is the window of a quality report without since.
const DefaultQualityWindow = 90 * 24 * time.Hour

// MaxQualityWindow bounds how far back a quality report reaches.
const MaxQualityWindow = 3660 * 24 * time.Hour

// QualityResponse is the answer of GET /api/repos/{owner}/{name}/quality
// and GET /api/quality (docs/api.md): the report of review/quality, its
// repository ("" installation-wide) and whether the window held more
// findings than a report reads (store.MaxQualityFindings).
type QualityResponse struct {
	Repository string `json:"repository,omitempty"`
	Truncated  bool   `json:"truncated"`
	quality.Report
}

// QualityStore is what a quality report needs of the database.
type QualityStore interface {
	Quality(ctx context.Context, repo string, since time.Time) (store.QualityData, error)
}

// ParseSince reads the start of a quality report's window: "" is
// DefaultQualityWindow before now, else a date (2026-09-01, UTC) or an RFC
// 3339 time, neither in the future nor more than MaxQualityWindow back.
func ParseSince(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return now.Add(-DefaultQualityWindow), nil
	}
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		t, err = time.Parse(time.RFC3339, s)
	}
	switch {
	case err != nil:
		return time.Time{}, fmt.Errorf("since %q is not a date (2006-01-02) or an RFC 3339 time", s)
	case t.After(now):
		return time.Time{}, fmt.Errorf("since %s is in the future", s)
	case t.Before(now.Add(-MaxQualityWindow)):
		return time.Time{}, fmt.Errorf("since %s is more than %d days back", s, int(MaxQualityWindow.Hours()/24))
	}
	return t, nil
}

// Quality reads and computes the quality report of repo ("" for every
// repository) since since.
func Quality(ctx context.Context, st QualityStore, repo string, since time.Time) (QualityResponse, error) {
	data, err := st.Quality(ctx, repo, since)
	if err != nil {
		return QualityResponse{}, err
	}
	return QualityResponse{Repository: repo, Truncated: data.Truncated,
		Report: quality.Compute(since, data.Findings, data.PullRequests)}, nil
}

func (a *API) repoQuality(w http.ResponseWriter, r *http.Request) {
	repo, err := ParseRepoPath(r.PathValue("owner"), r.PathValue("name"))
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	a.quality(w, r, repo)
}

func (a *API) allQuality(w http.ResponseWriter, r *http.Request) { a.quality(w, r, "") }

func (a *API) quality(w http.ResponseWriter, r *http.Request, repo string) {
	since, err := ParseSince(r.URL.Query().Get("since"), time.Now())
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	out, err := Quality(r.Context(), a.d.Store, repo, since)
	if err != nil {
		a.d.Logger.Error().Err(err).Str("repository", repo).Msg("read the quality report")
		writeError(w, http.StatusInternalServerError, "could not read the quality report")
		return
	}
	writeJSON(w, http.StatusOK, out)
}
