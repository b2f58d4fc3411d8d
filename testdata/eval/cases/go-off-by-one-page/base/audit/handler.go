package audit

import (
	"encoding/json"
	"net/http"
)

// Entry is one audit event.
type Entry struct {
	Actor  string `json:"actor"`
	Action string `json:"action"`
}

// Log holds the entries in order.
type Log struct{ Entries []Entry }

// ServeHTTP lists every entry.
func (l *Log) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(l.Entries)
}
