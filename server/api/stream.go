package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/server/store"
)

// streamBatch is how many stored events a stream reads at a time.
const streamBatch = 500

// stream serves GET /api/review/{id}/stream: the run's stored events first
// (after Last-Event-ID when the client resumes), then live ones as they are
// stored, until pipeline.completed or pipeline.failed — or, for a run that
// ends without a pipeline (skipped, superseded), until the run is final.
func (a *API) stream(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	id := r.PathValue("id")
	run, err := a.d.Store.GetRun(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		writeError(w, http.StatusNotFound, "no review with that id")
		return
	}
	if err != nil {
		a.d.Logger.Error().Err(err).Msg("stream: get review")
		writeError(w, http.StatusInternalServerError, "could not read the review")
		return
	}
	after := 0
	if v := r.Header.Get("Last-Event-ID"); v != "" {
		if after, err = strconv.Atoi(v); err != nil || after < 0 {
			writeError(w, http.StatusBadRequest, "Last-Event-ID must be an event sequence number")
			return
		}
	}
	rc := http.NewResponseController(w)
	// A stream may outlive the server's write timeout.
	_ = rc.SetWriteDeadline(time.Time{}) // unsupported writers just keep theirs

	// Subscribe before the first read so no event falls between the two.
	wake, unsubscribe := a.d.Hub.Subscribe(run.ID)
	defer unsubscribe()

	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	if _, err := fmt.Fprint(w, "retry: 2000\n\n"); err != nil {
		return
	}
	if err := rc.Flush(); err != nil {
		return
	}

	heartbeat := time.NewTicker(a.d.Heartbeat)
	defer heartbeat.Stop()
	poll := time.NewTicker(a.d.Poll)
	defer poll.Stop()
	for {
		done, last, err := a.flushEvents(w, r, run.ID, after)
		if err != nil {
			return // the client went away or the database failed; the client resumes
		}
		after = last
		if done {
			return
		}
		if err := rc.Flush(); err != nil {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-wake:
		case <-poll.C:
			// A run that ended without pipeline events (skipped before the
			// pipeline, superseded while queued) has nothing more to say.
			cur, err := a.d.Store.GetRun(ctx, run.ID)
			if err == nil && cur.Status.Final() && cur.EventSeq <= after {
				return
			}
		case <-heartbeat.C:
			if _, err := fmt.Fprint(w, ": heartbeat\n\n"); err != nil {
				return
			}
		}
	}
}

// flushEvents writes every stored event after seq and reports whether the
// stream is over and the last sequence number written.
func (a *API) flushEvents(w http.ResponseWriter, r *http.Request, runID string, after int) (done bool, last int, err error) {
	last = after
	for {
		evs, err := a.d.Store.Events(r.Context(), runID, last, streamBatch)
		if err != nil {
			return false, last, err
		}
		for _, e := range evs {
			data, err := json.Marshal(e)
			if err != nil {
				return false, last, fmt.Errorf("encode event %d: %w", e.Seq, err)
			}
			if _, err := fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", e.Seq, e.Type, data); err != nil {
				return false, last, err
			}
			last = e.Seq
			if e.Type == review.EventPipelineCompleted || e.Type == review.EventPipelineFailed {
				done = true
			}
		}
		if done || len(evs) < streamBatch {
			return done, last, nil
		}
	}
}
