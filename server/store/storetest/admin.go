package storetest

import (
	"context"
	"fmt"
	"sync"

	"github.com/jackc/pgx/v5/pgxpool"
)

// admins pools the connections to each test server's maintenance database
// for the life of the test process, keyed by the server's URL. Each
// database a test took and gave back opened two sessions of its own
// before: 900 of the 2,300 backends PostgreSQL started for a short run
// (make test-short), each started and warmed at its cost.
var admins sync.Map // string -> *pgxpool.Pool

// adminConns bounds the pooled maintenance connections of one server.
const adminConns = 8

// adminPool returns the pool of the server at serverURL, made on first use
// (it connects only when asked for a connection). Session state must not
// outlive a use: advisory locks are taken on connections of their own
// (lockServer).
func adminPool(serverURL string) (*pgxpool.Pool, error) {
	if p, ok := admins.Load(serverURL); ok {
		return p.(*pgxpool.Pool), nil
	}
	cfg, err := pgxpool.ParseConfig(serverURL)
	if err != nil {
		return nil, fmt.Errorf("test server address: %w", err)
	}
	cfg.MaxConns, cfg.MinConns = adminConns, 0
	p, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		return nil, fmt.Errorf("connect to the test server: %w", err)
	}
	if prev, loaded := admins.LoadOrStore(serverURL, p); loaded {
		p.Close()
		return prev.(*pgxpool.Pool), nil
	}
	return p, nil
}

// admin returns a pooled connection to the test server's maintenance
// database; the caller releases it.
func admin(ctx context.Context, serverURL string) (*pgxpool.Conn, error) {
	p, err := adminPool(serverURL)
	if err != nil {
		return nil, err
	}
	c, err := p.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("connect to the test server: %w", err)
	}
	return c, nil
}
