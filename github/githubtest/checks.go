package githubtest

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

const (
	docCreateCheck = "https://docs.github.com/rest/checks/runs#create-a-check-run"
	docUpdateCheck = "https://docs.github.com/rest/checks/runs#update-a-check-run"
	docGetCheck    = "https://docs.github.com/rest/checks/runs#get-a-check-run"
	docListChecks  = "https://docs.github.com/rest/checks/runs#list-check-runs-for-a-git-reference"
)

// MaxAnnotations is how many annotations GitHub takes in one request to
// create or update a check run.
const MaxAnnotations = 50

// CheckRun is a check run as the fake holds it.
type CheckRun struct {
	ID                     int64
	Name, HeadSHA          string
	Status, Conclusion     string
	DetailsURL, ExternalID string
	StartedAt, CompletedAt time.Time
	Title, Summary, Text   string
	Annotations            []CheckAnnotation
	// Requests counts the create and update requests that changed it.
	Requests int
}

// CheckAnnotation is one annotation of a check run.
type CheckAnnotation struct {
	Path            string `json:"path"`
	StartLine       int    `json:"start_line"`
	EndLine         int    `json:"end_line"`
	StartColumn     *int   `json:"start_column"`
	EndColumn       *int   `json:"end_column"`
	AnnotationLevel string `json:"annotation_level"`
	Message         string `json:"message"`
	Title           string `json:"title"`
	RawDetails      string `json:"raw_details"`
}

// checkRequest is the body of checks/create and checks/update.
type checkRequest struct {
	Name        *string `json:"name"`
	HeadSHA     string  `json:"head_sha"`
	DetailsURL  *string `json:"details_url"`
	ExternalID  *string `json:"external_id"`
	Status      *string `json:"status"`
	Conclusion  *string `json:"conclusion"`
	StartedAt   *string `json:"started_at"`
	CompletedAt *string `json:"completed_at"`
	Output      *struct {
		Title       *string           `json:"title"`
		Summary     *string           `json:"summary"`
		Text        *string           `json:"text"`
		Annotations []CheckAnnotation `json:"annotations"`
	} `json:"output"`
}

var (
	checkStatuses    = []string{"queued", "in_progress", "completed"}
	checkConclusions = []string{"action_required", "cancelled", "failure", "neutral", "success", "skipped", "timed_out"}
	annotationLevels = []string{"notice", "warning", "failure"}
)

// validateCheck returns GitHub's message for the first problem of a
// create (head is the commit's files) or update request, or "". As the
// OpenAPI description says: a conclusion sets the status to completed; a
// completed status or a completed_at needs a conclusion; "stale" is
// GitHub's alone; an output needs a title and a summary; at most 50
// annotations a request, each with its required fields, start_line <=
// end_line, columns only on one line, and its lines inside the file at
// the head.
func validateCheck(req checkRequest, files map[string]string, create bool) string {
	switch {
	case create && (req.Name == nil || *req.Name == ""):
		return "Invalid request.\n\n\"name\" wasn't supplied."
	case req.Status != nil && !slices.Contains(checkStatuses, *req.Status):
		return fmt.Sprintf("Invalid request.\n\n%q is not a member of [\"queued\", \"in_progress\", \"completed\"].", *req.Status)
	case req.Conclusion != nil && !slices.Contains(checkConclusions, *req.Conclusion):
		return fmt.Sprintf("Invalid request.\n\n%q is not a valid conclusion.", *req.Conclusion)
	case req.Conclusion == nil && req.Status != nil && *req.Status == "completed":
		return "Invalid request.\n\n\"conclusion\" wasn't supplied."
	case req.Conclusion == nil && req.CompletedAt != nil:
		return "Invalid request.\n\n\"conclusion\" wasn't supplied."
	}
	for _, ts := range []*string{req.StartedAt, req.CompletedAt} {
		if ts != nil {
			if _, err := time.Parse(time.RFC3339, *ts); err != nil {
				return fmt.Sprintf("Invalid request.\n\n%q is not a valid date-time.", *ts)
			}
		}
	}
	if req.Output == nil {
		return ""
	}
	o := req.Output
	switch {
	case o.Title == nil:
		return "Invalid request.\n\n\"title\" wasn't supplied."
	case o.Summary == nil:
		return "Invalid request.\n\n\"summary\" wasn't supplied."
	case len([]rune(*o.Summary)) > 65535 || (o.Text != nil && len([]rune(*o.Text)) > 65535):
		return "Invalid request.\n\nOnly 65535 characters are allowed; 65536 were supplied."
	case len(o.Annotations) > MaxAnnotations:
		return fmt.Sprintf("Invalid request.\n\nOnly %d annotations are allowed per request; %d were supplied.", MaxAnnotations, len(o.Annotations))
	}
	for _, a := range o.Annotations {
		if msg := validateAnnotation(a, files); msg != "" {
			return msg
		}
	}
	return ""
}

func validateAnnotation(a CheckAnnotation, files map[string]string) string {
	switch {
	case a.Path == "" || a.StartLine == 0 || a.EndLine == 0 || a.Message == "" || a.AnnotationLevel == "":
		return "Invalid request.\n\nAn annotation needs \"path\", \"start_line\", \"end_line\", \"annotation_level\" and \"message\"."
	case !slices.Contains(annotationLevels, a.AnnotationLevel):
		return fmt.Sprintf("Invalid request.\n\n%q is not a member of [\"notice\", \"warning\", \"failure\"].", a.AnnotationLevel)
	case a.StartLine < 1 || a.StartLine > a.EndLine:
		return "Invalid request.\n\nstart_line must be at least 1 and at most end_line."
	case (a.StartColumn != nil || a.EndColumn != nil) && a.StartLine != a.EndLine:
		return "Invalid request.\n\nstart_column and end_column are only allowed on annotations of one line."
	case len([]rune(a.Title)) > 255:
		return "Invalid request.\n\nAn annotation's title is at most 255 characters."
	}
	content, ok := files[a.Path]
	if !ok {
		return fmt.Sprintf("Invalid request.\n\nThe annotation's path %q is not a file of the commit.", a.Path)
	}
	if n := lineCount(content); a.EndLine > n {
		return fmt.Sprintf("Invalid request.\n\nThe annotation's lines %d-%d are not inside %s (%d lines).", a.StartLine, a.EndLine, a.Path, n)
	}
	return ""
}

// lineCount is how many lines a file has, a last line without newline
// included.
func lineCount(content string) int {
	n := strings.Count(content, "\n")
	if content != "" && !strings.HasSuffix(content, "\n") {
		n++
	}
	return n
}

// createCheck answers checks/create: 201 with the run, 422 as
// validateCheck says, 422 for a head sha the repository does not have.
func (s *Server) createCheck(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp, ok := s.requestRepo(w, r, docCreateCheck)
	if !ok {
		return
	}
	var req checkRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]any{"message": "Problems parsing JSON", "documentation_url": docCreateCheck, "status": "400"})
		return
	}
	if req.HeadSHA == "" {
		writeCheckError(w, docCreateCheck, "Invalid request.\n\n\"head_sha\" wasn't supplied.")
		return
	}
	files := rp.files(req.HeadSHA)
	if files == nil {
		writeCheckError(w, docCreateCheck, "No commit found for SHA: "+req.HeadSHA)
		return
	}
	if msg := validateCheck(req, files, true); msg != "" {
		writeCheckError(w, docCreateCheck, msg)
		return
	}
	run := &CheckRun{ID: s.id(), HeadSHA: req.HeadSHA, Status: "queued"}
	run.apply(req, time.Now())
	rp.checkRuns = append(rp.checkRuns, run)
	writeJSON(w, http.StatusCreated, s.checkRunJSON(rp, run))
}

// updateCheck answers checks/update: the run with what the request sets,
// annotations added to those it has.
func (s *Server) updateCheck(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp, run, ok := s.requestCheck(w, r, docUpdateCheck)
	if !ok {
		return
	}
	var req checkRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]any{"message": "Problems parsing JSON", "documentation_url": docUpdateCheck, "status": "400"})
		return
	}
	if msg := validateCheck(req, rp.files(run.HeadSHA), false); msg != "" {
		writeCheckError(w, docUpdateCheck, msg)
		return
	}
	run.apply(req, time.Now())
	writeJSON(w, http.StatusOK, s.checkRunJSON(rp, run))
}

func (s *Server) getCheck(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp, run, ok := s.requestCheck(w, r, docGetCheck)
	if ok {
		writeJSON(w, http.StatusOK, s.checkRunJSON(rp, run))
	}
}

// listChecks answers checks/list-for-ref: the runs on the commit a ref
// names, newest first, filtered by check_name and status, paginated.
func (s *Server) listChecks(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp, ok := s.requestRepo(w, r, docListChecks)
	if !ok {
		return
	}
	ref := strings.TrimPrefix(r.PathValue("ref"), "heads/")
	sha, ok := rp.resolve(ref)
	if !ok {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"message": "No commit found for SHA: " + ref, "documentation_url": docListChecks, "status": "422"})
		return
	}
	q := r.URL.Query()
	var runs []map[string]any
	for _, run := range slices.Backward(rp.checkRuns) {
		if run.HeadSHA == sha && (!q.Has("check_name") || q.Get("check_name") == run.Name) && (!q.Has("status") || q.Get("status") == run.Status) {
			runs = append(runs, s.checkRunJSON(rp, run))
		}
	}
	start, end := pageBounds(w, r, len(runs))
	page := runs[start:end]
	if page == nil {
		page = []map[string]any{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"total_count": len(runs), "check_runs": page})
}

// requestCheck finds the check run of a request, answering 404 if none.
func (s *Server) requestCheck(w http.ResponseWriter, r *http.Request, doc string) (*repo, *CheckRun, bool) {
	rp, ok := s.requestRepo(w, r, doc)
	if !ok {
		return nil, nil, false
	}
	id, _ := strconv.ParseInt(r.PathValue("check_run_id"), 10, 64)
	for _, run := range rp.checkRuns {
		if run.ID == id {
			return rp, run, true
		}
	}
	writeNotFound(w, doc)
	return nil, nil, false
}

// apply changes a run as a valid create or update request asks.
func (run *CheckRun) apply(req checkRequest, now time.Time) {
	run.Requests++
	set := func(dst *string, src *string) {
		if src != nil {
			*dst = *src
		}
	}
	set(&run.Name, req.Name)
	set(&run.DetailsURL, req.DetailsURL)
	set(&run.ExternalID, req.ExternalID)
	set(&run.Status, req.Status)
	if req.StartedAt != nil {
		run.StartedAt, _ = time.Parse(time.RFC3339, *req.StartedAt)
	} else if run.StartedAt.IsZero() {
		run.StartedAt = now.UTC().Truncate(time.Second)
	}
	if req.Conclusion != nil {
		run.Conclusion, run.Status = *req.Conclusion, "completed"
		run.CompletedAt = now.UTC().Truncate(time.Second)
		if req.CompletedAt != nil {
			run.CompletedAt, _ = time.Parse(time.RFC3339, *req.CompletedAt)
		}
	}
	if o := req.Output; o != nil {
		set(&run.Title, o.Title)
		set(&run.Summary, o.Summary)
		set(&run.Text, o.Text)
		run.Annotations = append(run.Annotations, o.Annotations...)
	}
}

func writeCheckError(w http.ResponseWriter, doc, msg string) {
	writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"message": msg, "documentation_url": doc, "status": "422"})
}

// checkRunJSON renders a run from the example check-run.
func (s *Server) checkRunJSON(rp *repo, run *CheckRun) map[string]any {
	m := s.example("check-run.json")
	m["id"], m["name"], m["head_sha"], m["status"] = run.ID, run.Name, run.HeadSHA, run.Status
	m["conclusion"], m["details_url"], m["external_id"] = nilIfEmpty(run.Conclusion), nilIfEmpty(run.DetailsURL), run.ExternalID
	m["started_at"], m["completed_at"] = timeOrNil(run.StartedAt), timeOrNil(run.CompletedAt)
	m["url"] = fmt.Sprintf("%srepos/%s/%s/check-runs/%d", s.URL(), rp.owner, rp.name, run.ID)
	m["html_url"] = fmt.Sprintf("https://github.com/%s/%s/runs/%d", rp.owner, rp.name, run.ID)
	m["output"] = map[string]any{
		"title": nilIfEmpty(run.Title), "summary": nilIfEmpty(run.Summary), "text": nilIfEmpty(run.Text),
		"annotations_count": len(run.Annotations),
		"annotations_url":   fmt.Sprintf("%srepos/%s/%s/check-runs/%d/annotations", s.URL(), rp.owner, rp.name, run.ID),
	}
	if app, ok := m["app"].(map[string]any); ok {
		app["slug"] = strings.TrimSuffix(s.bot.Login, "[bot]")
	}
	prs := []any{}
	for _, n := range slices.Sorted(maps.Keys(rp.pulls)) {
		if p := rp.pulls[n]; p.pr.HeadSHA == run.HeadSHA && p.pr.State == "open" {
			prs = append(prs, map[string]any{
				"number": n, "id": p.id, "url": fmt.Sprintf("%srepos/%s/%s/pulls/%d", s.URL(), rp.owner, rp.name, n),
				"head": map[string]any{"ref": p.pr.HeadRef, "sha": p.pr.HeadSHA}, "base": map[string]any{"ref": p.pr.BaseRef, "sha": p.pr.BaseSHA},
			})
		}
	}
	m["pull_requests"] = prs
	return m
}

func timeOrNil(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC().Format(time.RFC3339)
}

// CheckRuns returns the check runs of a repository, oldest first.
func (s *Server) CheckRuns(owner, repoName string) []CheckRun {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp := s.lookup(owner, repoName)
	if rp == nil {
		return nil
	}
	out := make([]CheckRun, 0, len(rp.checkRuns))
	for _, run := range rp.checkRuns {
		c := *run
		c.Annotations = slices.Clone(run.Annotations)
		out = append(out, c)
	}
	return out
}
