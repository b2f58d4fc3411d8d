package api

import (
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/server/store"
)

// MaxPullRuns caps the runs GET /api/pulls/{owner}/{name}/{number} lists.
const MaxPullRuns = 100

// pullResponse is a pull request's runs, newest first, and its finding ledger
// (docs/architecture.md).
type pullResponse struct {
	Repository string           `json:"repository"`
	Number     int              `json:"number"`
	Runs       []statusResponse `json:"runs"`
	Findings   []ledgerFinding  `json:"findings"`
	// Suppressed are the findings its reviews did not post, similar to
	// findings writers dismissed (docs/quality.md); absent when none.
	Suppressed []store.SuppressedFinding `json:"suppressed,omitempty"`
}

// ledgerFinding is a ledger entry with the states it went through, oldest
// first.
type ledgerFinding struct {
	review.LedgerEntry
	History []store.LedgerChange `json:"history"`
}

func (a *API) pull(w http.ResponseWriter, r *http.Request) {
	repo, number, err := ParsePullPath(r.PathValue("owner"), r.PathValue("name"), r.PathValue("number"))
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	ctx := r.Context()
	runs, err := a.d.Store.ListRuns(ctx, store.RunFilter{Repository: repo, PRNumber: number, Limit: MaxPullRuns})
	if err != nil {
		a.failPull(w, err, repo, number)
		return
	}
	entries, err := a.d.Store.Ledger(ctx, repo, number)
	if err != nil {
		a.failPull(w, err, repo, number)
		return
	}
	if len(runs) == 0 && len(entries) == 0 {
		writeError(w, http.StatusNotFound, fmt.Sprintf("MergeGuard has no runs and no findings for %s#%d", repo, number))
		return
	}
	changes, err := a.d.Store.LedgerHistory(ctx, repo, number)
	if err != nil {
		a.failPull(w, err, repo, number)
		return
	}
	suppressed, err := a.d.Store.Suppressed(ctx, repo, number)
	if err != nil {
		a.failPull(w, err, repo, number)
		return
	}
	out := pullResponse{Repository: repo, Number: number, Suppressed: suppressed,
		Runs: make([]statusResponse, len(runs)), Findings: make([]ledgerFinding, len(entries))}
	for i, run := range runs {
		out.Runs[i] = a.summary(run)
	}
	history := HistoryByFingerprint(changes)
	for i, e := range entries {
		h := history[e.Finding.Fingerprint]
		if h == nil {
			h = []store.LedgerChange{}
		}
		out.Findings[i] = ledgerFinding{LedgerEntry: e, History: h}
	}
	writeJSON(w, http.StatusOK, out)
}

// dismiss dismisses one finding of a pull request's ledger for the token's
// holder: an open finding, or an exposed secret, which only an explicit
// act dismisses. The store queues a refresh of the pull request's gate in
// the same transaction, so its check completes again at once. It answers
// the entry: 200 once dismissed, 409 when it is neither open nor exposed,
// 404 when the ledger has no such finding.
func (a *API) dismiss(w http.ResponseWriter, r *http.Request) {
	repo, number, fp, ok := findingPath(w, r)
	if !ok {
		return
	}
	ctx := r.Context()
	dismissed, err := a.d.Store.DismissFinding(ctx, repo, number, fp, "api", review.DismissedAPI)
	if err != nil {
		a.failPull(w, err, repo, number)
		return
	}
	entries, err := a.d.Store.Ledger(ctx, repo, number)
	if err != nil {
		a.failPull(w, err, repo, number)
		return
	}
	i := slices.IndexFunc(entries, func(e review.LedgerEntry) bool { return e.Finding.Fingerprint == fp })
	switch {
	case i < 0:
		writeError(w, http.StatusNotFound, fmt.Sprintf("%s#%d has no finding %s", repo, number, fp))
	case !dismissed:
		writeError(w, http.StatusConflict, fmt.Sprintf("finding %s of %s#%d is %s: only an open or exposed finding is dismissed", fp, repo, number, entries[i].State))
	default:
		writeJSON(w, http.StatusOK, entries[i])
	}
}

// findingPath reads the pull request and the finding's fingerprint of a
// route's path; it answers 400 itself when they are malformed.
func findingPath(w http.ResponseWriter, r *http.Request) (repo string, number int, fp string, ok bool) {
	repo, number, err := ParsePullPath(r.PathValue("owner"), r.PathValue("name"), r.PathValue("number"))
	fp = r.PathValue("fingerprint")
	if err == nil && (fp == "" || len(fp) > 64 || strings.TrimLeft(fp, "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-_") != "") {
		err = fmt.Errorf("%q is not a finding's fingerprint", fp)
	}
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return "", 0, "", false
	}
	return repo, number, fp, true
}

// revive revives a suppressed finding of a pull request for the token's
// holder (docs/quality.md): from the next review on, findings similar to
// it are posted again. It answers the suppressed finding: 200 once
// revived, 409 when it was revived already, 404 when the pull request has
// no such suppressed finding.
func (a *API) revive(w http.ResponseWriter, r *http.Request) {
	repo, number, fp, ok := findingPath(w, r)
	if !ok {
		return
	}
	ctx := r.Context()
	revived, err := a.d.Store.Revive(ctx, repo, number, fp, "api")
	if err != nil {
		a.failPull(w, err, repo, number)
		return
	}
	found, err := a.d.Store.Suppressed(ctx, repo, number)
	if err != nil {
		a.failPull(w, err, repo, number)
		return
	}
	i := slices.IndexFunc(found, func(s store.SuppressedFinding) bool { return s.Finding.Fingerprint == fp })
	switch {
	case i < 0:
		writeError(w, http.StatusNotFound, fmt.Sprintf("%s#%d has no suppressed finding %s", repo, number, fp))
	case !revived:
		writeError(w, http.StatusConflict, fmt.Sprintf("suppressed finding %s of %s#%d was revived already", fp, repo, number))
	default:
		writeJSON(w, http.StatusOK, found[i])
	}
}

func (a *API) failPull(w http.ResponseWriter, err error, repo string, number int) {
	a.d.Logger.Error().Err(err).Str("repository", repo).Int("pr_number", number).Msg("read or change a pull request's findings")
	writeError(w, http.StatusInternalServerError, "could not read the pull request's runs and findings")
}

// HistoryByFingerprint groups a pull request's ledger changes by entry,
// keeping their order.
func HistoryByFingerprint(changes []store.LedgerChange) map[string][]store.LedgerChange {
	m := make(map[string][]store.LedgerChange)
	for _, c := range changes {
		m[c.Fingerprint] = append(m[c.Fingerprint], c)
	}
	return m
}

// ParsePullPath checks the owner, name and number of a pull request named
// in a path (/api/pulls/{owner}/{name}/{number}, the UI's
// /repos/{owner}/{name}/pulls/{number}) and returns its repository,
// "owner/name" (ParseRepoPath), and number: a positive integer of at most
// 2^31-1, in decimal digits.
func ParsePullPath(owner, name, number string) (repo string, n int, err error) {
	repo, err = ParseRepoPath(owner, name)
	if err != nil {
		return "", 0, err
	}
	n, err = strconv.Atoi(number)
	if err != nil || n <= 0 || n > math.MaxInt32 || strings.TrimLeft(number, "0123456789") != "" {
		return "", 0, fmt.Errorf("%q is not a pull request number", number)
	}
	return repo, n, nil
}

// ParseRepoPath checks the owner and name of a repository named in a path
// (/api/repos/{owner}/{name}/…, the UI's /repos/{owner}/{name}/…) and
// returns "owner/name". Owner and name are what GitHub allows: 1 to 100
// letters, digits, '-', '_' and '.', not "." or "..".
func ParseRepoPath(owner, name string) (string, error) {
	for _, part := range []struct{ what, v string }{{"owner", owner}, {"repository name", name}} {
		if !repoPart(part.v) {
			return "", fmt.Errorf("%q is not a GitHub %s", part.v, part.what)
		}
	}
	return owner + "/" + name, nil
}

// repoPart reports whether s can be a GitHub owner or repository name.
func repoPart(s string) bool {
	if s == "" || len(s) > 100 || s == "." || s == ".." {
		return false
	}
	for _, c := range s {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.'
		if !ok {
			return false
		}
	}
	return true
}
