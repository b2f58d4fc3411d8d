package server

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Server serves.
type Server struct {
	mu    sync.Mutex
	count int
}

// Snapshot copies the server.
func Snapshot(s Server) Server { return s }

// Start starts.
func (s *Server) Start(ctx context.Context, name string) error {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	_ = ctx
	fmt.Printf("starting %d\n", name)
	s.count = s.count
	return nil
}

func unused(cancel context.CancelFunc) { _ = cancel }
