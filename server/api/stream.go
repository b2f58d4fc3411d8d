package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/server/store"
)

// stream serves GET /api/review/{id}/stream: the run's stored events first
// (after Last-Event-ID when the client resumes), then live ones as they are
// stored. It ends after pipeline.completed or pipeline.failed once the run
// is final — a failed attempt that the worker retries goes on streaming the
// next attempt's events — and, for a run that ends without a pipeline
// (skipped, superseded while queued), when the run is final.
func (a *API) stream(w http.ResponseWriter, r *http.Request) {
	run, after, ok := a.streamStart(w, r)
	if !ok {
		return
	}
	release, status := a.streams.acquire(clientAddr(r))
	if status != 0 {
		w.Header().Set("Retry-After", "5")
		writeError(w, status, "too many open event streams; close some or retry later")
		return
	}
	defer release()
	rc := http.NewResponseController(w)
	// A stream outlives the server's write timeout; each write gets its own
	// deadline instead (see writeDeadline).
	_ = rc.SetWriteDeadline(time.Time{}) // unsupported writers just keep theirs

	// Subscribe before the first read so no event falls between the two.
	wake, unsubscribe := a.d.Hub.Subscribe(run.ID)
	defer unsubscribe()

	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	h.Set("X-Accel-Buffering", "no")
	a.writeDeadline(rc)
	w.WriteHeader(http.StatusOK)
	if _, err := fmt.Fprint(w, "retry: 2000\n\n"); err != nil {
		return
	}
	if err := rc.Flush(); err != nil {
		return
	}
	a.follow(w, rc, r, run, after, wake)
}

// follow writes the run's events after seq after, then each new one as wake
// or the poll announces it, until the run ends or the client goes away.
func (a *API) follow(w http.ResponseWriter, rc *http.ResponseController, r *http.Request, run store.Run, after int, wake <-chan struct{}) {
	ctx := r.Context()
	heartbeat := time.NewTicker(a.d.Config.StreamHeartbeat)
	defer heartbeat.Stop()
	poll := time.NewTicker(a.d.Config.StreamPoll)
	defer poll.Stop()
	ended := false // the last event written ends a pipeline attempt
	for {
		terminal, last, err := a.flushEvents(w, rc, r, run.ID, after)
		if err != nil {
			return // the client went away or the database failed; the client resumes
		}
		if last > after {
			ended = terminal
		}
		after = last
		if err := rc.Flush(); err != nil {
			return
		}
		// A run final before the stream began has stored all its events,
		// pipeline.completed or not (a worker error outside the pipeline).
		if run.Status.Final() || (ended && a.final(ctx, run.ID, after)) {
			return
		}
		if ended {
			// The run is recorded moments after its pipeline ends (the
			// review is posted in between): look again soon.
			poll.Reset(finalPoll)
		}
		select {
		case <-ctx.Done():
			return
		case <-wake:
		case <-poll.C:
			// Once the pipeline ended, the loop's top checks the run.
			if !ended && a.final(ctx, run.ID, after) {
				return
			}
		case <-heartbeat.C:
			a.writeDeadline(rc)
			if _, err := fmt.Fprint(w, ": heartbeat\n\n"); err != nil {
				return
			}
		}
	}
}

// streamStart reads the run to stream and the Last-Event-ID to resume
// after. It answers the client itself when it returns false.
func (a *API) streamStart(w http.ResponseWriter, r *http.Request) (store.Run, int, bool) {
	run, err := a.d.Store.GetRun(r.Context(), r.PathValue("id"))
	if errors.Is(err, store.ErrNotFound) {
		writeError(w, http.StatusNotFound, "no review with that id")
		return run, 0, false
	}
	if err != nil {
		a.d.Logger.Error().Err(err).Msg("stream: get review")
		writeError(w, http.StatusInternalServerError, "could not read the review")
		return run, 0, false
	}
	after := 0
	if v := r.Header.Get("Last-Event-ID"); v != "" {
		if after, err = strconv.Atoi(v); err != nil || after < 0 {
			writeError(w, http.StatusBadRequest, "Last-Event-ID must be an event sequence number")
			return run, 0, false
		}
	}
	return run, after, true
}

// finalPoll is how often a stream whose pipeline ended checks that its run
// is recorded.
const finalPoll = 250 * time.Millisecond

// final reports whether the run has ended and every event of it up to seq
// has been written.
func (a *API) final(ctx context.Context, runID string, seq int) bool {
	cur, err := a.d.Store.GetRun(ctx, runID)
	return err == nil && cur.Status.Final() && cur.EventSeq <= seq
}

// writeDeadline gives the writes that follow StreamWriteTimeout to reach
// the client: one that does not read is dropped when it passes.
func (a *API) writeDeadline(rc *http.ResponseController) {
	_ = rc.SetWriteDeadline(time.Now().Add(a.d.Config.StreamWriteTimeout)) // unsupported writers keep the server's
}

// flushEvents writes every stored event after seq, StreamBatch at a time,
// each batch within StreamWriteTimeout, and reports whether the last one
// written ends a pipeline attempt, and its sequence number.
func (a *API) flushEvents(w http.ResponseWriter, rc *http.ResponseController, r *http.Request, runID string, after int) (terminal bool, last int, err error) {
	last = after
	for {
		evs, err := a.d.Store.Events(r.Context(), runID, last, a.d.Config.StreamBatch)
		if err != nil {
			return false, last, err
		}
		a.writeDeadline(rc)
		for _, e := range evs {
			e.Data = a.redact.eventData(e.Data)
			data, err := json.Marshal(e)
			if err != nil {
				return false, last, fmt.Errorf("encode event %d: %w", e.Seq, err)
			}
			if _, err := fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", e.Seq, e.Type, data); err != nil {
				return false, last, err
			}
			last = e.Seq
			terminal = e.Type == review.EventPipelineCompleted || e.Type == review.EventPipelineFailed
		}
		if err := rc.Flush(); err != nil {
			return false, last, err
		}
		if len(evs) < a.d.Config.StreamBatch {
			return terminal, last, nil
		}
	}
}

// streamLimit counts the open streams, in total and per client address.
type streamLimit struct {
	max, perClient int
	mu             sync.Mutex
	total          int
	byClient       map[string]int
}

func newStreamLimit(maxStreams, perClient int) *streamLimit {
	return &streamLimit{max: maxStreams, perClient: perClient, byClient: make(map[string]int)}
}

// acquire takes a stream slot for client, returning its release, or the
// status to answer: 429 when the client has its share open, 503 when the
// replica has.
func (l *streamLimit) acquire(client string) (release func(), status int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.byClient[client] >= l.perClient:
		return nil, http.StatusTooManyRequests
	case l.total >= l.max:
		return nil, http.StatusServiceUnavailable
	}
	l.total++
	l.byClient[client]++
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.total--
		if l.byClient[client]--; l.byClient[client] <= 0 {
			delete(l.byClient, client)
		}
	}, 0
}

// open counts the open streams.
func (l *streamLimit) open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.total
}

// clientAddr is the IP address r comes from (the connection's: forwarding
// headers are not trusted).
func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
