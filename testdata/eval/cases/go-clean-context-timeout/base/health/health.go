package health

import (
	"context"
	"net/http"
)

// Checker checks one dependency.
type Checker interface {
	Check(ctx context.Context) error
}

// Handler answers 200 when every checker passes.
func Handler(checks map[string]Checker) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		for name, c := range checks {
			if err := c.Check(r.Context()); err != nil {
				http.Error(w, name+": unavailable", http.StatusServiceUnavailable)
				return
			}
		}
		w.Write([]byte("ok"))
	}
}
