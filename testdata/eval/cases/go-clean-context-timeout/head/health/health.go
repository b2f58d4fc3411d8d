package health

import (
	"context"
	"net/http"
	"time"
)

// Checker checks one dependency.
type Checker interface {
	Check(ctx context.Context) error
}

// checkTimeout bounds one dependency's check.
const checkTimeout = 2 * time.Second

// Handler answers 200 when every checker passes within checkTimeout.
func Handler(checks map[string]Checker) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		for name, c := range checks {
			if err := check(r.Context(), c); err != nil {
				http.Error(w, name+": unavailable", http.StatusServiceUnavailable)
				return
			}
		}
		w.Write([]byte("ok"))
	}
}

// check runs c with its own deadline.
func check(ctx context.Context, c Checker) error {
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	return c.Check(ctx)
}
