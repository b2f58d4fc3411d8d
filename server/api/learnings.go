package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/server/store"
)

// MaxLearningBodyBytes caps a learning's POST or PATCH body.
const MaxLearningBodyBytes = 16 << 10

// LearningStore is what the learnings routes need of the database.
type LearningStore interface {
	Learnings(ctx context.Context, repo string, status review.LearningStatus) ([]review.Learning, error)
	Learning(ctx context.Context, repo string, id int64) (review.Learning, error)
	AddLearning(ctx context.Context, l review.Learning) (review.Learning, error)
	UpdateLearning(ctx context.Context, repo string, id int64, u store.LearningUpdate) (review.Learning, error)
	DeleteLearning(ctx context.Context, repo string, id int64) error
}

// InvalidLearningError is a learning a request would make invalid
// (review.Learning.Validate); the API answers it 400.
type InvalidLearningError struct{ Err error }

func (e *InvalidLearningError) Error() string { return "invalid learning: " + e.Err.Error() }
func (e *InvalidLearningError) Unwrap() error { return e.Err }

// NewLearning cleans and checks l (review.Learning.Clean and Validate;
// *InvalidLearningError) and stores it.
func NewLearning(ctx context.Context, st LearningStore, l review.Learning) (review.Learning, error) {
	l = l.Clean()
	if err := l.Validate(); err != nil {
		return review.Learning{}, &InvalidLearningError{Err: err}
	}
	return st.AddLearning(ctx, l)
}

// EditLearning applies u to learning id of repo, the instruction and path
// cleaned, once the learning it makes passes review.Learning.Validate
// (*InvalidLearningError otherwise); store.ErrNotFound when repo has no
// such learning.
func EditLearning(ctx context.Context, st LearningStore, repo string, id int64, u store.LearningUpdate) (review.Learning, error) {
	cur, err := st.Learning(ctx, repo, id)
	if err != nil {
		return review.Learning{}, err
	}
	if u.Instruction != nil {
		cur.Instruction = *u.Instruction
	}
	if u.Path != nil {
		cur.Path = *u.Path
	}
	if u.Status != nil {
		cur.Status = *u.Status
	}
	cur = cur.Clean()
	if err := cur.Validate(); err != nil {
		return review.Learning{}, &InvalidLearningError{Err: err}
	}
	if u.Instruction != nil {
		u.Instruction = &cur.Instruction
	}
	if u.Path != nil {
		u.Path = &cur.Path
	}
	return st.UpdateLearning(ctx, repo, id, u)
}

// ParseLearningStatus reads a status of a request: "" (any) or a known one.
func ParseLearningStatus(s string) (review.LearningStatus, error) {
	switch st := review.LearningStatus(s); st {
	case "", review.LearningProposed, review.LearningActive, review.LearningInactive:
		return st, nil
	}
	return "", fmt.Errorf("status %q is not proposed, active or inactive", s)
}

// ParseLearningID reads a learning id of a path: a positive integer in
// decimal digits.
func ParseLearningID(s string) (int64, error) {
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id <= 0 || strings.TrimLeft(s, "0123456789") != "" {
		return 0, fmt.Errorf("%q is not a learning id", s)
	}
	return id, nil
}

// learningsResponse is a repository's learnings, oldest first.
type learningsResponse struct {
	Repository string            `json:"repository"`
	Learnings  []review.Learning `json:"learnings"`
}

func (a *API) listLearnings(w http.ResponseWriter, r *http.Request) {
	repo, err := ParseRepoPath(r.PathValue("owner"), r.PathValue("name"))
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	status, err := ParseLearningStatus(r.URL.Query().Get("status"))
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	ls, err := a.d.Store.Learnings(r.Context(), repo, status)
	if err != nil {
		a.failLearning(w, err, repo, 0)
		return
	}
	writeJSON(w, http.StatusOK, learningsResponse{Repository: repo, Learnings: nonNilLearnings(ls)})
}

func nonNilLearnings(ls []review.Learning) []review.Learning {
	if ls == nil {
		return []review.Learning{}
	}
	return ls
}

// learningRequest is the body of POST and PATCH: the fields to set.
type learningRequest struct {
	Instruction *string                `json:"instruction"`
	Path        *string                `json:"path"`
	Status      *review.LearningStatus `json:"status"`
}

func (a *API) createLearning(w http.ResponseWriter, r *http.Request) {
	repo, err := ParseRepoPath(r.PathValue("owner"), r.PathValue("name"))
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	var req learningRequest
	if !decodeJSON(w, r, MaxLearningBodyBytes, &req) {
		return
	}
	l := review.Learning{Repository: repo, Status: review.LearningActive, Author: "api"}
	if req.Instruction != nil {
		l.Instruction = *req.Instruction
	}
	if req.Path != nil {
		l.Path = *req.Path
	}
	if req.Status != nil {
		if *req.Status != review.LearningActive && *req.Status != review.LearningProposed {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("status %q: a new learning is active or proposed", *req.Status))
			return
		}
		l.Status = *req.Status
	}
	l, err = NewLearning(r.Context(), a.d.Store, l)
	if err != nil {
		a.failLearning(w, err, repo, 0)
		return
	}
	w.Header().Set("Location", fmt.Sprintf("/api/repos/%s/learnings/%d", repo, l.ID))
	writeJSON(w, http.StatusCreated, l)
}

// learningPath reads the repository and id of a learning's path; it
// answers the client itself when it returns false.
func learningPath(w http.ResponseWriter, r *http.Request) (string, int64, bool) {
	repo, err := ParseRepoPath(r.PathValue("owner"), r.PathValue("name"))
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return "", 0, false
	}
	id, err := ParseLearningID(r.PathValue("id"))
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return "", 0, false
	}
	return repo, id, true
}

func (a *API) getLearning(w http.ResponseWriter, r *http.Request) {
	repo, id, ok := learningPath(w, r)
	if !ok {
		return
	}
	l, err := a.d.Store.Learning(r.Context(), repo, id)
	if err != nil {
		a.failLearning(w, err, repo, id)
		return
	}
	writeJSON(w, http.StatusOK, l)
}

func (a *API) patchLearning(w http.ResponseWriter, r *http.Request) {
	repo, id, ok := learningPath(w, r)
	if !ok {
		return
	}
	var req learningRequest
	if !decodeJSON(w, r, MaxLearningBodyBytes, &req) {
		return
	}
	if req.Instruction == nil && req.Path == nil && req.Status == nil {
		writeError(w, http.StatusBadRequest, "give instruction, path or status to change")
		return
	}
	l, err := EditLearning(r.Context(), a.d.Store, repo, id,
		store.LearningUpdate{Instruction: req.Instruction, Path: req.Path, Status: req.Status, By: "api"})
	if err != nil {
		a.failLearning(w, err, repo, id)
		return
	}
	writeJSON(w, http.StatusOK, l)
}

func (a *API) deleteLearning(w http.ResponseWriter, r *http.Request) {
	repo, id, ok := learningPath(w, r)
	if !ok {
		return
	}
	if err := a.d.Store.DeleteLearning(r.Context(), repo, id); err != nil {
		a.failLearning(w, err, repo, id)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// failLearning answers a failed learnings request: 400 for an invalid
// learning, 404 for an unknown one, 500 otherwise (logged).
func (a *API) failLearning(w http.ResponseWriter, err error, repo string, id int64) {
	var invalid *InvalidLearningError
	switch {
	case errors.As(err, &invalid):
		writeError(w, http.StatusBadRequest, invalid.Error())
	case errors.Is(err, store.ErrNotFound):
		writeError(w, http.StatusNotFound, fmt.Sprintf("%s has no learning %d", repo, id))
	default:
		a.d.Logger.Error().Err(err).Str("repository", repo).Int64("learning", id).Msg("learnings")
		writeError(w, http.StatusInternalServerError, "could not read or write the learnings")
	}
}

// decodeJSON decodes a JSON body of at most limit bytes into v, refusing
// one that is not sent as JSON (415), grows past limit (413), is not one
// JSON object with known fields, or has data after it (400). It answers
// the client itself when it returns false.
func decodeJSON(w http.ResponseWriter, r *http.Request, limit int64, v any) bool {
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		writeError(w, http.StatusUnsupportedMediaType, "the body must be JSON, sent with Content-Type: application/json")
		return false
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, limit))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil {
		if _, extra := dec.Token(); !errors.Is(extra, io.EOF) {
			err = errors.New("data after the JSON object")
		}
	}
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("body larger than %d bytes", tooBig.Limit))
		return false
	case err != nil:
		writeError(w, http.StatusBadRequest, "invalid JSON body: "+err.Error())
		return false
	}
	return true
}
