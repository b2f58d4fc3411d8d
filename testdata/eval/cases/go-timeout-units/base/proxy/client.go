package proxy

import (
	"net/http"
	"time"

	"example.com/gw/config"
)

// NewClient returns the client that calls the upstream service.
func NewClient() *http.Client {
	return &http.Client{
		Timeout: time.Duration(config.UpstreamTimeout()) * time.Second,
	}
}
