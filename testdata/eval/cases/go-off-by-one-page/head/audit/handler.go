package audit

import (
	"encoding/json"
	"net/http"
	"strconv"
)

// Entry is one audit event.
type Entry struct {
	Actor  string `json:"actor"`
	Action string `json:"action"`
}

// Log holds the entries in order.
type Log struct{ Entries []Entry }

// ServeHTTP lists one page of entries: ?page=N (from 0) of ?limit=M.
func (l *Log) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	page, _ := strconv.Atoi(r.URL.Query().Get("page"))
	limit, err := strconv.Atoi(r.URL.Query().Get("limit"))
	if err != nil || limit <= 0 || limit > 500 {
		limit = 50
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(pageOf(l.Entries, page, limit))
}

// pageOf returns entries of page (from 0), limit per page.
func pageOf(entries []Entry, page, limit int) []Entry {
	start := page * limit
	if start >= len(entries) || page < 0 {
		return []Entry{}
	}
	end := start + limit
	if end > len(entries) {
		end = len(entries) - 1
	}
	return entries[start:end]
}
