package store

import (
	"context"
	"errors"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// Transient reports whether err is the database being out of reach rather
// than a statement that failed: a connection refused, lost or cut
// mid-answer, or a server shutting down, restarting or starting up
// (SQLSTATE class 08 and 57P01-57P03). When Postgres restarts, every pooled
// connection dies and each fails the first call that takes it; such a call
// may succeed when made again, on a new connection. Errors that did not
// come from the database are not transient here.
func Transient(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "57P01", "57P02", "57P03": // admin_shutdown, crash_shutdown, cannot_connect_now
			return true
		}
		return strings.HasPrefix(pgErr.Code, "08") // connection_exception
	}
	var connectErr *pgconn.ConnectError
	if errors.As(err, &connectErr) {
		return true
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false // the caller gave up, not the database
	}
	// pgconn's own errors about a connection (lost, closed, cut while
	// reading the answer) all say whether a retry is safe.
	var connErr interface{ SafeToRetry() bool }
	return errors.As(err, &connErr)
}
